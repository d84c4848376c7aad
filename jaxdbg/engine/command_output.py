"""What a debugger command writes to stdout / stderr while it runs, kept for its result.

``print(x)`` typed at a stop belongs to that command's log entry in the panel, and
comes in order with the results at the terminal, where it is also shown as it is
written (``echo``), so a long command's progress is seen while it runs. Swapping ``sys.stdout`` for a
buffer would also take what other threads write meanwhile (XLA threads under
pmap, the live print log, a kernel's own threads). So while any command runs,
``sys.stdout`` and ``sys.stderr`` are wrapped by a stream that sends the writes of
a thread running a command to that command's buffer, and every other thread's
writes to the stream they went to before (an ipykernel ``OutStream`` keeps
routing those to their own cell). The wrapper is taken away when the last command
ends, unless something else has replaced ``sys.stdout`` since.

While the wrapper is in place, every other thread's writes go out a whole line at a
time: ``print`` writes its pieces one by one, so a line the program prints while a
command (or, at a job's debug host, another process's stop) writes from another
thread would otherwise come out cut in two around that text. A thread's unfinished
line waits for its newline or its ``flush()``, as a terminal's line buffering makes it
wait, and goes out when the wrapper is taken away: nothing written is lost. The debug
host keeps the wrapper for as long as it serves the job (:func:`hold_streams`).
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from typing import Any, Callable, Iterator, TextIO

_STREAMS = ("stdout", "stderr")
_this_thread = threading.local()  # .buffer: where this thread's writes go, if anywhere
# Reentrant: a signal handler that prints may run while this thread writes.
_lock = threading.RLock()
_routing = 0  # commands running (and holders of hold_streams) that route the streams
_wrappers: list[tuple[str, "_ThreadRoutedStream"]] = []  # (stream name, wrapper) put in place
# Every wrapper made, by the id of the stream it wraps (which it keeps alive), reused
# when that stream is routed again; each one's unfinished lines go out when the routing
# ends. Wrappers are never let go: print() before Python 3.12.10 / 3.13.3 holds
# sys.stdout without a reference of its own while it writes, so a wrapper freed when
# the routing ends under a thread's print would crash the process. One per stream.
_wrapper_of: dict[int, "_ThreadRoutedStream"] = {}


class _ThreadRoutedStream:
    """A stand-in for a text stream: writes from a capturing thread go to its buffer,
    everything else (and every other attribute) is the wrapped stream's, a whole line
    at a time while the streams are routed."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped
        self._unfinished: dict[int, str] = {}  # thread ident -> its line not ended yet

    def write(self, text: str) -> int:
        buffer = getattr(_this_thread, "buffer", None)
        if buffer is not None:
            written: int = buffer.write(text)
            return written
        me = threading.get_ident()
        with _lock:
            routing = _routing > 0
            held = self._unfinished.pop(me, "") + text
            cut = held.rfind("\n") + 1 if routing else len(held)
            if cut < len(held):
                self._unfinished[me] = held[cut:]
        if cut:
            self.wrapped.write(held[:cut])
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if getattr(_this_thread, "buffer", None) is not None:
            return
        with _lock:
            held = self._unfinished.pop(threading.get_ident(), "")
        if held:
            self.wrapped.write(held)
        self.wrapped.flush()

    def write_unfinished(self) -> None:
        """Write every thread's unfinished line (the routing ends: none may be lost)."""
        with _lock:
            held, self._unfinished = list(self._unfinished.values()), {}
        for text in held:
            self.wrapped.write(text)
        if held:
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, an OutStream's own
        if name in ("wrapped", "_unfinished"):  # not set (a copy made without __init__)
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def _wrap_streams() -> None:
    """Route sys.stdout / sys.stderr (again, if something replaced them meanwhile)."""
    global _routing
    with _lock:
        _routing += 1
        for name in _STREAMS:
            current = getattr(sys, name)
            if current is None or any(current is wrapper for _, wrapper in _wrappers):
                continue
            # One left in place by someone who put it back after the routing ended is
            # taken away again with this routing.
            wrapper = current if isinstance(current, _ThreadRoutedStream) else _wrapper_around(current)
            _wrappers.append((name, wrapper))
            setattr(sys, name, wrapper)


def _wrapper_around(stream: TextIO) -> _ThreadRoutedStream:
    wrapper = _wrapper_of.get(id(stream))
    if wrapper is None:
        wrapper = _wrapper_of[id(stream)] = _ThreadRoutedStream(stream)
    return wrapper


def _unwrap_streams() -> None:
    global _routing
    with _lock:
        _routing -= 1
        if _routing:
            return
        for name, wrapper in reversed(_wrappers):
            if getattr(sys, name) is wrapper:  # else someone replaced it since: leave theirs
                setattr(sys, name, wrapper.wrapped)
        _wrappers.clear()
        holding = list(_wrapper_of.values())
    for wrapper in holding:  # outside the lock: writing may take a while
        wrapper.write_unfinished()


def hold_streams() -> Callable[[], None]:
    """Route sys.stdout / sys.stderr until the returned function is called (once): the
    program's lines stay whole while jaxdbg's threads write too (a job's debug host)."""
    _wrap_streams()
    released = threading.Event()

    def release() -> None:
        with _lock:
            if released.is_set():
                return
            released.set()
        _unwrap_streams()

    return release


class _Echo:
    """A command's buffer that also writes through to a stream as the text comes."""

    def __init__(self, buffer: io.StringIO, echo: TextIO) -> None:
        self.buffer, self.echo = buffer, echo

    def write(self, text: str) -> int:
        self.buffer.write(text)
        written = self.echo.write(text)
        self.echo.flush()
        return written


@contextlib.contextmanager
def captured(echo: TextIO | None = None) -> Iterator[io.StringIO]:
    """Keep what this thread writes to stdout / stderr in the yielded buffer; with
    ``echo``, also write it there as it comes (a terminal shows a command's output live)."""
    buffer = io.StringIO()
    previous = getattr(_this_thread, "buffer", None)
    _wrap_streams()
    if isinstance(echo, _ThreadRoutedStream):  # the stream itself, not the wrapper around it
        echo = echo.wrapped
    try:
        _this_thread.buffer = buffer if echo is None else _Echo(buffer, echo)
        yield buffer
    finally:
        _this_thread.buffer = previous
        _unwrap_streams()


def not_captured() -> contextlib.AbstractContextManager[None]:
    """This thread writes where it would with no command running (a stop opened by
    code that a command calls prints its own prompt and views)."""
    return writing_to(None)


def current_buffer() -> Any:
    """Where this thread's writes go now (a command's buffer), or None."""
    return getattr(_this_thread, "buffer", None)


def route_this_thread(buffer: Any) -> None:
    """From now on this thread writes into ``buffer`` (None: where it would)."""
    _this_thread.buffer = buffer


@contextlib.contextmanager
def writing_to(buffer: Any) -> Iterator[None]:
    """This thread writes into ``buffer`` (another thread's command's, from
    :func:`current_buffer`): a replay's prints belong to the command that ran it on."""
    previous = getattr(_this_thread, "buffer", None)
    _this_thread.buffer = buffer
    try:
        yield
    finally:
        _this_thread.buffer = previous
