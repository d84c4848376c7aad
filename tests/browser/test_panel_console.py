"""The one-widget panel in real pages: JupyterLab 4 and Notebook 7 in headless Chromium.

What a person does with the keyboard: type at 20 ms a key and press Enter at once,
three commands in a row; ↑/↓ history, also in the next stop; Tab completion; the
shortcuts; the input focused when the panel opens. Then the panel's colours in
JupyterLab's Dark and High Contrast themes, with WCAG contrast computed from the page;
a 200-frame, 1,000-local stop; and a saved notebook reloaded, trusted and untrusted.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import re

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    WCAG_AA,
    cell,
    cell_output_text,
    each_theme,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    text_contrast,
    type_command,
    wait_for_output_text,
    wait_heading,
    wait_log,
)

pytestmark = pytest.mark.browser

PANEL_TIMEOUT_MS = 120_000

# The entry point finds the panel after a plain `import jaxdbg` once the package is
# installed (tested in test_panel_kernel_more.py); here the checkout may be on the path
# without its metadata, so the extension loads it.
SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = """\
def inner(x):
    alpha_value = x * 2
    jaxdbg.breakpoint()
    return alpha_value.sum()

@jax.jit
def outer(x):
    return inner(x + 1)

print("result", outer(jnp.arange(3.0)))
"""


def log_commands(panel) -> list[str]:
    return [t.strip() for t in panel.locator(".jaxdbg-entry:not(.jaxdbg-pending) .jaxdbg-in").all_inner_texts()]


def cell_count(page) -> int:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")


def test_console_typing_history_completion_and_shortcuts(page, server):
    open_notebook(page, server, f"console-{server.app}.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    box = panel.locator(".jaxdbg-input")
    # focused on open: typing goes straight into the console
    page.wait_for_function("() => document.activeElement && document.activeElement.classList.contains('jaxdbg-input')")
    cells = cell_count(page)

    # 20 ms a key, Enter at once, three commands in a row: each runs as typed.
    typed = ["p alpha_value.sum()", "q1 = 11", "p q1 * 2"]
    for line in typed:
        page.keyboard.type(line, delay=20)
        page.keyboard.press("Enter")
    log = wait_log(page, panel, r"\(jaxdbg\) p q1 \* 2\s+22")
    assert log_commands(panel) == [f"(jaxdbg) {t}" for t in typed], log
    assert "Array(12., dtype=float32)" in log and "SyntaxError" not in log and "Error" not in log
    assert box.input_value() == ""

    # ↑ / ↓ walk the history; ↓ past the newest gives back what was being typed.
    page.keyboard.type("draft")
    page.keyboard.press("ArrowUp")
    assert box.input_value() == "p q1 * 2"
    page.keyboard.press("ArrowUp")
    assert box.input_value() == "q1 = 11"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert box.input_value() == "draft"
    box.fill("")

    # Tab completes names of the selected frame.
    page.keyboard.type("p alpha_v", delay=20)
    page.keyboard.press("Tab")
    page.wait_for_function("() => document.activeElement.value === 'p alpha_value'")
    page.keyboard.press("Enter")
    wait_log(page, panel, r"\(jaxdbg\) p alpha_value\s+Array\(\[2\., 4\., 6\.\]")

    # Shortcuts: Alt+↑ / Alt+↓ move between frames, and Lab does not act on them too.
    # Nothing above the console moves when another frame (with fewer locals) shows.
    layout = (
        "p => ['.jaxdbg-toolbar', '.jaxdbg-source', '.jaxdbg-locals', '.jaxdbg-log'].map("
        "s => { const r = p.querySelector(s).getBoundingClientRect(); return [s, r.top, r.height]; })"
    )
    before = panel.evaluate(layout)
    # ... and the locals box is tall enough for this short table (no scrolling needed)
    assert panel.locator(".jaxdbg-locals").evaluate("e => e.scrollHeight - e.clientHeight") <= 1
    page.keyboard.press("Alt+ArrowUp")
    wait_heading(page, panel, r" in outer$")
    after = panel.evaluate(layout)
    assert before[:3] == after[:3] and before[3][1] == after[3][1], (before, after)
    page.keyboard.press("Alt+ArrowDown")
    wait_heading(page, panel, r" in inner$")
    assert cell_count(page) == cells
    # the log box keeps a fixed maximum height and follows the newest entry
    geometry = panel.locator(".jaxdbg-log").evaluate(
        "e => [e.clientHeight, e.scrollHeight - e.scrollTop - e.clientHeight]"
    )
    assert geometry[0] <= 262 and geometry[1] < 5, geometry
    assert panel.locator(".jaxdbg-button", has_text="Continue").first.get_attribute("title").endswith("(F8)")
    save_screenshot(page, f"panel_console_{server.app}")

    page.keyboard.press("F8")  # Continue
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    assert cell(page, 1).locator(".jaxdbg-static").count() == 1
    assert cell_count(page) == cells

    # The next stop starts with this kernel's history.
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    page.wait_for_function("() => document.activeElement && document.activeElement.classList.contains('jaxdbg-input')")
    page.keyboard.press("ArrowUp")
    assert panel.locator(".jaxdbg-input").input_value() == "p alpha_value"
    page.keyboard.press("Alt+Shift+KeyQ")  # Quit
    wait_for_output_text(page, 1, "DebuggerQuit", timeout_s=60)
    assert "Quit: the computation was stopped." in cell_output_text(page, 1)


# --------------------------------------------------------------------------- themes

LIVE_PANEL = ".jaxdbg-panel:not(.jaxdbg-finished)"
PANEL_TEXT = {
    "current": ".jaxdbg-current .jaxdbg-code span, .jaxdbg-current .jaxdbg-lineno",
    "tokens": ".jaxdbg-source .jaxdbg-code span",
    "text": ".jaxdbg-banner, .jaxdbg-frame span, .jaxdbg-locals td, .jaxdbg-locals th, .jaxdbg-out,"
    " .jaxdbg-in, .jaxdbg-button",
}


def _stopped_with_alpha_printed(page, server, name: str):
    """STOP_CELL paused in notebook ``name``, ``p alpha_value`` typed and answered: the live panel."""
    open_notebook(page, server, name, [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    page.keyboard.type("p alpha_value", delay=5)
    page.keyboard.press("Enter")
    wait_log(page, panel, r"Array\(\[2\., 4\., 6\.\]")
    return panel


def test_theme_contrast(page, lab_server):
    """The panel is drawn once; the page then switches theme live, as a user does."""
    panel = _stopped_with_alpha_printed(page, lab_server, "theme.ipynb")
    page.mouse.move(0, 0)  # no hover colours
    for theme in each_theme(page, lab_server):
        found = {part: text_contrast(page, LIVE_PANEL, sel) for part, sel in PANEL_TEXT.items()}
        save_screenshot(page, f"panel_theme_{theme}")
        assert found["current"] and found["tokens"] and found["text"], found
        low = [r for part in ("current", "tokens", "text") for r in found[part] if r["ratio"] < WCAG_AA]
        assert not low, (theme, low)
    panel.locator(".jaxdbg-button", has_text="Continue").first.click()
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)


# --------------------------------------------------------------------------- size

BIG_CELL = """\
for _i in range(1000):
    globals()[f"v{_i:04d}"] = jnp.full((3,), float(_i))

