"""Reading a ``(jaxdbg)`` command line that Ctrl-C can end, from any thread.

Python runs signal handlers on the main thread only, so ``input()`` on an XLA
thread (a pmap or shard_map stop) cannot be interrupted: Ctrl-C raised in the
main thread while the stop sat in ``input()`` for good. Here such a prompt
reads stdin's file descriptor itself while watching a wake-up pipe, and a
SIGINT handler, put in front of Python's default one, wakes the waiting
prompts; each raises KeyboardInterrupt in its own thread. When no prompt waits,
Ctrl-C behaves as before.

Lines are read byte by byte, never past the newline, so the program's own
reads of stdin stay in step. A main-thread prompt at a terminal keeps
``input()``, and with it line editing and history.
"""

from __future__ import annotations

import builtins
import os
import select
import signal
import sys
import threading
from typing import IO

_lock = threading.Lock()
_wakers: set[int] = set()  # write ends of the pipes of prompts waiting now


def _stdin_fd() -> int | None:
    try:
        return sys.stdin.fileno() if sys.stdin is not None else None
    except (AttributeError, OSError, ValueError):
        return None


def _input_is_builtin() -> bool:
    """False inside a Jupyter kernel, whose ``input`` reads from the stdin channel."""
    return getattr(builtins.input, "__self__", None) is builtins


def should_read_descriptor() -> bool:
    """Whether a default prompt here should read the descriptor instead of ``input()``.

    Off the main thread always (only that is interruptible), and on the main
    thread when stdin is not a terminal, so that every prompt reads the same way.
    """
    if os.name != "posix" or not _input_is_builtin() or _stdin_fd() is None:
        return False
    if threading.current_thread() is not threading.main_thread():
        return True
    try:
        return not sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def read_line(prompt: str, stdout: IO[str] | None = None) -> str:
    """One line from stdin without its newline; EOFError at end of input,
    KeyboardInterrupt on Ctrl-C (see :func:`install_interrupt_relay`)."""
    out = stdout if stdout is not None else sys.stdout
    fd = _stdin_fd()
    wake_read, wake_write = os.pipe()
    with _lock:
        _wakers.add(wake_write)
    try:
        out.write(prompt)
        out.flush()
        data = bytearray()
        while True:
            ready, _, _ = select.select([fd, wake_read], [], [])
            if wake_read in ready:
                out.write("\n")
                out.flush()
                raise KeyboardInterrupt
            byte = os.read(fd, 1)
            if not byte:
                if data:
                    break
                raise EOFError
            if byte == b"\n":
                break
            data += byte
    finally:
        with _lock:
            _wakers.discard(wake_write)
        os.close(wake_read)
        os.close(wake_write)
    encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
    return data.decode(encoding, errors="replace").rstrip("\r")


def _relay(signum: int, frame) -> None:
    """SIGINT: end the prompts that wait, or else do what Python does by default."""
    with _lock:
        wakers = list(_wakers)
    if not wakers:
        signal.default_int_handler(signum, frame)
        return
    for fd in wakers:
        try:
            os.write(fd, b"\x03")
        except OSError:
            pass


def install_interrupt_relay() -> None:
    """Put :func:`_relay` in front of Python's default SIGINT handler.

    Only from the main thread, and only over the default handler: a program's or
    kernel's own handler is left alone. Idempotent.
    """
    if threading.current_thread() is not threading.main_thread() or os.name != "posix":
        return
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _relay)
    except (ValueError, OSError):  # not allowed here (e.g. an embedded interpreter)
        pass
