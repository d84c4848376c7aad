"""The print log's routing of rows to cells, without a kernel."""

from __future__ import annotations

from types import SimpleNamespace

from jaxdbg.capture.prints import CallSite, PrintRow
from jaxdbg_widgets.print_log import log as print_log


def _row(text: str, device: int) -> PrintRow:
    return PrintRow(text, CallSite("<cell>", 3, "per_device", device=device))


def test_a_row_arriving_while_the_cells_log_finishes_joins_that_log(monkeypatch):
    # pmap devices print on XLA threads, possibly while post_run_cell is finishing the
    # cell's log; such a row must go to that log, not open a second one.
    logs = print_log.PrintLogs(shell=SimpleNamespace())
    logs.pre_run_cell()
    logs.add(_row("first", 0))
    [log] = logs.logs
    finish = log.finish

    def finish_while_a_device_prints() -> None:
        logs.add(_row("late", 5))
        finish()

    monkeypatch.setattr(log, "finish", finish_while_a_device_prints)
    logs.post_run_cell(SimpleNamespace(execution_count=4))
    assert logs.logs == [log]
    assert [row.text for row in log.rows] == ["first", "late"]
    assert log.title == "In[4] print log"
    assert "late" in log.plain_summary()
