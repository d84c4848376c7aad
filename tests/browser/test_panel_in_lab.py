"""The debugger panel in real pages, used the way a person uses it.

In JupyterLab 4 and in Notebook 7, a notebook loads the extension (``%load_ext
jaxdbg``; ``%jaxdbg`` shows the panel backend and the JAX hooks) and runs a jitted
function that stops at ``jaxdbg.breakpoint()`` two frames deep. The test clicks
through the frames, types ``p`` and ``pp``, presses Continue, then saves the notebook
and converts it with nbconvert (no kernel) to check that the stop's static summary is
kept. Another stop is ended with Quit: one line, and the next cell runs. Screenshots
of each step go to test-artifacts/flow_<lab|notebook>_*.png.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support.lab_helpers import (
    ARTIFACTS,
    EXTENSION_SETUP_CELL,
    cell,
    cell_output_text,
    cell_outputs,
    open_notebook,
    run_cell,
    save_screenshot,
    type_command,
    wait_for_output_text,
    wait_heading,
    wait_log,
)

pytestmark = pytest.mark.browser

SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = """\
def inner(x):
    y = x * 2
    jaxdbg.breakpoint()
    return y.sum()

@jax.jit
def outer(x):
    return inner(x + 1)

print("result", outer(jnp.arange(3.0)))
"""

STATUS_CELL = "%jaxdbg"

QUEUED_CELL = 'print("queued cell ran")'

PANEL_TIMEOUT_MS = 120_000  # the first jit compile in a fresh kernel is slow on 2 cores


def panel(page, index: int):
    """The live debugger panel in cell ``index`` (finished panels lose their buttons)."""
    return (
        cell(page, index).locator(".jaxdbg-panel").filter(has=page.get_by_role("button", name="Continue", exact=True))
    )


def current_source_line(panel) -> str:
    return panel.locator(".jaxdbg-source .jaxdbg-current").inner_text()


def select_frame(page, panel, index: int, function: str) -> None:
    """Click frame ``index`` of the stack; wait until the source view shows ``function``."""
    panel.locator(".jaxdbg-frame").nth(index).click()
    wait_heading(page, panel, rf" in {re.escape(function)}$")


def save_notebook(page) -> None:
    """Save from the page, as Ctrl+S does, and wait until the model is clean."""
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)


def execution_counts(page) -> list:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map("
        " c => c.model.type === 'code' ? c.model.executionCount : null)"
    )


@pytest.mark.notebook7
def test_load_pause_frames_print_continue_save_and_convert(page, server, tmp_path):
    """In JupyterLab 4 and Notebook 7: load the extension, stop, click through the
    frames, ``p`` and ``pp`` in each, Continue; the saved notebook keeps the summary."""
    page.set_viewport_size({"width": 1400, "height": 1500})  # the whole panel on screen
    name = f"panel-{server.app}.ipynb"
    open_notebook(page, server, name, [SETUP_CELL, STATUS_CELL, STOP_CELL])
    run_cell(page, 0)
    assert "Error" not in cell_output_text(page, 0), cell_output_text(page, 0)
    # %load_ext took effect: the panel is the backend and JAX's breakpoint is jaxdbg's.
    run_cell(page, 1)
    status = wait_for_output_text(page, 1, "jaxdbg status")
    assert re.search(r"backend\s+widgets", status), status
    assert re.search(r"JAX hooks\s+installed\s+jax\.debug\.breakpoint: jaxdbg", status), status
    save_screenshot(page, f"flow_{server.app}_extension_loaded")

    run_cell(page, 2, wait=False)  # blocks at the breakpoint
    live = panel(page, 2)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    banner = live.locator(".jaxdbg-banner").inner_text()
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", banner), banner
    assert "jaxdbg.breakpoint()" in current_source_line(live)

    # The frame list: 0 inner, 1 outer, 2 <module>. Each click moves the source view,
    # and `p` evaluates in the frame shown: outer's x is inner's x - 1.
    frames = live.locator(".jaxdbg-frame")
    assert [f.split()[:2] for f in frames.all_inner_texts()] == [["0", "inner"], ["1", "outer"], ["2", "<module>"]], (
        frames.all_inner_texts()
    )
    select_frame(page, live, 1, "outer")
    assert "return inner(x + 1)" in current_source_line(live)
    type_command(live, "p x")
    wait_log(page, live, r"\(jaxdbg\) p x\s*Array\(\[0\., 1\., 2\.\], dtype=float32\)")
    select_frame(page, live, 2, "<module>")
    assert "outer(jnp.arange(3.0))" in current_source_line(live)
    select_frame(page, live, 0, "inner")
    assert "jaxdbg.breakpoint()" in current_source_line(live)

    type_command(live, "p x")
    wait_log(page, live, r"\(jaxdbg\) p x\s*Array\(\[1\., 2\., 3\.\], dtype=float32\)")
    # pp of a pytree draws its leaves' summaries; --full pretty-prints every element: a
    # dict too wide for one line gets a line per key
    type_command(live, "pp {'x': x, 'y': y}")
    wait_log(page, live, r"\(jaxdbg\) pp .*\s*.*2 arrays · 6 float32 · 24 B.*\n├── \['x'\]  Array  float32\[3\]")
    type_command(live, "pp {'x': x, 'y': y} --full")
    wait_log(
        page,
        live,
        r"\(jaxdbg\) pp .* --full\s*\{'x': Array\(\[1\., 2\., 3\.\], dtype=float32\),\n"
        r" 'y': Array\(\[2\., 4\., 6\.\], dtype=float32\)\}",
    )
    # the locals table shows the frame's arrays
    locals_text = live.locator(".jaxdbg-locals").inner_text()
    assert "float32[3]" in locals_text, locals_text  # the engine's one shape notation
    assert "result 12.0" not in cell_output_text(page, 2), "the cell must still be paused"
    save_screenshot(page, f"flow_{server.app}_paused")

    live.get_by_role("button", name="Continue", exact=True).click()
    out = wait_for_output_text(page, 2, "result 12.0", timeout_s=60)
    static = cell(page, 2).locator(".jaxdbg-static")
    static.first.wait_for(state="visible", timeout=30_000)
    summary = static.first.inner_text()
    assert "Stopped at" in summary and "in inner" in summary, summary
    assert "(jaxdbg) pp {'x': x, 'y': y}" in summary and "Continued." in summary, summary
    assert cell(page, 2).get_by_role("button", name="Continue", exact=True).count() == 0, out
    save_screenshot(page, f"flow_{server.app}_continued")

    # Saving from the page, then nbconvert without a kernel, keeps the stop's summary.
    save_notebook(page)
    saved = server.root_dir / name
    html_path = tmp_path / "panel.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            str(saved),
            "--output",
            html_path.stem,
            "--output-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    converted = html_path.read_text()
    (ARTIFACTS / f"panel_{server.app}.html").write_text(converted)
    assert "jaxdbg-static" in converted
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", converted)
    assert "jaxdbg.breakpoint()" in converted  # the stop's line
    assert "(jaxdbg) p x" in converted and "Array([1., 2., 3.], dtype=float32)" in converted
    assert "result 12.0" in converted


QUIT_LINE = "jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped"


@pytest.mark.notebook7
def test_queued_cell_runs_after_continue_and_next_cell_after_quit(page, server):
    open_notebook(page, server, f"queued-{server.app}.ipynb", [SETUP_CELL, STOP_CELL, QUEUED_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    live = panel(page, 1)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)

    # A line half typed when a queued cell shows the panel too stays where it was typed:
    # the paused cell's view is not drawn again.
    live.evaluate("(el) => { el.jaxdbgTestMark = true; }")
    live.locator(".jaxdbg-input").fill("p y")
    run_cell(page, 2, wait=False)  # queued behind the paused cell
    waiting = wait_for_output_text(page, 2, "this cell waits: the kernel is paused at", 60)
    assert "queued cell ran" not in waiting, "the queued cell must wait for the paused one"
    panel(page, 2).wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    assert live.evaluate("(el) => el.jaxdbgTestMark === true"), "the paused cell's panel was drawn again"
    assert live.locator(".jaxdbg-input").input_value() == "p y"
    live.locator(".jaxdbg-input").press("Enter")  # the panel still answers with a cell queued
    wait_log(page, live, r"Array\(\[2\., 4\., 6\.\], dtype=float32\)")
    wait_log(page, panel(page, 2), r"Array\(\[2\., 4\., 6\.\], dtype=float32\)")  # one stop, two views

    live.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    wait_for_output_text(page, 2, "queued cell ran", timeout_s=60)
    assert panel(page, 2).count() == 0  # the queued cell's view became the stop's summary too
    assert "queued cell ran" not in cell_output_text(page, 1)
    assert "result 12.0" not in cell_output_text(page, 2)
    page.wait_for_function(
        "() => { const c = window.jupyterapp.shell.currentWidget.content.widgets;"
        " return c[2].model.executionCount !== null && c[1].model.executionCount !== null; }"
    )
    counts = execution_counts(page)
    assert counts[0] < counts[1] < counts[2], counts

    # Quit: the cell ends with one line instead of XLA's callback traceback, and the
    # kernel runs the next cell as usual.
    run_cell(page, 1, wait=False)
    live = panel(page, 1)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    live.get_by_role("button", name="Quit", exact=True).click()
    wait_for_output_text(page, 1, QUIT_LINE, timeout_s=60)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.executionState !== 'running'",
        timeout=60_000,
    )
    errors = [o for o in cell_outputs(page, 1) if o["output_type"] == "error"]
    assert [(e["ename"], e["traceback"]) for e in errors] == [("DebuggerQuit", [QUIT_LINE])], errors
    text = cell_output_text(page, 1)
    assert "result 12.0" not in text and "Traceback" not in text and "CpuCallback" not in text, text
    assert "Quit: the computation was stopped." in cell(page, 1).locator(".jaxdbg-static").inner_text()
    before = execution_counts(page)[2]
    run_cell(page, 2)
    assert execution_counts(page)[2] > before
    assert wait_for_output_text(page, 2, "queued cell ran").strip() == "queued cell ran"
    save_screenshot(page, f"flow_{server.app}_quit")


PMAP_CELL = """\
def per_device(x):
    y = x * 10
    jaxdbg.breakpoint()
    return y