def deep(x, n):
    if n == 0:
        jaxdbg.breakpoint()
        return x
    return deep(x + 1, n - 1)

print("big result", jax.jit(lambda x: deep(x, 195))(jnp.zeros(2)).tolist())
"""


HOLD_AT_BOTTOM_JS = """e => {
  new MutationObserver(() => { e.scrollTop = e.scrollHeight; }).observe(e, { childList: true, subtree: true });
  e.scrollTop = e.scrollHeight;
}"""


def test_two_hundred_frames_and_a_thousand_locals(page, lab_server):
    open_notebook(page, lab_server, "big.ipynb", [SETUP_CELL, BIG_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    frames = panel.locator(".jaxdbg-frame")
    assert frames.count() >= 198, frames.count()
    frames.nth(frames.count() - 1).click()  # the notebook cell: its globals are the locals
    wait_heading(page, panel, r" in <module>$")
    table = panel.locator(".jaxdbg-locals")
    first = panel.locator(".jaxdbg-local").count()
    assert 0 < first < 1000
    height = table.evaluate("e => e.clientHeight")
    assert height <= 242, height
    # Scrolling the table fetches the rest on demand, a page per request. The table is
    # held at its bottom, as by a user holding End: each page of rows is scrolled past
    # before the page draws again, so the row that asks for more never leaves the view,
    # and the rows must still keep coming.
    table.evaluate(HOLD_AT_BOTTOM_JS)
    rows = panel.locator(".jaxdbg-local")
    rows.nth(999).wait_for(state="attached", timeout=120_000)  # a loaded machine answers each page more slowly
    assert rows.count() >= 1000
    header_top = table.evaluate(
        "e => e.querySelector('th').getBoundingClientRect().top - e.getBoundingClientRect().top"
    )
    assert abs(header_top) <= 2, header_top  # the header stays on top (sticky)
    assert "min=999 max=999" in panel.locator(".jaxdbg-local", has_text="v0999").inner_text()
    save_screenshot(page, "panel_big_stop")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "big result [195.0, 195.0]", timeout_s=60)


BIG_LOCAL_CELL = """\
@jax.jit
def with_big(s):
    big = jnp.arange(3_000_000, dtype=jnp.float32) * s
    jaxdbg.breakpoint()
    return big[:2]

