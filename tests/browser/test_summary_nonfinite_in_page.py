"""The summary a stop leaves in the notebook, read in a real page (JupyterLab 4 and
Notebook 7) after Continue: a small local drawn whole and a 64 x 32 local the thumbnail
samples both say the whole array's range, their NaN / Inf counts and where those are;
the two watch rows of the summary are styled alike under the notebook's table rules."""

from __future__ import annotations

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
    wait_log,
)
from support.nonfinite_locals import STOP_CELL, finite_ranges

pytestmark = pytest.mark.browser

# Computed styles of each watch row, its cells and its <code>, as the page draws them.
WATCH_STYLES = """(root) => [...root.querySelectorAll('.jaxdbg-static table.jaxdbg-watches tr')].map(tr => ({
    row: getComputedStyle(tr).backgroundColor,
    cells: [...tr.querySelectorAll('td')].map(td => [getComputedStyle(td).textAlign,
                                                   getComputedStyle(td).backgroundColor,
                                                   getComputedStyle(td).borderTopStyle]),
    code: [...tr.querySelectorAll('code')].map(c => [getComputedStyle(c).backgroundColor,
                                                    getComputedStyle(c).paddingLeft]),
}))"""


def test_the_summary_after_continue_counts_and_places_each_nan_and_inf(page, server):
    ranges = finite_ranges()
    open_notebook(page, server, f"summary-nonfinite-{server.app}.ipynb", [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    type_command(panel, "watch big.shape[0]")  # a number: a plot
    type_command(panel, "watch small")  # an array: its statistics
    wait_log(page, panel, r"2: small = ")
    panel.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "done nan", timeout_s=120)
    summary = cell(page, 1).locator(".jaxdbg-static").first
    summary.wait_for(timeout=60_000)
    text = " ".join(summary.inner_text().split())  # the page draws runs of spaces as one
    save_screenshot(page, f"summary-nonfinite-{server.app}")
    assert f"small float32[4,8] {ranges['small']} nan=1 +inf=1 (nan at [1, 2], +inf at [3, 7])" in text, text
    assert (
        f"big float32[64,32] sampled (evenly spaced): 32 of 64 rows; every NaN / Inf cell kept "
        f"{ranges['big']} nan=1 +inf=1 (nan at [41, 3], +inf at [57, 20])"
    ) in text, text

    rows = summary.evaluate(WATCH_STYLES)
    assert len(rows) == 2, rows
    first, second = rows
    assert first["row"] == second["row"], rows  # neither row shaded apart
    assert [c[0] for c in first["cells"] + second["cells"]] == ["left"] * 8, rows
    assert first["cells"] == second["cells"] and first["code"] == second["code"], rows
