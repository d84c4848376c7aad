"""The panel's buttons show the command table's help as their tooltips, in a real page."""

from __future__ import annotations

import pytest

from jaxdbg.engine.command_table import TABLE
from support.lab_helpers import EXTENSION_SETUP_CELL, live_panel, open_notebook, run_cell, wait_for_output_text

pytestmark = pytest.mark.browser

STOP_CELL = """\
def f(x):
    jaxdbg.breakpoint()
    return x * 2

print("result", jax.jit(f)(1.0))
"""


def test_button_tooltips_are_the_commands_help(page, lab_server):
    open_notebook(page, lab_server, "tooltips.ipynb", [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)

    def title(name: str) -> str:
        return panel.get_by_role("button", name=name, exact=True).get_attribute("title")

    assert title("Continue") == f"{TABLE.get('continue').summary} (F8)"
    assert title("Up").startswith(TABLE.get("up").summary)
    assert title("Quit").startswith(TABLE.get("quit").summary)
    assert title("Continue all") == TABLE.get("continue").sub_word("all").summary
    assert title("Disable").startswith(TABLE.get("disable").summary) and "stays paused" in title("Disable")
    assert title("Ignore").startswith(TABLE.get("ignore").summary)
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 2.0", timeout_s=60)
