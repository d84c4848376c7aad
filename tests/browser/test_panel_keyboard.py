"""The panel by keyboard, in JupyterLab 4 and Notebook 7: keys pressed on its controls
stay in it (none reaches the notebook's command mode, where `d d` deletes the paused
cell), every control is reached by Tab and named for what it acts on, and the array
view walks an array's NaN / Inf cells. Then what a post-mortem and a reopened saved
stop show, the locals box's resizing and a library frame's long file name.
"""

from __future__ import annotations

import re

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    cell,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    type_command,
    wait_for_output_text,
    wait_heading,
    wait_log,
)

pytestmark = pytest.mark.browser

PANEL_TIMEOUT_MS = 120_000

STOP_CELL = """\
import numpy as np

def inner(x, params):
    grid = x.reshape(4, 6)
    cube = jnp.arange(24.0).reshape(2, 3, 4)
    jaxdbg.breakpoint()
    return grid.sum() + cube.sum() + params['w'].sum()

@jax.jit
def outer(x, params):
    return inner(x + 1, params)

bad = np.arange(24.0)
bad[7] = np.nan
bad[13] = np.inf
print("result", outer(jnp.asarray(bad), {'w': jnp.ones(3), 'b': jnp.zeros(2)}))
"""

# What the notebook holds: cells, live panels, and which cell is active (ArrowDown in
# command mode would move it).
NOTEBOOK_JS = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  return [nb.widgets.length, document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished)').length,
          nb.activeCellIndex]; }"""

# The focused element: inside the panel?, its tag, accessible-name-ish label, value.
FOCUS_JS = """() => { const e = document.activeElement;
  return {inPanel: !!(e && e.closest('.jaxdbg-panel')), tag: e ? e.tagName.toLowerCase() : null,
          label: e ? (e.getAttribute('aria-label') || e.textContent || '').trim() : null,
          role: e ? (e.getAttribute('role') || e.getAttribute('type') || e.tagName.toLowerCase()) : null}; }"""


def _paused(page, server, name):
    open_notebook(page, server, name, [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    page.wait_for_function("() => document.activeElement && document.activeElement.classList.contains('jaxdbg-input')")
    return panel


def _focus(page):
    return page.evaluate(FOCUS_JS)


@pytest.mark.notebook7
def test_keys_pressed_on_the_panels_controls_stay_in_the_panel(page, server):
    panel = _paused(page, server, f"keys-{server.app}.ipynb")
    box = panel.locator(".jaxdbg-input")
    notebook = page.evaluate(NOTEBOOK_JS)
    assert notebook[1] == 1, notebook
    panel.locator("canvas.jaxdbg-thumb[data-drawn='1']").first.wait_for(timeout=60_000)

    controls = {
        "the Up button": panel.get_by_role("button", name="Up", exact=True),
        "an array picture": panel.get_by_role("button", name="open the array view of grid"),
        "the pp checkbox": panel.get_by_role("checkbox", name="pretty-print results (pp)"),
        "a frame": panel.get_by_role("option").first,
        "a local's name": panel.get_by_role("button", name=re.compile(r"^show grid in full")),
    }
    for what, control in controls.items():
        # What a user who clicked a control and typed a notebook command would press:
        # delete, insert, undo, cut, move to the next cell.
        for keys in (["d", "d"], ["b"], ["z"], ["x"], ["ArrowDown"]):
            control.focus()
            for key in keys:
                page.keyboard.press(key)
            assert page.evaluate(NOTEBOOK_JS) == notebook, (what, keys)
            typed = "".join(k for k in keys if len(k) == 1)
            if typed:  # a printable key moved to the console and was typed there
                assert box.input_value() == typed, (what, keys, box.input_value())
                assert _focus(page)["tag"] == "input" and _focus(page)["inPanel"], what
            box.fill("")

    # The array view's slider takes the arrow keys (the notebook swallowed them).
    panel.get_by_role("button", name="open the array view of cube").press("Enter")
    slider = panel.locator(".jaxdbg-array-view input[type=range]")
    slider.wait_for(timeout=60_000)
    slider.focus()
    drawn = panel.locator(".jaxdbg-array-view").get_attribute("data-drawn")
    page.keyboard.press("ArrowRight")
    assert slider.input_value() == "1"
    page.wait_for_function("(n) => document.querySelector('.jaxdbg-array-view').dataset.drawn !== n", arg=drawn)
    assert "axis 0: 1" in panel.locator(".jaxdbg-array-view").inner_text()
    page.keyboard.press("ArrowDown")
    assert page.evaluate(NOTEBOOK_JS) == notebook
    slider.focus()
    page.keyboard.press("x")
    assert box.input_value() == "x" and page.evaluate(NOTEBOOK_JS) == notebook
    box.fill("")

    # Typed into the console from a button, a command runs as typed.
    panel.get_by_role("button", name="Up", exact=True).focus()
    page.keyboard.type("p grid.shape", delay=20)
    page.keyboard.press("Enter")
    wait_log(page, panel, r"\(jaxdbg\) p grid\.shape\s+\(4, 6\)")

    # Esc leaves the panel for its cell: from there the notebook's keys are the notebook's.
    panel.get_by_role("button", name="Up", exact=True).focus()
    page.keyboard.press("Escape")
    assert not _focus(page)["inPanel"]
    assert page.evaluate(NOTEBOOK_JS) == notebook
    save_screenshot(page, f"panel_keys_{server.app}")

    panel.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "result", timeout_s=60)


def _tab_until(page, done, limit=60):
    """Press Tab until ``done(focus)``; the focus at each step."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focus = _focus(page)
        seen.append(focus)
        if done(focus):
            return seen
    raise AssertionError(f"Tab never reached it: {seen}")


