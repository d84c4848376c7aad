"""The frontend driver: one loop (wait, execute, redraw, finish) and its fallbacks,
driven by a small frontend written here over real stops of a jitted function."""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine.outputs import Resume
from jaxdbg.frontends import driver, scripted


class Lines(driver.Frontend):
    """Reads its command lines from a list and writes down what the driver asked of it.

    An entry that is an exception is raised by ``read`` instead (end of input, no
    input, fall back, an interrupt); ``None`` is "nothing came yet"."""

    def __init__(self, *lines, end_of_input="quit", notice_stream=None):
        self.lines = list(lines)
        self.calls: list[tuple] = []
        self.end_line = end_of_input
        self.notice_stream = notice_stream

    def open(self, session):
        self.calls.append(("open", session.banner()))

    def read(self, session):
        self.calls.append(("read",))
        entry = self.lines.pop(0) if self.lines else EOFError()
        if isinstance(entry, BaseException):
            raise entry
        return entry

    def show(self, session, line, output):
        self.calls.append(("show", line, output.text))

    def handle(self, session, command):
        self.calls.append(("handle", command))

    def end_of_input(self, session):
        self.calls.append(("end of input",))
        return self.end_line

    def close(self, session, fell_back=None):
        self.calls.append(("close", fell_back, session.finished))


@pytest.fixture
def stop(temporary_backend):
    """``stop(serve, **breakpoint_options)`` runs a jitted function whose breakpoint is
    served by ``serve(session)``; returns the function's result."""

    def run(serve, **options):
        temporary_backend("driver-test", lambda session, **_options: serve(session))

        @jax.jit
        def f(x):
            y = x * 2
            jaxdbg.breakpoint(backend="driver-test", **options)
            return y + 1

        return f(jnp.float32(3))

    return run


def _kinds(frontend):
    return [call[0] for call in frontend.calls]


def test_the_loop_reads_executes_and_shows_each_line_until_the_stop_ends(stop):
    frontend = Lines("p y", None, {"type": "click"}, "p x + 1", "c", "p never")
    seen = {}

    def serve(session):
        driver.drive(session, frontend)
        seen["resume"] = session.resume

    assert stop(serve) == 7
    assert seen["resume"] is Resume.CONTINUE
    assert frontend.calls[0][0] == "open" and frontend.calls[0][1].startswith("Stopped at ")
    assert frontend.calls[1:] == [
        ("read",),
        ("show", "p y", "Array(6., dtype=float32)"),
        ("read",),  # None: asked again
        ("read",),
        ("handle", {"type": "click"}),  # the frontend's own command goes back to it
        ("read",),
        ("show", "p x + 1", "Array(4., dtype=float32)"),
        ("read",),
        ("show", "c", "Continuing."),
        ("close", None, True),
    ]
    assert frontend.lines == ["p never"]  # nothing is read once the stop has ended


def test_end_of_input_runs_the_frontends_line_quit_by_default(stop):
    frontend = Lines("p y")
    seen = {}

    def serve(session):
        driver.drive(session, frontend)
        seen["resume"] = session.resume

    with pytest.raises(Exception, match="ended by 'quit'"):  # the quit leaves the jitted call
        stop(serve)
    assert seen["resume"] is Resume.QUIT
    assert _kinds(frontend) == ["open", "read", "show", "read", "end of input", "show", "close"]
    assert frontend.calls[-2][1] == "quit"


def test_an_input_source_that_ends_leaves_the_stop_open_for_the_next(stop):
    first = Lines("p y", end_of_input=None)
    second = Lines("c")

    def serve(session):
        driver.drive(session, first)
        assert not session.finished
        driver.drive(session, second)

    assert stop(serve) == 7
    assert first.calls[-1] == ("close", None, False)
    assert second.calls[-2] == ("show", "c", "Continuing.")


def test_no_input_before_the_view_opens_continues_with_one_notice(stop):
    class Unanswerable(Lines):
        def open(self, session):
            raise driver.NoInput("nothing can answer a prompt (a test)")

    out = io.StringIO()
    frontend = Unanswerable(notice_stream=out)
    assert stop(lambda session: driver.drive(session, frontend)) == 7
    assert frontend.calls == []  # never opened, so never closed
    text = out.getvalue()
    assert text.startswith("jaxdbg: continuing past ") and text.count("\n") == 1
    assert ": nothing can answer a prompt (a test); set JAXDBG_COMMANDS to answer stops" in text


