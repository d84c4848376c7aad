"""notebooks/printing.ipynb runs top to bottom in a real kernel, and each cell's print log
holds the rows the notebook's text promises: locations, batch and device labels, order,
and the folded count of a long scan."""

from __future__ import annotations

import re

import pytest

from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS
from support.notebook_run import CellRun, cell_with, run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice, pytest.mark.timeout(400)]

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def runs() -> list[CellRun]:
    return run_notebook("printing.ipynb", env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS})


def log_rows(run: CellRun) -> list[tuple[str, str, str]]:
    """(location, batch / device label, text) of every row of the cell's print logs."""
    logs = [o["data"] for o in run.outputs if "text/plain" in o.get("data", {})
            and o["data"]["text/plain"].startswith("jaxdbg print log (")]
    rows = []
    for log in logs:
        for line in log["text/plain"].splitlines()[1:]:
            where, text = line.split("| ", 1)
            location, _, label = where.strip().partition("  ")
            rows.append((location, label.strip(), text))
    return rows


def static_logs(run: CellRun) -> list[dict]:
    """The cell's print logs; each must have become static output (no widget left)."""
    logs = [o["data"] for o in run.outputs if "jaxdbg-print-log" in o.get("data", {}).get("text/html", "")
            or WIDGET in o.get("data", {})]
    assert logs and all(WIDGET not in data for data in logs), run.outputs
    return logs


def test_rows_carry_the_line_that_printed_them(runs):
    run = cell_with(runs, "def step(x)")
    assert len(static_logs(run)) == 1
    assert log_rows(run) == [
        (f"{run.name}:{run.line_of('jaxdbg.print(')}", "", "x = [0. 1. 2.]"),
        (f"{run.name}:{run.line_of('jax.debug.print(')}", "", "sin(x) = [0.         0.84147096 0.9092974 ]"),
    ]


def test_ordered_prints_keep_their_order(runs):
    run = cell_with(runs, "def doubling(x)")
    rows = log_rows(run)
    assert (f"{run.name}:{run.line_of('unordered')}", "", "unordered: start with 1.0") in rows
    ordered = [text for location, _, text in rows if location == f"{run.name}:{run.line_of('ordered=True')}"]
    assert ordered == ["ordered 0: 2.0", "ordered 1: 4.0", "ordered 2: 8.0", "ordered 3: 16.0"]


def test_vmap_rows_name_their_batch_element(runs):
    run = cell_with(runs, "def normalise(v)")
    line = f"{run.name}:{run.line_of('jaxdbg.print(')}"
    assert sorted(log_rows(run)) == [(line, "batch 1/3", "row total 3.0"),
                                     (line, "batch 2/3", "row total 7.0"),
                                     (line, "batch 3/3", "row total 11.0")]


def test_pmap_rows_name_their_device(runs):
    run = cell_with(runs, "@jax.pmap")
    assert len(static_logs(run)) == 1, run.outputs  # one log, even for rows of XLA threads
    line = f"{run.name}:{run.line_of('jax.debug.print(')}"
    assert sorted(log_rows(run)) == [(line, f"device {d}", f"shard holds {d}.0") for d in range(8)]
    assert "[ 0. 10. 20. 30. 40. 50. 60. 70.]" in run.text


def test_a_long_scan_is_folded_and_keeps_every_row(runs):
    run = cell_with(runs, "lax.scan(body")
    [log] = static_logs(run)
    assert log["text/plain"].startswith(f"jaxdbg print log ({run.name} print log, 10,000 rows)")
    line = f"{run.name}:{run.line_of('jax.debug.print(')}"
    totals = [0]
    for i in range(1, 10_000):
        totals.append(totals[-1] + i)
    assert log_rows(run) == [(line, "", f"step {i} total {t}") for i, t in enumerate(totals)]
    html = log["text/html"]
    assert "9,960 more rows" in html and "All 10,000 rows as text" in html
    shown = re.sub(r"<details>.*</details>", "", html, flags=re.S)  # the table, not the full text
    assert "step 19 total 190<" in shown and "step 9980 total" in shown
    assert "step 20 total" not in shown and "step 9979 total" not in shown
    assert "sum: 49995000" in run.text


def test_print_off_and_on(runs):
    off = cell_with(runs, "%jaxdbg print off")
    step = cell_with(runs, "def step(x)")
    log_line = f"{step.name}:{step.line_of('jaxdbg.print(')}"
    assert log_rows(off) == [(log_line, "", "x = [0. 1. 2.]")]
    stdout = "".join(o["text"] for o in off.outputs if o["output_type"] == "stream")
    assert "sin(x) = [0.         0.84147096 0.9092974 ]" in stdout
    on = cell_with(runs, "%jaxdbg print on")
    assert [text for _, _, text in log_rows(on)] == ["x = [0. 1. 2.]",
                                                     "sin(x) = [0.         0.84147096 0.9092974 ]"]
    assert "sin(x)" not in "".join(o["text"] for o in on.outputs if o["output_type"] == "stream")