@pytest.mark.notebook7
def test_every_control_is_reached_by_tab_named_and_worked_by_keys(page, server):
    panel = _paused(page, server, f"tab-{server.app}.ipynb")
    panel.locator("canvas.jaxdbg-thumb[data-drawn='1']").first.wait_for(timeout=60_000)

    # Names that say what a control acts on (not ×, ▸ or a bare "open the array view").
    snapshot = panel.aria_snapshot()
    names = re.findall(r'- (?:button|checkbox|textbox|option|slider) "([^"]*)"', snapshot)
    assert "open the array view of grid" in names and "expand params" in names, snapshot
    assert not [n for n in names if n in {"×", "▸", "▾", "open the array view"}], snapshot
    assert panel.get_by_role("textbox", name=re.compile("^debugger console")).count() == 1

    # Tab order: the toolbar, a frame, the locals' names and pictures, the console, pp.
    panel.get_by_role("button", name="Continue", exact=True).focus()
    seen = _tab_until(page, lambda f: f["role"] == "checkbox" and "pp" in f["label"])
    labels = [f["label"] for f in seen]
    kinds = [f["role"] for f in seen]
    assert all(f["inPanel"] for f in seen), seen
    first = lambda prefix: next(i for i, n in enumerate(labels) if n.startswith(prefix))
    order = [
        labels.index("Up"),
        kinds.index("option"),
        first("show "),
        first("open the array view of "),
        kinds.index("text"),
    ]
    assert "expand params" in labels and "open the array view of grid" in labels, labels
    assert order == sorted(order), labels

    # The frames by arrows, Enter selects; Space on Down at the innermost frame keeps
    # the focus on a button of the panel.
    option = panel.get_by_role("option").first
    option.focus()
    page.keyboard.press("ArrowDown")
    assert _focus(page)["role"] == "option" and "outer" in _focus(page)["label"], (_focus(page), labels)
    page.keyboard.press("Enter")
    wait_heading(page, panel, r" in outer$")
    panel.get_by_role("button", name="Down", exact=True).focus()
    page.keyboard.press("Space")
    wait_heading(page, panel, r" in inner$")
    page.wait_for_function("() => document.querySelector('.jaxdbg-toolbar button:nth-child(3)').disabled")
    assert _focus(page)["inPanel"] and _focus(page)["label"] == "Up", _focus(page)

    # A tree toggle and a local's name by Enter.
    panel.get_by_role("button", name="expand params").press("Enter")
    panel.get_by_role("button", name="collapse params").wait_for()
    panel.get_by_role("button", name="open the array view of params['w']").wait_for(timeout=60_000)
    panel.get_by_role("button", name=re.compile(r"^show grid in full")).press("Enter")
    wait_log(page, panel, r"\(jaxdbg\) pp grid")

    # Tab leaves the console when nothing is left to complete: at once when empty, and
    # after a completion that is whole.
    box = panel.locator(".jaxdbg-input")
    box.focus()
    page.keyboard.press("Tab")
    assert _focus(page)["role"] == "checkbox", _focus(page)
    box.focus()
    page.keyboard.type("p gri", delay=20)
    page.keyboard.press("Tab")
    page.wait_for_function("() => document.activeElement.value === 'p grid'")
    page.keyboard.press("Tab")
    assert _focus(page)["role"] == "checkbox", _focus(page)
    # Esc in the console leaves the panel.
    box.focus()
    page.keyboard.press("Escape")
    assert not _focus(page)["inPanel"]

    # The array view: its close button named, the NaN and the Inf one step each.
    panel.get_by_role("button", name="open the array view of grid").press("Enter")
    view = panel.locator(".jaxdbg-array-view")
    view.locator(".jaxdbg-array-nonfinite").wait_for(timeout=60_000)
    assert "2 NaN / Inf" in view.inner_text()
    step = panel.get_by_role("button", name="go to the next NaN or Inf of grid")
    step.press("Enter")
    assert view.locator(".jaxdbg-array-hover").inner_text() == "grid[1, 1] = nan"
    step.press("Enter")
    assert view.locator(".jaxdbg-array-hover").inner_text() == "grid[2, 1] = inf"
    save_screenshot(page, f"panel_next_nan_{server.app}")
    panel.get_by_role("button", name="close the array view").press("Enter")
    assert view.is_hidden()
    assert _focus(page)["label"] == "open the array view of grid"  # back where it was opened

    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result", timeout_s=60)