print("big local", with_big(jnp.float32(2.0)).tolist())
"""


def test_a_big_locals_statistics_arrive_once_its_row_is_shown(page, lab_server):
    """The panel comes up before a big array's statistics; the row shows them once the
    kernel has taken them (the browser asks when it draws the row)."""
    open_notebook(page, lab_server, "big_local.ipynb", [SETUP_CELL, BIG_LOCAL_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    row = panel.locator(".jaxdbg-local", has_text="float32[3000000]")
    row.locator(".jaxdbg-col-summary", has_text="min=0 max=6e+06 mean=3e+06").wait_for(timeout=60_000)
    assert row.count() == 1 and panel.locator(".jaxdbg-stats-pending").count() == 0
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "big local [0.0, 2.0]", timeout_s=60)


# --------------------------------------------------------------------------- saved notebooks


def test_saved_reloaded_and_untrusted(page, lab_server):
    _stopped_with_alpha_printed(page, lab_server, "saved.ipynb")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    saved = json.loads((lab_server.root_dir / "saved.ipynb").read_text())
    outputs = saved["cells"][1]["outputs"]
    summary = [o for o in outputs if "text/html" in o.get("data", {})]
    assert len(summary) == 1, outputs
    plain = "".join(summary[0]["data"]["text/plain"])
    assert plain.startswith("Stopped at") and "(jaxdbg) p alpha_value" in plain and plain.endswith("Continued.")
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)

    # Reloaded: the summary is there without a kernel or widget state.
    lab_server.shutdown_kernels()
    page.reload()
    static = cell(page, 1).locator(".jaxdbg-static")
    static.wait_for(state="visible", timeout=60_000)
    assert "(jaxdbg) p alpha_value" in static.inner_text() and "Continued." in static.inner_text()

    # Untrusted (a copy whose signature no longer matches): styles are stripped, the
    # meaning stays in the words.
    saved["metadata"]["changed"] = True
    (lab_server.root_dir / "untrusted.ipynb").write_text(json.dumps(saved))
    page.goto(lab_server.lab_url("untrusted.ipynb"), wait_until="domcontentloaded")
    out = cell(page, 1).locator(".jp-OutputArea")
    out.wait_for(state="visible", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length >= 1")
    text = cell_output_text(page, 1)
    for needle in (
        "Stopped at",
        "in inner",
        "(jaxdbg) p alpha_value",
        "Array([2., 4., 6.], dtype=float32)",
        "Continued.",
    ):
        assert needle in text, text
    save_screenshot(page, "panel_untrusted_summary")


# --------------------------------------------------------------------------- many stops

MANY_STOPS_CELL = """\
def per_device(x):
    jaxdbg.breakpoint()
    return x * 2