out = jax.pmap(per_device)(jnp.arange(4.0))
print("pmap result", out.tolist())
"""

VMAP_CELL = """\
def per_example(v):
    scaled = v * 10
    jaxdbg.breakpoint()
    return scaled.sum()

print("vmap result", jax.vmap(per_example)(jnp.arange(6.0).reshape(3, 2)).tolist())
"""


# The device of a live panel (one with a Continue button) not served yet, or null.
NEW_LIVE_PANEL_DEVICE = """seen => {
  for (const p of document.querySelectorAll('.jaxdbg-panel')) {
    const live = [...p.querySelectorAll('button')].some(b => b.innerText.trim() === 'Continue');
    const m = p.innerText.match(/device (\\d)/);
    if (live && m && !seen.includes(m[1])) return m[1];
  }
  return null;
}"""


def test_pmap_panels_one_at_a_time_and_vmap_skip(lab_page, lab_server):
    """Stops on XLA threads (pmap) and a batch skipped from the Skip batch button."""
    page = lab_page
    open_notebook(page, lab_server, "devices.ipynb", [SETUP_CELL, PMAP_CELL, VMAP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    seen_devices: list[str] = []
    for _ in range(4):
        device = page.wait_for_function(NEW_LIVE_PANEL_DEVICE, arg=seen_devices, timeout=PANEL_TIMEOUT_MS).json_value()
        live = panel(page, 1)
        assert live.count() == 1, "one live panel at a time"
        seen_devices.append(device)
        type_command(live, "p y")
        wait_log(page, live, r"\(jaxdbg\) p y\s*Array\(\d+\., dtype=float32\)")
        live.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "pmap result [0.0, 10.0, 20.0, 30.0]", timeout_s=60)
    assert sorted(seen_devices) == ["0", "1", "2", "3"], seen_devices

    run_cell(page, 2, wait=False)
    live = panel(page, 2)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    assert "batch 1/3" in live.locator(".jaxdbg-banner").inner_text()
    live.get_by_role("button", name="Skip batch").click()
    wait_for_output_text(page, 2, "vmap result [10.0, 50.0, 90.0]", timeout_s=60)
    assert cell(page, 2).get_by_role("button", name="Continue", exact=True).count() == 0
    save_screenshot(page, "panel_in_lab_devices")
