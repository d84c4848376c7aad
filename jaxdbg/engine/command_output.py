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
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from typing import Any, Iterator, TextIO

_STREAMS = ("stdout", "stderr")
_this_thread = threading.local()  # .buffer: where this thread's writes go, if anywhere
_lock = threading.Lock()
_commands_running = 0
_wrappers: dict[str, "_ThreadRoutedStream"] = {}


class _ThreadRoutedStream:
    """A stand-in for a text stream: writes from a capturing thread go to its buffer,
    everything else (and every other attribute) is the wrapped stream's."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def write(self, text: str) -> int:
        buffer = getattr(_this_thread, "buffer", None)
        if buffer is None:
            return self.wrapped.write(text)
        return buffer.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if getattr(_this_thread, "buffer", None) is None:
            self.wrapped.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, an OutStream's own
        if name == "wrapped":  # not set (a copy made without __init__): no endless lookup
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def _wrap_streams() -> None:
    global _commands_running
    with _lock:
        _commands_running += 1
        if _commands_running > 1:
            return
        for name in _STREAMS:
            current = getattr(sys, name)
            if current is None:
                continue
            wrapper = current if isinstance(current, _ThreadRoutedStream) else _ThreadRoutedStream(current)
            _wrappers[name] = wrapper
            setattr(sys, name, wrapper)


def _unwrap_streams() -> None:
    global _commands_running
    with _lock:
        _commands_running -= 1
        if _commands_running:
            return
        for name, wrapper in list(_wrappers.items()):
            if getattr(sys, name) is wrapper:  # else someone replaced it since: leave theirs
                setattr(sys, name, wrapper.wrapped)
        _wrappers.clear()


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
