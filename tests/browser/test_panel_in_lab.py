"""The debugger panel in a real JupyterLab page, used the way a person uses it.

A notebook loads the extension and runs a jitted function that stops at
``jaxdbg.breakpoint()`` two frames deep. The test clicks a frame, types expressions
into the box, presses Continue, then saves the notebook from Lab and converts it with
nbconvert (no kernel) to check that the stop's static summary is kept. Screenshots of
the paused panel and of the finished cell go to test-artifacts/.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from lab_helpers import (
    ARTIFACTS,
    cell,
    cell_output_text,
    open_notebook,
    run_cell,
    save_screenshot,
    wait_for_output_text,
)

pytestmark = pytest.mark.browser

SETUP_CELL = """\
%load_ext jaxdbg
import jax, jax.numpy as jnp
import jaxdbg
"""

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

PANEL_TIMEOUT_MS = 120_000  # the first jit compile in a fresh kernel is slow on 2 cores


def panel(page, index: int):
    """The live debugger panel in cell ``index`` (finished panels lose their buttons)."""
    return cell(page, index).locator(".jaxdbg-panel").filter(
        has=page.get_by_role("button", name="Continue", exact=True))


def current_source_line(page, index: int) -> str:
    return cell(page, index).locator(".jaxdbg-source .jaxdbg-current").inner_text()


def type_expression(page, index: int, text: str) -> None:
    box = cell(page, index).locator(".jaxdbg-panel .jaxdbg-input")
    box.click()
    box.fill(text)
    box.press("Enter")


def log_text(page, index: int) -> str:
    return " ".join(cell(page, index).locator(".jaxdbg-panel .jaxdbg-entry").all_inner_texts())


def wait_log(page, index: int, pattern: str, timeout_s: float = 30) -> str:
    """Wait until the panel's log shows ``pattern`` (a regex); the whole log text."""
    deadline_ms = int(timeout_s * 1000)
    waited = 0
    while True:
        text = log_text(page, index)
        if re.search(pattern, text):
            return text
        if waited >= deadline_ms:
            raise AssertionError(f"{pattern!r} not in the panel log: {text!r}")
        page.wait_for_timeout(100)
        waited += 100


def save_notebook(page) -> None:
    """Save from Lab, as Ctrl+S does, and wait until the model is clean."""
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)


def execution_counts(page) -> list:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map("
        " c => c.model.type === 'code' ? c.model.executionCount : null)")


def test_panel_click_type_continue_save_and_convert(lab_page, lab_server, tmp_path):
    page = lab_page
    page.set_viewport_size({"width": 1400, "height": 1500})  # the whole panel on screen
    open_notebook(page, lab_server, "panel.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    assert "Error" not in cell_output_text(page, 0), cell_output_text(page, 0)
    run_cell(page, 1, wait=False)  # blocks at the breakpoint

    live = panel(page, 1)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    banner = live.locator(".jaxdbg-banner").inner_text()
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", banner), banner
    assert "jaxdbg.breakpoint()" in current_source_line(page, 1)

    # The frame list: 0 inner, 1 outer, 2 <module>. Click outer.
    frames = live.locator(".jaxdbg-frame")
    assert frames.count() == 3, frames.all_inner_texts()
    assert [f.split() for f in frames.all_inner_texts()][1][:2] == ["1", "outer"]
    frames.nth(1).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jaxdbg-panel .jaxdbg-source .jaxdbg-current')]"
        ".some(e => e.textContent.includes('return inner(x + 1)'))")
    assert "return inner(x + 1)" in current_source_line(page, 1)
    assert "in outer" in live.locator(".jaxdbg-source-heading").inner_text()

    frames.nth(0).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jaxdbg-panel .jaxdbg-source .jaxdbg-current')]"
        ".some(e => e.textContent.includes('jaxdbg.breakpoint()'))")

    type_expression(page, 1, "p x")
    wait_log(page, 1, r"\(jaxdbg\) p x\s*Array\(\[1\., 2\., 3\.\], dtype=float32\)")
    type_expression(page, 1, "p y")
    wait_log(page, 1, r"\(jaxdbg\) p y\s*Array\(\[2\., 4\., 6\.\], dtype=float32\)")
    # the locals table shows the frame's arrays
    locals_text = live.locator(".jaxdbg-locals").inner_text()
    assert "float32[3]" in locals_text, locals_text  # the engine's one shape notation
    assert "result 12.0" not in cell_output_text(page, 1), "the cell must still be paused"
    save_screenshot(page, "panel_in_lab_paused")

    live.get_by_role("button", name="Continue", exact=True).click()
    out = wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    static = cell(page, 1).locator(".jaxdbg-static")
    static.first.wait_for(state="visible", timeout=30_000)
    summary = static.first.inner_text()
    assert "Stopped at" in summary and "in inner" in summary, summary
    assert "(jaxdbg) p y" in summary and "Continued." in summary, summary
    assert cell(page, 1).get_by_role("button", name="Continue", exact=True).count() == 0, out
    save_screenshot(page, "panel_in_lab_continued")

    # Saving from Lab, then nbconvert without a kernel, keeps the stop's summary.
    save_notebook(page)
    saved = lab_server.root_dir / "panel.ipynb"
    html_path = tmp_path / "panel.html"
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(saved),
         "--output", html_path.stem, "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    converted = html_path.read_text()
    (ARTIFACTS / "panel_in_lab.html").write_text(converted)
    assert "jaxdbg-static" in converted
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", converted)
    assert "jaxdbg.breakpoint()" in converted  # the stop's line
    assert "(jaxdbg) p y" in converted and "Array([2., 4., 6.], dtype=float32)" in converted
    assert "result 12.0" in converted


QUEUED_CELL = 'print("queued cell ran")'


def test_cell_queued_while_paused_runs_after_continue(lab_page, lab_server):
    page = lab_page
    open_notebook(page, lab_server, "queued.ipynb", [SETUP_CELL, STOP_CELL, QUEUED_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    live = panel(page, 1)
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)

    run_cell(page, 2, wait=False)  # queued behind the paused cell
    type_expression(page, 1, "p y")  # the panel still answers with a cell queued
    wait_log(page, 1, r"Array\(\[2\., 4\., 6\.\], dtype=float32\)")
    assert cell_output_text(page, 2) == "", "the queued cell must wait for the paused one"

    live.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    wait_for_output_text(page, 2, "queued cell ran", timeout_s=60)
    assert "queued cell ran" not in cell_output_text(page, 1)
    assert "result 12.0" not in cell_output_text(page, 2)
    page.wait_for_function(
        "() => { const c = window.jupyterapp.shell.currentWidget.content.widgets;"
        " return c[2].model.executionCount !== null && c[1].model.executionCount !== null; }")
    counts = execution_counts(page)
    assert counts[0] < counts[1] < counts[2], counts


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
        device = page.wait_for_function(NEW_LIVE_PANEL_DEVICE, arg=seen_devices,
                                        timeout=PANEL_TIMEOUT_MS).json_value()
        live = panel(page, 1)
        assert live.count() == 1, "one live panel at a time"
        seen_devices.append(device)
        type_expression(page, 1, "p y")
        wait_log(page, 1, r"\(jaxdbg\) p y\s*Array\(\d+\., dtype=float32\)")
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
