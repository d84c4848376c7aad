"""Helpers that drive a real JupyterLab page through Playwright's sync API.

The fixtures in `conftest.py` start the server (`LabServer`) and the page; these functions
do what a user does in it: open a notebook, run cells, read outputs, take screenshots.

JupyterLab runs with `expose_app_in_browser`, so `window.jupyterapp` is the application
object: cells are run through its commands and states are read from its models instead of
from CSS details that change between Lab releases. What a user clicks (widget buttons,
debugger controls) should still be clicked through the page.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts"

# The notebook panel that is on screen (Lumino hides the others with lm-mod-hidden).
CURRENT_NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"

DEFAULT_TIMEOUT_S = 120.0


@dataclass
class LabServer:
    """A running `jupyter lab`: base URL (ends with /), token and its root directory."""

    url: str
    token: str
    root_dir: Path
    log_path: Path
    app: str = "lab"  # or "notebook" (Notebook 7)

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
        """Call the server's REST API (`path` like "api/kernels"); returns parsed JSON."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path.lstrip("/"),
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def lab_url(self, notebook: str, workspace: str | None = None) -> str:
        """URL that opens `notebook` (relative to root_dir) in a fresh Lab workspace,
        or in Notebook 7's notebook page."""
        path = urllib.parse.quote(notebook)
        if self.app == "notebook":
            return f"{self.url}notebooks/{path}?token={self.token}"
        ws = workspace or f"t{uuid.uuid4().hex[:12]}"
        return f"{self.url}lab/workspaces/{ws}/tree/{path}?token={self.token}"

    def shutdown_kernels(self) -> None:
        """Shut down every session and kernel so tests do not pile up kernels."""
        for session in self.api("GET", "api/sessions") or []:
            try:
                self.api("DELETE", f"api/sessions/{session['id']}")
            except Exception:
                pass
        for kernel in self.api("GET", "api/kernels") or []:
            try:
                self.api("DELETE", f"api/kernels/{kernel['id']}")
            except Exception:
                pass


# The first cell of most flows: the extension loaded, jax and jaxdbg imported.
EXTENSION_SETUP_CELL = """\
%load_ext jaxdbg
import jax, jax.numpy as jnp
import jaxdbg
"""

# A jitted function that stops once, with a local whose name is easy to find.
JITTED_STOP_CELL = """\
def inner(x):
    alpha_value = x * 2
    jaxdbg.breakpoint()
    return alpha_value.sum()

print("result", jax.jit(inner)(jnp.arange(3.0)))
"""

# The kernelspec of the matrix's installed-wheel Python, which the lab server offers
# when $JAXDBG_WHEEL_PYTHON is set (see conftest.py).
INSTALLED_WHEEL_KERNEL = "jaxdbg-installed-wheel"


def write_notebook(server: LabServer, name: str, cells: list[str], kernel: str = "python3") -> Path:
    """Write a notebook of code cells into the server root, bound to the `kernel` kernelspec."""
    import nbformat  # slow to import (its JSON-schema stack); only browser tests need it

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    # Naming the kernel up front keeps Lab from asking which kernel to use.
    nb.metadata["kernelspec"] = {
        "name": kernel,
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    path = server.root_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def dismiss_dialogs(page) -> int:
    """Close any modal dialog Lab put up; a kernel chooser is answered with its default."""
    closed = 0
    dialogs = page.locator(".jp-Dialog")
    for _ in range(5):
        if dialogs.count() == 0:
            break
        dialog = dialogs.first
        try:
            text = dialog.inner_text(timeout=2000)
            accept = dialog.locator(".jp-Dialog-button.jp-mod-accept")
            if "kernel" in text.lower() and accept.count():
                accept.first.click(timeout=5000)
            else:
                page.keyboard.press("Escape")
            closed += 1
            page.wait_for_timeout(200)
        except Exception:
            page.keyboard.press("Escape")
    return closed


_NOTEBOOK_STATE_JS = """
(name) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return {stage: 'app'};
  const w = app.shell.currentWidget;
  if (!w || !w.context || !w.content || !w.sessionContext) return {stage: 'widget'};
  if (w.context.path !== name) return {stage: 'path', path: w.context.path};
  if (!w.context.isReady) return {stage: 'context'};
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!kernel) return {stage: 'kernel'};
  return {stage: kernel.status === 'idle' ? 'ready' : 'kernel-' + kernel.status,
          kernel: kernel.name, cells: w.content.widgets.length};
}
"""


def _poll(page, check, timeout_s: float, what: str, interval_s: float = 0.25):
    deadline = time.monotonic() + timeout_s
    last = None
    while True:
        dismiss_dialogs(page)
        last = check()
        if last is True or (isinstance(last, dict) and last.get("stage") == "ready"):
            return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s:.0f}s waiting for {what}; last state: {last}")
        page.wait_for_timeout(int(interval_s * 1000))


