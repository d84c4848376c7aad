"""jaxdbg's notices: one prefix, one line, one sink."""

from __future__ import annotations

import contextlib
import io

from jaxdbg.runtime import notices


class FlushCounter(io.StringIO):
    def __init__(self):
        super().__init__()
        self.flushes = 0

    def flush(self):
        self.flushes += 1
        super().flush()


def test_a_notice_is_one_line_with_the_prefix_once_and_is_flushed():
    out = FlushCounter()
    notices.notice("the view failed", stream=out)
    notices.notice("already a line\n", stream=out)
    assert out.getvalue() == "jaxdbg: the view failed\njaxdbg: already a line\n"
    assert out.flushes == 2


def test_a_carried_notice_has_the_same_prefix():
    assert notices.phrase("continued past 2 more stops") == "jaxdbg: continued past 2 more stops"
    assert notices.PREFIX == "jaxdbg: "


def test_the_default_sink_is_stdout_as_it_is_at_the_time_of_the_notice():
    first, second = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(first):
        notices.notice("one")
    with contextlib.redirect_stdout(second):
        notices.notice("two")
    assert (first.getvalue(), second.getvalue()) == ("jaxdbg: one\n", "jaxdbg: two\n")


def test_a_frontend_sets_the_sink_for_a_while_and_a_stream_argument_still_wins():
    sink, own, stdout = io.StringIO(), io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout):
        with notices.sink(sink):
            assert notices.current_sink() is sink
            notices.notice("to the sink")
            notices.notice("to its own stream", stream=own)
            with notices.sink(None):  # None keeps the sink that is set
                notices.notice("still the sink")
        notices.notice("back on stdout")
    assert sink.getvalue() == "jaxdbg: to the sink\njaxdbg: still the sink\n"
    assert own.getvalue() == "jaxdbg: to its own stream\n"
    assert stdout.getvalue() == "jaxdbg: back on stdout\n"


def test_the_sink_is_restored_when_the_frontend_fails():
    sink = io.StringIO()
    with contextlib.suppress(RuntimeError), notices.sink(sink):
        raise RuntimeError("the frontend failed")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        notices.notice("after")
    assert out.getvalue() == "jaxdbg: after\n" and sink.getvalue() == ""


def test_a_warning_goes_to_stderr_once_and_never_into_the_programs_lines(monkeypatch):
    # A stop's thread warns while the program may still be printing (pmap returns before
    # its stops open): on stdout the warning once landed inside the cell's own line.
    monkeypatch.setattr(notices, "_said", set())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), notices.sink(io.StringIO()):
        notices.warning_once("the setting", "this setting is risky")
        notices.warning_once("the setting", "this setting is risky")
    assert (out.getvalue(), err.getvalue()) == ("", "jaxdbg: this setting is risky\n")