print("pmap result", jax.pmap(per_device)(jnp.arange(8.0)).tolist())
"""

SCAN_CELL = """\
def step(c, x):
    c = c + x
    jaxdbg.breakpoint()
    return c, c

print("scan result", jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])(jnp.arange(10.0)))
"""


@pytest.mark.multidevice
def test_continue_all_ignore_and_disable_buttons(page, lab_server):
    import os

    if "device_count=8" not in os.environ.get("XLA_FLAGS", ""):
        pytest.skip("needs 8 host devices (XLA_FLAGS)")
    open_notebook(page, lab_server, "many.ipynb", [SETUP_CELL, MANY_STOPS_CELL, SCAN_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    panel.get_by_role("button", name="Continue all", exact=True).click()
    wait_for_output_text(page, 1, "pmap result [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]", timeout_s=90)
    assert cell(page, 1).locator(".jaxdbg-static").count() == 1  # one stop for 8 devices

    run_cell(page, 2, wait=False)
    panel = live_panel(page, 2)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    assert re.search(r"hit 1\b", panel.locator(".jaxdbg-banner").inner_text())
    panel.locator(".jaxdbg-ignore-count").fill("3")
    panel.get_by_role("button", name="Ignore", exact=True).click()
    wait_log(page, panel, r"\(jaxdbg\) ignore 3")
    panel.get_by_role("button", name="Continue", exact=True).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished) .jaxdbg-banner')]"
        ".some(b => /hit 5\\b/.test(b.textContent))",
        timeout=90_000,
    )
    panel = live_panel(page, 2)
    save_screenshot(page, "panel_many_stops")
    panel.get_by_role("button", name="Disable", exact=True).click()
    wait_log(page, panel, r"\(jaxdbg\) disable")
    panel.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 2, "scan result 45.0", timeout_s=90)
    assert cell(page, 2).locator(".jaxdbg-static").count() == 2
    page.evaluate("() => true")


# Where a person sees the element: the point at the middle of its first line hits it
# (not clipped by the notebook's scroller, not under another element, in the window).
SEEN_JS = """(sel) => { const p = document.querySelector('.jaxdbg-panel:not(.jaxdbg-finished)');
  const e = p && p.querySelector(sel); if (!e) return false;
  const r = e.getBoundingClientRect(); const x = r.left + Math.min(r.width / 2, 40), y = r.top + 6;
  const hit = document.elementFromPoint(x, y); return !!hit && e.contains(hit); }"""


@pytest.mark.notebook7
def test_run_all_shows_the_top_of_the_panel(page, server):
    """Run All: the stop's cell is far below what is on screen, and more cells follow it;
    its panel comes into view from its top: the banner and the source, not only the input."""
    from support.lab_helpers import run_all_cells

    page.set_viewport_size({"width": 1280, "height": 700})  # a laptop: the panel is taller than the view
    filler = 'print("\\n".join(f"filler line {i}" for i in range(60)))'
    open_notebook(page, server, f"below-{server.app}.ipynb", [SETUP_CELL] + [filler] * 4 + [STOP_CELL] + ["1 + 1"] * 3)
    run_all_cells(page, wait=False)
    panel = live_panel(page, 5)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    seen = lambda: all(
        page.evaluate(SEEN_JS, sel) for sel in (".jaxdbg-banner", ".jaxdbg-source-heading", ".jaxdbg-current")
    )
    page.wait_for_function(
        f"() => [...{json.dumps(['.jaxdbg-banner', '.jaxdbg-source-heading', '.jaxdbg-current'])}]"
        f".every(s => ({SEEN_JS})(s))",
        timeout=30_000,
    )
    page.wait_for_timeout(1000)  # and it stays there (nothing scrolls it away afterwards)
    save_screenshot(page, f"panel_run_all_{server.app}")
    assert seen()
    page.keyboard.press("F8")
    wait_for_output_text(page, 5, "result 12.0", timeout_s=60)


# --------------------------------------------------------------------------- completion list


def completion_items(panel) -> list[str]:
    return panel.locator(".jaxdbg-completions.jaxdbg-open .jaxdbg-completion").all_inner_texts()


def active_completion(panel) -> str | None:
    active = panel.locator(".jaxdbg-completion.jaxdbg-active")
    return active.inner_text() if active.count() else None


def test_completion_list_shows_words_narrows_and_takes_the_keys(page, server):
    open_notebook(page, server, f"complete-{server.app}.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    box = panel.locator(".jaxdbg-input")
    page.wait_for_function("() => document.activeElement && document.activeElement.classList.contains('jaxdbg-input')")
    page.keyboard.type("p alpha_value.sum(); p jnp.ar", delay=10)
    page.keyboard.press("Tab")
    panel.locator(".jaxdbg-completions.jaxdbg-open").wait_for(timeout=30_000)
    first = completion_items(panel)
    # each item is the completed word alone, not the typed line again
    assert len(first) > 3 and "arange" in first and "array" in first, first
    assert all(w.startswith("ar") and " " not in w and "." not in w for w in first), first
    assert active_completion(panel) == first[0]

    # typing on narrows the list, without another Tab
    page.keyboard.type("gm")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jaxdbg-completions.jaxdbg-open .jaxdbg-completion')]"
        ".every(e => e.textContent.startsWith('argm'))"
    )
    narrowed = completion_items(panel)
    assert narrowed and len(narrowed) < len(first) and set(narrowed) <= set(first), narrowed
    assert box.input_value() == "p alpha_value.sum(); p jnp.argm"
    save_screenshot(page, f"panel_completion_open_{server.app}")

    # ↓ / ↑ move in the list, not in the history; the input is left alone
    page.keyboard.press("ArrowDown")
    assert active_completion(panel) == narrowed[1 % len(narrowed)]
    page.keyboard.press("ArrowUp")
    assert active_completion(panel) == narrowed[0]
    assert box.input_value() == "p alpha_value.sum(); p jnp.argm"
    page.keyboard.press("ArrowDown")
    chosen = active_completion(panel)
    page.keyboard.press("Enter")  # picks; runs nothing
    assert box.input_value() == "p alpha_value.sum(); p jnp." + chosen
    assert completion_items(panel) == [] and log_commands(panel) == []

    # Tab picks too; Esc closes the list and keeps the text
    box.fill("p jnp.ar")
    page.keyboard.press("Tab")
    panel.locator(".jaxdbg-completions.jaxdbg-open").wait_for(timeout=30_000)
    page.keyboard.press("ArrowDown")
    chosen = active_completion(panel)
    page.keyboard.press("Tab")
    assert box.input_value() == "p jnp." + chosen and completion_items(panel) == []
    box.fill("p jnp.ar")
    page.keyboard.press("Tab")
    panel.locator(".jaxdbg-completions.jaxdbg-open").wait_for(timeout=30_000)
    page.keyboard.press("Escape")
    assert completion_items(panel) == [] and box.input_value() == "p jnp.ar"
    assert live_panel(page, 1).count() == 1
    save_screenshot(page, f"panel_completion_{server.app}")

    # with the list closed the arrows are the history again
    box.fill("")
    page.keyboard.type("p 40 + 2")
    page.keyboard.press("Enter")
    wait_log(page, panel, r"\(jaxdbg\) p 40 \+ 2\s+42")
    page.keyboard.press("ArrowUp")
    assert box.input_value() == "p 40 + 2"
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)


# --------------------------------------------------------------------------- layout

MANY_LOCALS_CELL = """\
def inner(x):
    a00, a01, a02, a03, a04, a05 = x, x + 1, x + 2, x + 3, x + 4, x + 5
    a06, a07, a08, a09, a10, a11 = x + 6, x + 7, x + 8, x + 9, x + 10, x + 11
    jaxdbg.breakpoint()
    return a11

