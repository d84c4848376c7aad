"""The panel's Replay, Step, Next and Return buttons in real pages (JupyterLab 4 and
Notebook 7): a stop in a jitted function is replayed, stepped into a helper, a value that
exists only there is printed, and Continue brings the panel back to the stop. The
replay's frame marks and buttons read in each theme (JupyterLab: light, dark and high
contrast, the page switched live as a user does; Notebook 7: light)."""

from __future__ import annotations

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    WCAG_AA,
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

STOP_CELL = """\
def centre(v):
    mid = v - v.mean()
    return mid * 2

@jax.jit
def f(x):
    y = centre(x)
    jaxdbg.breakpoint()
    return y.sum() + 1

print("result", f(jnp.arange(4.0)))
"""

PANEL_TIMEOUT_MS = 120_000  # the first jit compile in a fresh kernel is slow on 2 cores


def _button(panel, name: str):
    return panel.get_by_role("button", name=name, exact=True)


def test_replay_step_next_return_buttons(page, server):
    page.set_viewport_size({"width": 1400, "height": 1500})
    open_notebook(page, server, f"replay-{server.app}.ipynb", [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)  # blocks at the breakpoint
    panel = live_panel(page, 1)
    _button(panel, "Continue").wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    wait_heading(page, panel, r" in f$")
    assert _button(panel, "Replay").is_visible() and not _button(panel, "Step").is_visible()

    _button(panel, "Replay").click()
    wait_heading(page, panel, r":7 in f\s+\[replay\]$")
    wait_log(page, panel, r"This runs your Python again")
    assert _button(panel, "Step").is_visible() and not _button(panel, "Replay").is_visible()
    marks = panel.locator(".jaxdbg-frame-replay")
    assert marks.count() == 1 and "[replay]" in marks.first.inner_text()
    for theme in each_theme(page, server):  # switched live, as a user does
        for where in (".jaxdbg-frame-replay", ".jaxdbg-step"):  # the replay's own marks and buttons
            found = text_contrast(page, where)
            assert found and not [(r["text"], r["ratio"]) for r in found if r["ratio"] < WCAG_AA], (theme, found)
        save_screenshot(page, f"replay_{server.app}_{theme}_started")

    _button(panel, "Step").click()  # into centre
    wait_heading(page, panel, r":2 in centre\s+\[replay\]$")
    _button(panel, "Next").click()
    wait_heading(page, panel, r":3 in centre\s+\[replay\]$")
    type_command(panel, "p mid")
    wait_log(page, panel, r"\(jaxdbg\) p mid\s*Array\(\[-1\.5, -0\.5,  0\.5,  1\.5\], dtype=float32\)")
    assert panel.locator(".jaxdbg-frame-replay").count() == 2
    _button(panel, "Return").click()
    wait_log(page, panel, r"--Return-- Array\(\[-3\., -1\.,  1\.,  3\.\], dtype=float32\)")
    save_screenshot(page, f"replay_{server.app}_stepped")

    _button(panel, "Continue").click()  # on to the stop's line, in the replay
    wait_heading(page, panel, r":8 in f\s+\[replay\]$")
    _button(panel, "Continue").click()  # the replay's end: back at the stop
    wait_log(page, panel, r"The replay of f returned Array\(1\., dtype=float32\)")
    wait_heading(page, panel, r":8 in f$")
    assert panel.locator(".jaxdbg-frame-replay").count() == 0 and _button(panel, "Replay").is_visible()

    _button(panel, "Continue").click()
    wait_for_output_text(page, 1, "result 1.0", timeout_s=60)
