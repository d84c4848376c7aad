"""The one channel for jaxdbg's own notices: ``jaxdbg: <what happened>``.

A notice is a line jaxdbg says about itself (a stop continued without a prompt, an
option ignored, a view that fell back), as opposed to a command's output. Every one
is written by :func:`notice`, which adds the ``jaxdbg: `` prefix once, so the wording
lives with the code that knows what happened and the prefix and destination live
here. A notice that travels as a value (a log record, a display bundle, a panel's
note) is made by :func:`phrase` instead.

Notices go to the sink: the current ``sys.stdout`` unless a frontend set another
(the terminal prompt's ``stdout=`` stream while it serves a stop), or the call names
a stream of its own (:func:`warning_once` names ``sys.stderr``). ``sys.stdout`` is
looked up at each call, because a kernel swaps it per cell and pins it per thread;
this is where pdb's ``message()`` writes too. Nothing here imports the rest of jaxdbg,
so capture, engine and frontend modules can all use it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import IO, Iterator

PREFIX = "jaxdbg: "

_lock = threading.Lock()
_sink: IO[str] | None = None  # None: sys.stdout as it is at the time of the notice


def phrase(text: str) -> str:
    """``text`` as a notice line, for one that is carried rather than written."""
    return PREFIX + text


def current_sink() -> IO[str]:
    """Where a notice written now goes."""
    sink = _sink
    return sink if sink is not None else sys.stdout


def notice(text: str, *, stream: IO[str] | None = None) -> None:
    """Write ``jaxdbg: text`` as one line to ``stream``, else the sink, and flush it."""
    out = stream if stream is not None else current_sink()
    line = phrase(text)
    out.write(line if line.endswith("\n") else line + "\n")
    try:
        out.flush()
    except Exception:  # a stream that cannot flush still got the line
        pass


_said: set[str] = set()


def notice_once(key: str, text: str, *, stream: IO[str] | None = None) -> None:
    """:func:`notice` ``text`` the first time ``key`` is given in this process."""
    with _lock:
        if key in _said:
            return
        _said.add(key)
    notice(text, stream=stream)


def warning_once(key: str, text: str) -> None:
    """:func:`notice_once` on ``sys.stderr``, for a warning about the program's setting
    rather than a stop's conversation. A stop's thread says it while the program may be
    printing (pmap returns before its stops open): on stdout it could land inside one of
    the program's lines; a notebook keeps stderr apart, as Python's own warnings."""
    notice_once(key, text, stream=sys.stderr)


@contextlib.contextmanager
def sink(stream: IO[str] | None) -> Iterator[None]:
    """Send notices to ``stream`` for the duration (None keeps the current sink).

    Process-wide, not per thread: stops are served one at a time, and a notice
    written by a helper thread during a stop (an interrupted command given up)
    belongs to that stop's view too.
    """
    global _sink
    if stream is None:
        yield
        return
    with _lock:
        before, _sink = _sink, stream
    try:
        yield
    finally:
        with _lock:
            _sink = before