print("result", jax.jit(inner)(jnp.arange(3.0)).tolist())
"""


def test_frames_box_fits_its_frames_and_locals_get_the_room(page, lab_server):
    """Two frames and a six-line cell: the frames box is not the fixed 17-line height,
    and the 13 locals show without scrolling. Disable and Ignore say they stay paused."""
    open_notebook(page, lab_server, "layout.ipynb", [SETUP_CELL, MANY_LOCALS_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    assert panel.locator(".jaxdbg-frame").count() == 2
    page.wait_for_function(
        "() => document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished) .jaxdbg-local').length === 13"
    )
    frames = panel.locator(".jaxdbg-frames").evaluate("e => [e.clientHeight, e.scrollHeight]")
    line = panel.locator(".jaxdbg-frame").first.evaluate("e => e.getBoundingClientRect().height")
    assert frames[0] <= 9 * line + 40 and frames[1] <= frames[0], (frames, line)
    locals_box = panel.locator(".jaxdbg-locals").evaluate("e => [e.clientHeight, e.scrollHeight]")
    assert locals_box[1] - locals_box[0] <= 1, locals_box  # every row shows, no scrolling
    # the source box is as tall as the frames box: nothing in the body is left empty
    source = panel.locator(".jaxdbg-source").evaluate("e => e.getBoundingClientRect().bottom")
    frames_bottom = panel.locator(".jaxdbg-frames").evaluate("e => e.getBoundingClientRect().bottom")
    assert abs(source - frames_bottom) <= 2, (source, frames_bottom)

    # Disable and Ignore do not resume: their label says so, apart from Continue all
    stays = panel.locator(".jaxdbg-stays-paused")
    assert "stays paused" in stays.inner_text()
    for name in ("Disable", "Ignore"):
        b = stays.get_by_role("button", name=name, exact=True)
        assert b.count() == 1 and "stays paused" in b.get_attribute("title"), name
    assert panel.locator(".jaxdbg-stays-paused .jaxdbg-button", has_text="Continue all").count() == 0
    save_screenshot(page, "panel_layout_few_frames")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result [11.0, 12.0, 13.0]", timeout_s=60)


# --------------------------------------------------------------------------- kernel status

KERNEL_STATUS_JS = (
    "() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
    " return k ? k.status : null; }"
)


@pytest.mark.notebook7
def test_a_paused_cell_shows_the_kernel_busy(page, server):
    """The status bar (and the kernel status every indicator reads) says Busy while the
    cell is paused, also after the panel's commands were handled; Idle once it ends."""
    open_notebook(page, server, f"busy-{server.app}.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    for line, answer in (("p 40 + 2", r"42"), ("p alpha_value", r"Array\(\[2\., 4\., 6\.\]"), ("w", r"<module>")):
        type_command(panel, line)
        wait_log(page, panel, answer)
    page.wait_for_timeout(500)  # the idle of the last command's message has arrived by now
    assert page.evaluate(KERNEL_STATUS_JS) == "busy"
    if server.app == "lab":
        bar = page.locator(".jp-StatusBar-Widget").inner_text()
        assert "Busy" in bar and "Idle" not in bar, bar
    save_screenshot(page, f"panel_kernel_busy_{server.app}")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    page.wait_for_function(f"() => ({KERNEL_STATUS_JS})() === 'idle'", timeout=30_000)


# --------------------------------------------------------------------------- kernel restart


@pytest.mark.notebook7
def test_a_panel_whose_kernel_restarted_says_so(page, server):
    """Restart the kernel while paused: the old panel says its kernel is gone and its
    controls are disabled, instead of dropping clicks and typed lines silently."""
    open_notebook(page, server, f"restart-{server.app}.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    type_command(panel, "p 40 + 2")
    wait_log(page, panel, r"42")
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )
    gone = cell(page, 1).locator(".jaxdbg-panel .jaxdbg-gone")
    gone.wait_for(state="visible", timeout=60_000)
    assert "kernel" in gone.inner_text().lower() and "run the cell again" in gone.inner_text().lower()
    root = cell(page, 1).locator(".jaxdbg-panel")
    assert root.locator(".jaxdbg-input").is_disabled()
    for name in ("Continue", "Quit", "Up"):
        assert root.get_by_role("button", name=name, exact=True).is_disabled(), name
    # what it showed stays readable
    assert "(jaxdbg) p 40 + 2" in root.inner_text()
    save_screenshot(page, f"panel_kernel_restarted_{server.app}")
