"""JupyterLab, its kernel and ipywidgets work in headless Chromium: the base every browser test builds on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support.lab_helpers import (
    cell,
    cell_output_text,
    open_notebook,
    run_all_cells,
    save_screenshot,
    wait_for_output_text,
)

pytestmark = pytest.mark.browser

BUTTON_CELL = """\
import ipywidgets as widgets
out = widgets.Output()
button = widgets.Button(description="Press me")

@out.capture()
def on_click(_):
    print("clicked")

button.on_click(on_click)
display(widgets.VBox([button, out]))
"""


def test_lab_runs_cells_and_renders_widgets(lab_page, lab_server):
    page = lab_page
    open_notebook(
        page,
        lab_server,
        "smoke.ipynb",
        [
            "print(6*7)",
            BUTTON_CELL,
            "import sys; print(sys.prefix)",
        ],
    )
    run_all_cells(page)

    assert "42" in cell_output_text(page, 0)
    # The kernel Lab started is this test run's venv, not some other python3 kernelspec.
    kernel_prefix = cell_output_text(page, 2).strip()
    assert Path(kernel_prefix).resolve() == Path(sys.prefix).resolve(), kernel_prefix

    button = cell(page, 1).get_by_role("button", name="Press me")
    button.click()
    wait_for_output_text(page, 1, "clicked")
    save_screenshot(page, "lab_smoke")
