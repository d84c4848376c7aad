"""A paused stop stays reachable in a real JupyterLab page after Clear Output.

Clear Output removes the panel's view but sends the kernel nothing; the panel's
browser code reports that its last view went away, and the paused stop shows the
panel in the cell again, where Continue ends the stop as usual.
"""

from __future__ import annotations

import pytest

from support.lab_helpers import EXTENSION_SETUP_CELL, cell, open_notebook, run_cell, wait_for_output_text

pytestmark = pytest.mark.browser

SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = """\
@jax.jit
def f(x):
    jaxdbg.breakpoint()
    return x * 3

print("result", f(jnp.ones(2)).tolist())
"""

PANEL_TIMEOUT_MS = 120_000  # the first jit compile in a fresh kernel is slow on 2 cores


def live_panel(page, index: int):
    return (
        cell(page, index).locator(".jaxdbg-panel").filter(has=page.get_by_role("button", name="Continue", exact=True))
    )


def test_clear_output_while_paused_shows_the_panel_again(lab_page, lab_server):
    page = lab_page
    open_notebook(page, lab_server, "cleared.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)  # blocks at the breakpoint
    live_panel(page, 1).wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)

    page.evaluate("""() => { const app = window.jupyterapp; const nb = app.shell.currentWidget.content;
        nb.activeCellIndex = 1; nb.deselectAll();
        return app.commands.execute('notebook:clear-cell-output'); }""")
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[1].querySelectorAll('.jaxdbg-panel').length === 0"
    )

    # The stop still waits for an answer: its panel comes back in the same cell.
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=60_000)
    panel.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "result [3.0, 3.0]", timeout_s=60)


def test_reloaded_page_gets_the_paused_panel_back(lab_page, lab_server):
    """Saved while paused, then reloaded: the page asks the kernel for its widgets
    (kernel_info, comm_info, each model's state) and the panel works again."""
    page = lab_page
    open_notebook(page, lab_server, "reloaded.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    live_panel(page, 1).wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    page.reload(wait_until="domcontentloaded")
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    panel.get_by_role("button", name="Continue", exact=True).click()
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        timeout=60_000,
    )