def test_no_input_while_reading_continues_before_the_view_closes(stop):
    out = io.StringIO()
    frontend = Lines("p y", driver.NoInput("stdin went away"), "p never", notice_stream=out)
    assert stop(lambda session: driver.drive(session, frontend)) == 7
    assert _kinds(frontend) == ["open", "read", "show", "read", "close"]
    assert frontend.calls[-1] == ("close", None, True)  # the final view shows it continued
    assert "jaxdbg: continuing past " in out.getvalue() and "stdin went away" in out.getvalue()


def test_a_frontend_that_cannot_go_on_closes_then_hands_the_stop_to_the_prompt(stop, capsys):
    frontend = Lines("p y", driver.FallBack("the view went away"))
    prompt = Lines("p y + 1", "c")
    seen = {}

    def serve(session):
        driver.drive(
            session, frontend, fallback=lambda s: driver.drive(s, prompt), options={"stdin": io.StringIO()}
        )  # a stdin= option: someone can type
        seen["resume"] = session.resume

    assert stop(serve) == 7
    assert seen["resume"] is Resume.CONTINUE
    assert frontend.calls[-1] == ("close", "the view went away", False)
    assert prompt.calls[1:] == [
        ("read",),
        ("show", "p y + 1", "Array(7., dtype=float32)"),
        ("read",),
        ("show", "c", "Continuing."),
        ("close", None, True),
    ]
    assert capsys.readouterr().out == (
        "jaxdbg: the view went away; type debugger commands at the prompt below instead (help lists them).\n"
    )


def test_falling_back_with_nobody_to_type_continues_instead(stop, monkeypatch, capsys):
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr("sys.stdin", closed)
    frontend = Lines(driver.FallBack("the view went away"))
    prompt = Lines("p never")
    assert stop(lambda session: driver.drive(session, frontend, fallback=lambda s: driver.drive(s, prompt))) == 7
    assert prompt.calls == []
    out = capsys.readouterr().out
    assert out.startswith("jaxdbg: continuing past ")
    assert "the view went away, and nothing can answer a prompt (stdin is closed)" in out


def test_a_fall_back_without_a_prompt_to_go_to_propagates(stop):
    frontend = Lines(driver.FallBack("the view went away"))
    seen = {}

    def serve(session):
        with pytest.raises(driver.FallBack):
            driver.drive(session, frontend)
        seen["closed"] = frontend.calls[-1]
        session.execute("c")

    assert stop(serve) == 7
    assert seen["closed"] == ("close", "the view went away", False)


def test_an_interrupt_marks_the_stop_interrupted_closes_the_view_and_propagates(stop):
    frontend = Lines("p y", KeyboardInterrupt())
    seen = {}

    def serve(session):
        with pytest.raises(KeyboardInterrupt):
            driver.drive(session, frontend)
        seen["outcome"] = session.outcome()
        session.execute("c")

    assert stop(serve) == 7
    assert seen["outcome"] == "Interrupted."
    assert frontend.calls[-1] == ("close", None, False)


def test_scripted_commands_are_read_before_the_frontend_is_asked(stop, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    scripted.reset()
    out = io.StringIO()
    frontend = Lines("p y + 2", "c")
    assert stop(lambda session: driver.drive(session, frontend), commands="p y; p x", stdout=out) == 7
    scripted.reset()
    echoed = out.getvalue()
    assert echoed.startswith("Stopped at ")
    assert ("(jaxdbg) p y\nArray(6., dtype=float32)\n(jaxdbg) p x\nArray(3., dtype=float32)\n") in echoed
    # the script ran out in the middle of the stop: the frontend takes it from there
    assert frontend.calls[1:3] == [("read",), ("show", "p y + 2", "Array(8., dtype=float32)")]


def test_a_script_that_ends_the_stop_never_opens_the_frontend(stop):
    scripted.reset()
    out = io.StringIO()
    frontend = Lines("p never")
    assert stop(lambda session: driver.drive(session, frontend), commands="p y; c", stdout=out) == 7
    scripted.reset()
    assert frontend.calls == []
    assert "(jaxdbg) c\nContinuing.\n" in out.getvalue()


def test_notices_said_during_a_stop_go_to_the_frontends_stream(stop, capsys):
    out = io.StringIO()
    line = "p __import__('jaxdbg.runtime.notices', fromlist=['notice']).notice('said in a stop')"
    frontend = Lines(line, "c", notice_stream=out)
    assert stop(lambda session: driver.drive(session, frontend)) == 7
    assert out.getvalue() == "jaxdbg: said in a stop\n"
    from jaxdbg.runtime import notices

    notices.notice("after the stop")
    assert capsys.readouterr().out == "jaxdbg: after the stop\n"
