"""The print log without a kernel: routing rows to cells, the flush policy, what stays."""

from __future__ import annotations

import base64
from types import SimpleNamespace

from jaxdbg.capture.prints import CallSite, PrintRow
from jaxdbg_widgets.print_log import cells as print_log
from jaxdbg_widgets.print_log import static
from jaxdbg_widgets.print_log.buffer import FLUSH_INTERVAL_S, ROWS_PER_MESSAGE, SHOWN_ROWS, RowBuffer


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


def test_the_buffer_sends_each_row_once_and_the_head_until_the_page_has_it():
    rows = RowBuffer()
    for i in range(3):
        assert rows.add(_row(f"r{i}", 0)) == i + 1  # rows waiting
    first = rows.take()
    assert (first.offset, first.total, [r.text for r in first.new]) == (0, 3, ["r0", "r1", "r2"])
    assert first.head is not None and first.tail[-1][-1] == "r2"
    for i in range(3, SHOWN_ROWS + 5):
        rows.add(_row(f"r{i}", 0))
    second = rows.take()
    assert second.offset == 3 and len(second.new) == SHOWN_ROWS + 2 and second.head is not None
    rows.add(_row("last", 0))
    third = rows.take()
    assert third.head is None and [r.text for r in third.new] == ["last"]
    assert rows.take().new == []


def test_a_flush_is_due_after_the_interval_or_at_once_when_many_rows_wait():
    rows = RowBuffer()
    start = rows.last_flush
    assert not rows.due(start + 10)  # nothing waits
    rows.add(_row("one", 0))
    assert not rows.due(start + FLUSH_INTERVAL_S / 2)
    assert rows.due(start + FLUSH_INTERVAL_S)
    for _ in range(ROWS_PER_MESSAGE):
        rows.add(_row("many", 0))
    assert rows.due(start)
    rows.take()
    rows.finished = True
    rows.add(_row("after the cell", 0))  # its static output must be redrawn
    assert rows.due(start)


def test_a_flush_is_due_exactly_at_the_interval_whatever_the_clock_reads():
    # (t + 0.2) - t rounds below 0.2 for clocks such as this one; a flush must not wait.
    rows = RowBuffer()
    rows._started = rows.last_flush = 34637.42345953
    rows.add(_row("one", 0))
    assert rows.due(rows.last_flush + FLUSH_INTERVAL_S)


def test_the_static_output_and_a_saved_file_carry_the_same_text(tmp_path):
    log = print_log.PrintLog("In[2] print log")
    for i in range(2 * SHOWN_ROWS + 3):
        log.add(_row(f"value {i} <b>", i % 2))
    text = log.text()
    assert text.splitlines()[0].endswith("| value 0 <b>")
    assert log.save(tmp_path / "log.txt").read_text(encoding="utf-8") == text
    bundle = log._repr_mimebundle_()
    assert base64.b64encode(text.encode()).decode() in bundle["text/html"]
    assert "value 0 &lt;b&gt;" in bundle["text/html"] and "<b>" not in bundle["text/html"].split("Save log")[1]
    assert "… 3 more rows …" in bundle["text/html"]
    assert bundle["text/plain"] == "jaxdbg print log (In[2] print log, 43 rows)\n" + text
    assert static.text([]) == ""


def test_a_row_from_the_checkpoint_recompute_says_recomputed():
    from jaxdbg_widgets.print_log.buffer import row_cells

    forward = _row("x=1.0", 2)
    again = PrintRow("x=1.0", forward.site.recomputation())
    assert row_cells(forward)[1] == "device 2"
    assert row_cells(again)[1] == "device 2 · recomputed"
    assert "recomputed" in str(static._row_html(again))


def _job_row(text: str, process: int, device: int | None) -> PrintRow:
    return PrintRow(text, CallSite("<cell>", 3, "step", device=device, process=f"process {process}/2"))


def _live_filter(cells: list[list[str]], query: str) -> list[str]:
    """The page's filter box (print_log.js): a row stays when its cells, joined by a
    space, contain the query, ignoring case."""
    return [row[-1] for row in cells if query.strip().lower() in " ".join(row).lower()]


def test_the_filter_box_finds_the_rows_of_one_process_of_a_job():
    from jaxdbg_widgets.print_log.buffer import row_cells

    rows = [_job_row("loss 0", 0, 0), _job_row("loss 1", 1, 2), _job_row("loss 1b", 1, None), _row("single process", 0)]
    cells = [row_cells(r) for r in rows]
    assert cells[1][1] == "process 1/2 · device 2" and cells[2][1] == "process 1/2"
    assert _live_filter(cells, "Process 1/2") == ["loss 1", "loss 1b"]
    assert _live_filter(cells, "process 0/2 · device 0") == ["loss 0"]
    # The static output (no script) groups the rows by process as well.
    html = str(static._groups_html(rows))
    assert "Show only the rows by process" in html
    assert "process 1/2 · 2 rows" in html