LIBRARY = """\
def apply_the_function_given(function, value):
    return function(value)
"""


def test_post_mortem_and_reopened_stops_show_only_what_applies(page, lab_server, tmp_path):
    # A library module at a long path: its frame's file:line must not squeeze its name away.
    folder = lab_server.root_dir / ("a_library_folder_with_a_long_name_" * 3) / "nested_package_folder"
    folder.mkdir(parents=True)
    (folder / "library_module_with_a_long_name.py").write_text(LIBRARY)
    saved = tmp_path / "stop.npz"
    cells = [
        EXTENSION_SETUP_CELL + f"import sys; sys.path.insert(0, {str(folder)!r})\n"
        "from library_module_with_a_long_name import apply_the_function_given\n",
        "def user(v):\n    jaxdbg.breakpoint()\n    return v\n"
        "print('r', jax.jit(lambda v: apply_the_function_given(user, v))(jnp.arange(3.0)))\n",
        f"jaxdbg.open_stop({str(saved)!r})",
        "def fails(v):\n    return 1 / 0\nfails(2)",
        "jaxdbg.post_mortem()",
    ]
    open_notebook(page, lab_server, "only-what-applies.ipynb", cells)
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    # A live breakpoint's stop has the many-stops buttons.
    assert panel.get_by_role("button", name="Continue all").is_visible()
    widths = panel.locator(".jaxdbg-frame").evaluate_all(
        "rows => rows.map(r => [r.querySelector('.jaxdbg-frame-function').textContent,"
        " r.querySelector('.jaxdbg-frame-function').getBoundingClientRect().width])"
    )
    library = [w for w in widths if w[0] == "apply_the_function_given"]
    assert library and all(w[1] >= 60 for w in widths), widths

    # The locals box can be dragged taller.
    locals_box = panel.locator(".jaxdbg-locals")
    before = locals_box.bounding_box()
    page.mouse.move(before["x"] + before["width"] - 3, before["y"] + before["height"] - 3)
    page.mouse.down()
    page.mouse.move(before["x"] + before["width"] - 3, before["y"] + before["height"] + 200, steps=5)
    page.mouse.up()
    assert locals_box.bounding_box()["height"] > before["height"] + 100

    type_command(panel, f"save {saved}")
    wait_log(page, panel, "Saved the stop to")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "r ", timeout_s=60)

    # Reopened: no breakpoint to pass or disable, no code to replay; the file is a note.
    run_cell(page, 2, wait=False)
    panel = live_panel(page, 2)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    note = panel.locator(".jaxdbg-note")
    assert note.inner_text() == "reopened from stop.npz"
    colours = note.evaluate(
        "e => [getComputedStyle(e).color,"
        " getComputedStyle(e.closest('.jaxdbg-panel')).getPropertyValue('--jaxdbg-error')]"
    )
    error_colour = panel.locator(".jaxdbg-reason").evaluate(
        "e => { const x = document.createElement('div'); x.className = 'jaxdbg-reason'; e.parentNode.append(x);"
        " const c = getComputedStyle(x).color; x.remove(); return c; }"
    )
    assert colours[0] != error_colour, colours
    for name in ("Continue all", "Disable", "Ignore", "Replay"):
        assert not panel.get_by_role("button", name=name, exact=True).is_visible(), name
    assert panel.get_by_role("button", name="Continue", exact=True).is_visible()
    save_screenshot(page, "panel_reopened_stop")
    page.keyboard.press("F8")
    cell(page, 2).locator(".jaxdbg-static").first.wait_for(timeout=60_000)

    run_cell(page, 3)
    run_cell(page, 4, wait=False)
    panel = live_panel(page, 4)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    for name in ("Continue all", "Disable", "Ignore"):
        assert not panel.get_by_role("button", name=name, exact=True).is_visible(), name
    page.keyboard.press("F8")
    cell(page, 4).locator(".jaxdbg-static").first.wait_for(timeout=60_000)
