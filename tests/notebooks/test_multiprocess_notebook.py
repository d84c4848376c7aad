"""notebooks/multiprocess.ipynb runs top to bottom under nbclient, as CI's docs build runs
it: the notebook is process 0 of a 4-process jax.distributed job whose other processes it
launches, and the stop of process 2 is answered at the notebook by the commands its text
tells the reader to type (JAXDBG_COMMANDS)."""

from __future__ import annotations

import json
import re

import pytest

from support.notebook_run import NOTEBOOKS, run_with_nbclient

pytestmark = [pytest.mark.kernel, pytest.mark.distributed, pytest.mark.timeout(400)]

COMMANDS = ["p y", "locals", "continue all"]


def _markdown() -> str:
    cells = json.loads((NOTEBOOKS / "multiprocess.ipynb").read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())


def test_the_notebook_tells_the_reader_the_commands_answered():
    text = _markdown()
    assert "type `p y`" in text and "then `locals`, then `continue all`" in text
    assert "`process 2/4 · device 4`" in text


@pytest.fixture(scope="module")
def cells() -> list[str]:
    pytest.importorskip("nbclient")
    return run_with_nbclient("multiprocess.ipynb", "; ".join(COMMANDS), timeout=300)


def _stop_cell(cells: list[str]) -> str:
    return next(cell for cell in cells if "Stopped at" in cell)


def test_the_stop_of_process_2_is_served_at_the_notebook(cells):
    stop = _stop_cell(cells)
    banners = re.findall(r"Stopped at \S+/step\.py:(\d+) in body \(([^)]*)\)", stop)
    assert len(banners) == 1, stop  # continue all passed device 5's stop
    line, where = banners[0]
    assert line == "13" and "process 2/4 · device 4" in where, stop
    assert "(jaxdbg) p y\nArray([16., 18.], dtype=float32)" in stop
    shown = stop.split("(jaxdbg) locals")[1].split("(jaxdbg)")[0]
    assert "block" in shown and "[process 2/4 · device 4]" in shown
    assert "continued past 1 more stop" in stop
    assert "ran out" not in "".join(cells)  # every stop was answered by the script


def test_every_process_prints_at_the_notebook(cells):
    stop = _stop_cell(cells)
    rows = re.findall(r"step\.py:12  process (\d)/4 · device (\d)  \| y = ", stop)
    assert sorted(rows) == [(str(d // 2), str(d)) for d in range(8)], stop
    assert "process 0: total [112. 128.]" in stop


def test_the_launched_processes_end_with_the_job(cells):
    assert "{1: 0, 2: 0, 3: 0}" in cells[-1] and "process 2: total [112. 128.]" in cells[-1]
