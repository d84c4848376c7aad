"""The thread-routed stdout while commands run (and while a job's debug host serves):
a command's prints are its own, every other thread's lines come out whole, and
nothing written is lost."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import threading
from typing import Iterator

from jaxdbg.engine import command_output


class _Paused:
    """An argument of print() whose text comes only when the test says so: print has
    written the pieces before it (``print`` writes its pieces one at a time)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reached, self.go_on = threading.Event(), threading.Event()

    def __str__(self) -> str:
        self.reached.set()
        assert self.go_on.wait(10)
        return self.text


def _print_paused_midline(paused: _Paused) -> threading.Thread:
    """The program's print, on a thread of its own, stopped in the middle of its line."""
    thread = threading.Thread(target=lambda: print("result", 0, paused, flush=True))
    thread.start()
    assert paused.reached.wait(10)
    return thread


@contextlib.contextmanager
def own_stdout() -> Iterator[io.StringIO]:
    """sys.stdout is a buffer of the test's for the block (and as it was after it)."""
    before, out = sys.stdout, io.StringIO()
    sys.stdout = out
    try:
        yield out
    finally:
        sys.stdout = before


def test_a_line_another_thread_prints_while_a_command_runs_is_not_cut_by_its_output():
    paused = _Paused("[24.0, 32.0]")
    with own_stdout() as stdout:
        with command_output.captured(echo=sys.stdout) as printed:
            program = _print_paused_midline(paused)
            print("Array([ 8., 10.], dtype=float32)")  # the command's output, shown as it comes
            paused.go_on.set()
            program.join(10)
        assert sys.stdout is stdout
    assert printed.getvalue() == "Array([ 8., 10.], dtype=float32)\n"
    assert stdout.getvalue().splitlines() == ["Array([ 8., 10.], dtype=float32)", "result 0 [24.0, 32.0]"]


def test_while_the_streams_are_held_each_threads_lines_come_out_whole():
    paused = _Paused("[24.0, 32.0]")
    with own_stdout() as stdout:
        release = command_output.hold_streams()
        try:
            program = _print_paused_midline(paused)
            # Another process's stop, served on a thread of the host: its banner and prompt.
            server = threading.Thread(target=lambda: print("Stopped at program.py:16 in body\n(jaxdbg) p y"))
            server.start()
            server.join(10)
            paused.go_on.set()
            program.join(10)
        finally:
            release()
        assert sys.stdout is stdout
    assert stdout.getvalue().splitlines() == [
        "Stopped at program.py:16 in body",
        "(jaxdbg) p y",
        "result 0 [24.0, 32.0]",
    ]


def test_a_flush_writes_the_unfinished_line_of_its_thread_only():
    with own_stdout() as stdout:
        release = command_output.hold_streams()
        try:
            sys.stdout.write("(jaxdbg) ")  # a prompt: flushed before its input is read
            other = threading.Thread(target=lambda: sys.stdout.write("half a line"))
            other.start()
            other.join(10)
            sys.stdout.flush()
            assert stdout.getvalue() == "(jaxdbg) "
        finally:
            release()
    assert stdout.getvalue() == "(jaxdbg) half a line"  # written when the routing ended


def test_a_line_left_unfinished_when_the_routing_ends_is_written_then():
    with own_stdout() as stdout:
        release = command_output.hold_streams()
        sys.stdout.write("the last words, without a newline")
        with command_output.captured():  # a command's routing starts and ends meanwhile
            pass
        assert stdout.getvalue() == ""
        release()
        release()  # once is enough
        assert stdout.getvalue() == "the last words, without a newline"
        assert sys.stdout is stdout
        print(" then", flush=True)
    assert stdout.getvalue() == "the last words, without a newline then\n"


def test_a_stream_put_in_place_while_held_is_routed_for_the_next_command():
    with own_stdout():
        release = command_output.hold_streams()
        try:
            with own_stdout() as replacement:  # e.g. IPython's capture_output
                with command_output.captured() as printed:
                    print("the command's own")
            assert printed.getvalue() == "the command's own\n"
            assert replacement.getvalue() == ""
        finally:
            release()


# A thread's print() stops in the middle of its line while a command's routing ends.
# print() before Python 3.12.10 / 3.13.3 holds sys.stdout without a reference of its
# own, so had the routing let go of its wrapper the process would crash (or print would
# find a half-freed wrapper): in a subprocess, so that a crash fails only this test.
_PRINT_WHILE_THE_ROUTING_ENDS = """
import io, sys, threading
from jaxdbg.engine import command_output

class Paused:
    def __init__(self):
        self.reached, self.go_on = threading.Event(), threading.Event()
    def __str__(self):
        self.reached.set()
        assert self.go_on.wait(10)
        return "[24.0, 32.0]"

out = io.StringIO()
sys.stdout = out
for _ in range(20):
    paused = Paused()
    with command_output.captured():
        program = threading.Thread(target=lambda: print("result", paused, flush=True))
        program.start()
        assert paused.reached.wait(10)
    reuse_the_freed_memory = [object() for _ in range(1000)]
    paused.go_on.set()
    program.join(10)
sys.stdout = sys.__stdout__
print(out.getvalue().count("result [24.0, 32.0]\\n"))
"""


def test_a_print_under_way_when_a_commands_routing_ends_finishes_its_line():
    ran = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _PRINT_WHILE_THE_ROUTING_ENDS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (ran.returncode, ran.stdout) == (0, "20\n"), ran.stderr[-3000:]
