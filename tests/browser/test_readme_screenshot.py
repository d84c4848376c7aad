"""The picture of the panel that the README and the docs show, taken from a real stop.

JupyterLab runs a jitted function that stops at ``jaxdbg.breakpoint()``; once the live
panel is up (source with the current line marked, the frames, the locals) the test
types ``p`` of a local, waits for its value in the console and saves the cell, code
and panel, to test-artifacts/panel-paused.png. docs/assets/panel-paused.png is a copy
of that file (CONTRIBUTING.md says how to refresh it).
"""

from __future__ import annotations

import re

import pytest

from support.lab_helpers import (
    ARTIFACTS,
    EXTENSION_SETUP_CELL,
    cell,
    live_panel,
    open_notebook,
    run_cell,
    type_command,
    wait_log,
)

pytestmark = pytest.mark.browser

SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = """\
@jax.jit
def predict(w, x):
    hidden = jnp.tanh(x @ w)
    scores = hidden.sum(axis=1)
    jaxdbg.breakpoint()
    return jax.nn.softmax(scores)

w = jnp.arange(12.0).reshape(4, 3) / 10 - 0.5
x = jnp.array([[1.0, 0.5, -0.5, 0.2], [0.3, -1.0, 0.8, 0.1]])
predict(w, x)
"""

PANEL_TIMEOUT_MS = 120_000  # the first jit compile in a fresh kernel is slow on 2 cores
SCREENSHOT = ARTIFACTS / "panel-paused.png"


def test_panel_paused_in_a_jitted_function(lab_page, lab_server):
    page = lab_page
    page.set_viewport_size({"width": 1200, "height": 1400})  # the whole cell on screen
    open_notebook(page, lab_server, "readme-screenshot.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)  # blocks at the breakpoint

    panel = live_panel(page, 1).filter(has=page.get_by_role("button", name="Continue", exact=True))
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    banner = panel.locator(".jaxdbg-banner").inner_text()
    assert re.search(r"Stopped at In\[\d+\]:5 in predict", banner), banner
    assert "jaxdbg.breakpoint()" in panel.locator(".jaxdbg-source .jaxdbg-current").inner_text()
    locals_text = panel.locator(".jaxdbg-locals").inner_text()
    assert "hidden" in locals_text and "float32[2,3]" in locals_text.replace(" ", ""), locals_text

    type_command(panel, "p scores")
    wait_log(page, panel, r"\(jaxdbg\) p scores\s*Array\(\[-1\.25\d*\s*, +0\.56\d*\], dtype=float32\)")
    page.wait_for_timeout(300)  # let the log's scroll to the newest entry settle before the picture

    ARTIFACTS.mkdir(exist_ok=True)
    cell(page, 1).screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000  # a picture, not an empty element

    panel.get_by_role("button", name="Continue", exact=True).click()
    cell(page, 1).locator(".jaxdbg-static").first.wait_for(state="visible", timeout=60_000)