# Loading JupyterLab costs a page about 5 s of CPU, and the browser tests open over fifty
# notebooks: a page that shows this server's Lab already opens the next one in place, as
# a user does from the file browser. What was open is closed first, unsaved, as a page
# left behind is; so is the launcher Lab puts in an empty main area. `closeAll(keep)`
# closes the main area's widgets but `keep`.
_CLOSE_ALL = """const app = window.jupyterapp;
  const closeAll = (keep) => {
    for (const w of Array.from(app.shell.widgets('main'))) {
      if (w === keep) continue;
      if (w.context) w.context.model.dirty = false;
      w.dispose();
    }
  };"""
_OPEN_IN_PLACE_JS = (
    "async (path) => { "
    + _CLOSE_ALL
    + " closeAll(null); const opened = await app.commands.execute('docmanager:open', {path}); closeAll(opened); }"
)
_CLOSE_DOCUMENTS_JS = "() => { " + _CLOSE_ALL + " closeAll(null); }"

_LAB_LOADED_JS = "() => !!(window.jupyterapp && window.jupyterapp.name === 'JupyterLab' && window.jupyterapp.shell)"


def lab_loaded(page, server: LabServer) -> bool:
    """Whether `page` shows `server`'s JupyterLab, loaded."""
    if server.app != "lab" or page.is_closed() or not page.url.startswith(server.url + "lab"):
        return False
    try:
        return bool(page.evaluate(_LAB_LOADED_JS))
    except Exception:  # a page between loads
        return False


def open_in_loaded_lab(page, server: LabServer, name: str) -> bool:
    """Open notebook `name` in the Lab `page` shows already; False when it shows none."""
    if not lab_loaded(page, server):
        return False
    page.evaluate(_OPEN_IN_PLACE_JS, name)
    return True


def close_documents(page) -> None:
    """Close every document of the Lab `page` unsaved (a test's end, its page kept)."""
    page.evaluate(_CLOSE_DOCUMENTS_JS)


def open_notebook(
    page, server: LabServer, name: str, cells: list[str], timeout_s: float = DEFAULT_TIMEOUT_S, kernel: str = "python3"
):
    """Write `cells` to `name`.ipynb in the server root, open it in Lab, wait for an idle kernel.

    Returns the page, for chaining.
    """
    write_notebook(server, name, cells, kernel=kernel)
    if not open_in_loaded_lab(page, server, name):
        page.goto(server.lab_url(name), wait_until="domcontentloaded")
    _poll(
        page, lambda: page.evaluate(_NOTEBOOK_STATE_JS, name), timeout_s, f"notebook {name} to open with an idle kernel"
    )
    return page


