"""A page reloaded while a cell is paused, without saving first (JupyterLab 4, Notebook 7).

The reloaded page has no output of the paused cell. A cell run from it waits behind the
paused one and shows, in its own output, why it waits and the stop's live panel, which
answers as before; Ctrl+S typed in that panel's console saves the notebook; Continue
ends the stop and the waiting cell runs. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    JITTED_STOP_CELL,
    _poll,
    cell,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    type_command,
    wait_for_output_text,
    wait_log,
)

pytestmark = pytest.mark.browser

SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = JITTED_STOP_CELL

LATER_CELL = 'print("after the stop")'

PAGE_READY_JS = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!(w && w.context && w.context.isReady && k && (k.status === 'busy' || k.status === 'idle')); }"""

DIRTY_JS = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"


@pytest.mark.notebook7
def test_reload_without_saving_then_run_a_cell(page, server):
    name = f"unsaved-{server.app}.ipynb"
    open_notebook(page, server, name, [SETUP_CELL, STOP_CELL, LATER_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    live_panel(page, 1).wait_for(state="visible", timeout=120_000)

    page.reload()  # the notebook on disk has no output of the paused cell
    _poll(page, lambda: page.evaluate(PAGE_READY_JS), 120, "the reloaded notebook")
    assert page.locator(".jaxdbg-panel").count() == 0

    run_cell(page, 2, wait=False)
    text = wait_for_output_text(page, 2, "the kernel is paused at Stopped at In[2]:3 in inner", 60)
    assert "interrupt the kernel" in text
    panel = live_panel(page, 2)
    panel.wait_for(state="visible", timeout=60_000)
    assert "Stopped at In[2]:3 in inner" in panel.locator(".jaxdbg-banner").inner_text()
    type_command(panel, "p alpha_value")
    wait_log(page, panel, r"Array\(\[0\., 2\., 4\.\]")
    save_screenshot(page, f"reload_unsaved_{server.app}")

    # Ctrl+S in the console reaches the notebook: it is saved
    assert page.evaluate(DIRTY_JS)
    panel.locator(".jaxdbg-input").press("Control+s")
    page.wait_for_function(f"() => !({DIRTY_JS})()", timeout=30_000)
    assert "the kernel is paused at" in (server.root_dir / name).read_text()
    # Esc reaches it too: the notebook leaves the console for command mode
    panel.locator(".jaxdbg-input").press("Escape")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.mode === 'command'")

    panel.locator(".jaxdbg-button", has_text="Continue").first.click()
    wait_for_output_text(page, 2, "after the stop", 60)
    assert cell(page, 2).locator(".jaxdbg-static").count() == 1  # the stop's summary stays there