def wait_kernel_idle(page, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Wait until the current notebook's kernel reports idle."""
    _poll(
        page,
        lambda: page.evaluate(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " const k = w.sessionContext.session && w.sessionContext.session.kernel;"
            " return k && k.status === 'idle'; }"
        ),
        timeout_s,
        "an idle kernel",
    )


def cell(page, index: int):
    """Locator of cell `index` of the notebook on screen."""
    return page.locator(f"{CURRENT_NOTEBOOK} .jp-Notebook .jp-Cell").nth(index)


def _execution_counts(page) -> list:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map("
        " c => c.model.type === 'code' ? c.model.executionCount : 'n/a')"
    )


def _wait_cells_done(page, before: list, indices: list[int], timeout_s: float) -> None:
    def check():
        now = page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets.map("
            " c => c.model.type === 'code' ? [c.model.executionCount, c.model.executionState] : null)"
        )
        for i in indices:
            if now[i] is None:
                continue
            count, state = now[i]
            if count is None or count == before[i] or state == "running":
                return {"stage": "running", "cell": i, "count": count, "state": state}
        return True

    _poll(page, check, timeout_s, f"cells {indices} to finish")


def run_cell(page, index: int, wait: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Run cell `index`; with wait=False return at once (for a cell that will pause)."""
    before = _execution_counts(page)
    page.evaluate(
        """(i) => { const app = window.jupyterapp; const nb = app.shell.currentWidget.content;
        nb.activeCellIndex = i; nb.deselectAll();
        app.commands.execute('notebook:run-cell'); return true; }""",
        index,
    )
    if wait:
        _wait_cells_done(page, before, [index], timeout_s)


def run_all_cells(page, wait: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Run every cell; with wait=True wait until each code cell has finished."""
    before = _execution_counts(page)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }")
    if wait:
        code = [i for i, c in enumerate(before) if c != "n/a"]
        _wait_cells_done(page, before, code, timeout_s)


def cell_output(page, index: int):
    """Locator of cell `index`'s output area."""
    return cell(page, index).locator(".jp-OutputArea")


def cell_output_text(page, index: int) -> str:
    """The visible text of cell `index`'s outputs ("" when it has none)."""
    area = cell_output(page, index)
    if area.count() == 0:
        return ""
    return area.first.inner_text()


def wait_for_output_text(page, index: int, text: str | re.Pattern, timeout_s: float = 30.0) -> str:
    """Wait until cell `index`'s output contains `text` (str or regex); return the output."""

    def check():
        out = cell_output_text(page, index)
        found = text.search(out) if isinstance(text, re.Pattern) else text in out
        return True if found else {"stage": "waiting", "output": out[-500:]}

    _poll(page, check, timeout_s, f"{text!r} in the output of cell {index}")
    return cell_output_text(page, index)


def save_screenshot(page, name: str) -> Path:
    """Save a full-page screenshot to test-artifacts/<name>.png at the repo root."""
    ARTIFACTS.mkdir(exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    path = ARTIFACTS / (safe if safe.endswith(".png") else safe + ".png")
    page.screenshot(path=str(path), full_page=True)
    return path


# ----------------------------------------------------------------------- the debugger panel


def live_panel(page, index: int):
    """The live debugger panel of cell ``index`` (a finished one is replaced by its summary)."""
    return cell(page, index).locator(".jaxdbg-panel:not(.jaxdbg-finished)")


def _wait_text(page, read, pattern: str, what: str, timeout_ms: int) -> str:
    waited = 0
    while True:
        text = read()
        if re.search(pattern, text):
            return text
        if waited >= timeout_ms:
            raise AssertionError(f"{pattern!r} not in the {what}: {text!r}")
        page.wait_for_timeout(100)
        waited += 100


def wait_log(page, panel, pattern: str, timeout_ms: int = 60_000) -> str:
    """Wait until the panel's console log matches ``pattern`` (a regex); the log's text."""
    log = panel.locator(".jaxdbg-log")
    return _wait_text(page, lambda: log.inner_text() if log.count() else "", pattern, "panel's console", timeout_ms)


def wait_heading(page, panel, pattern: str, timeout_ms: int = 30_000) -> str:
    """Wait until the source view's heading (``file:line in function``) matches ``pattern``."""
    heading = panel.locator(".jaxdbg-source-heading")
    return _wait_text(page, heading.inner_text, pattern, "source heading", timeout_ms)


def type_command(panel, line: str) -> None:
    """Type ``line`` into the panel's command box and press Enter."""
    box = panel.locator(".jaxdbg-input")
    box.click()
    box.fill(line)
    box.press("Enter")


def cell_outputs(page, index: int) -> list[dict]:
    """Cell ``index``'s outputs as nbformat JSON, read from the notebook model."""
    return page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs.toJSON()", index
    )


# ----------------------------------------------------------------------- colours and contrast

# WCAG 2 contrast of text against what is painted behind it, computed from the page.
# Computed colours come as rgb()/rgba(), or as color(srgb r g b / a) for color-mix().
# The background is the stack of translucent layers up to the first opaque one (white
# below all); the text colour's alpha and the opacity of the element and its ancestors
# fade it into that background, as a person sees it. Disabled controls are left out
# (WCAG asks no contrast of an inactive control).
_CONTRAST_JS = """
([rootSelector, textSelector]) => {
  const parse = (c) => {
    let m = c.match(/rgba?\\(([^)]+)\\)/);
    if (m) { const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
             return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; }
    m = c.match(/color\\(srgb ([\\d.e-]+) ([\\d.e-]+) ([\\d.e-]+)(?: \\/ ([\\d.e-]+))?\\)/);
    if (m) return {r: 255 * m[1], g: 255 * m[2], b: 255 * m[3], a: m[4] === undefined ? 1 : Number(m[4])};
    throw new Error('unparsed colour ' + c); };
  const over = (c, under) => ({r: c.r * c.a + under.r * (1 - c.a), g: c.g * c.a + under.g * (1 - c.a),
                               b: c.b * c.a + under.b * (1 - c.a)});
  const lum = ({r, g, b}) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      if (c.a > 0) { layers.push(c); if (c.a >= 1) break; } }
    let out = {r: 255, g: 255, b: 255};
    for (const c of layers.reverse()) out = over(c, out);
    return out; };
  const opacity = (el) => { let o = 1; for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity); return o; };
  const ratio = (el) => { const bg = background(el); const fg = parse(getComputedStyle(el).color);
    const seen = over({...fg, a: fg.a * opacity(el)}, bg);
    const a = lum(seen) + 0.05, b = lum(bg) + 0.05; return Math.max(a, b) / Math.min(a, b); };
  const ownText = (e) => [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  // WCAG sets no contrast for the text of an inactive control
  const active = (e) => !e.closest(':disabled');
  const out = [];
  for (const root of document.querySelectorAll(rootSelector)) {
    const els = textSelector ? [...root.querySelectorAll(textSelector)].filter(e => e.textContent.trim())
                             : [root, ...root.querySelectorAll('*')].filter(ownText);
    for (const e of els.filter(e => shown(e) && active(e))) {
      out.push({text: e.textContent.trim().slice(0, 40), tag: e.tagName.toLowerCase(),
                cls: String(e.className), colour: getComputedStyle(e).color, ratio: Math.round(ratio(e) * 100) / 100});
    }
  }
  return out;
}
"""

WCAG_AA = 4.5  # normal-size text


def text_contrast(page, root_selector: str, text_selector: str | None = None, wait_s: float = 15) -> list[dict]:
    """Every piece of text shown inside the elements matching ``root_selector`` (or the
    elements matching ``text_selector`` there) with its WCAG contrast ratio. The page lays
    itself out again after a theme switch, for a moment showing none of it: while none is
    shown, it is measured again, for up to ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        found: list[dict] = page.evaluate(_CONTRAST_JS, [root_selector, text_selector])
        if found or time.monotonic() > deadline:
            return found
        page.wait_for_timeout(200)


THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark", "high-contrast": "JupyterLab Dark High Contrast"}


def set_theme(server: LabServer, name: str) -> None:
    """Make ``name`` the server's theme (pages opened afterwards start in it)."""
    server.api("PUT", "lab/api/settings/@jupyterlab/apputils-extension:themes", {"raw": json.dumps({"theme": name})})


_SWITCHED_JS = """(name) => document.body.dataset.jpThemeName === name
  && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim() !== ''"""


def switch_theme(page, theme: str) -> None:
    """Switch the open page to THEMES[theme] live, as a user does from Settings > Theme.

    JupyterLab loads the theme's CSS, then names it on the body; the server's setting
    follows (pages opened afterwards start in it: see :func:`each_theme`)."""
    name = THEMES[theme]
    page.evaluate(
        "async (name) => { await window.jupyterapp.commands.execute('apputils:change-theme', {theme: name}); }", name
    )
    page.wait_for_function(_SWITCHED_JS, arg=name)


def each_theme(page, server: LabServer):
    """Yield each theme's key with the page switched to it live, for a test that checks
    colours after one run of its flow: light, dark and high contrast in JupyterLab, light
    only in Notebook 7 (it draws with the same theme packages). The page and the server
    are light again afterwards, so a failed test leaves the next one its default."""
    themes = list(THEMES) if server.app == "lab" else ["light"]
    try:
        for theme in themes:
            if theme != "light" or page.evaluate("() => document.body.dataset.jpThemeName") != THEMES["light"]:
                switch_theme(page, theme)
            yield theme
        if themes[-1] != "light":
            switch_theme(page, "light")
    finally:
        set_theme(server, THEMES["light"])


@contextlib.contextmanager
def in_theme(server: LabServer, theme: str):
    """Pages opened inside start in THEMES[theme]; the server is light again afterwards,
    so a failed test leaves the next one its default."""
    set_theme(server, THEMES[theme])
    try:
        yield
    finally:
        set_theme(server, THEMES["light"])
