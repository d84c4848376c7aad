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
import sys
import threading
from typing import IO

from jaxdbg.runtime import interrupts


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
    KeyboardInterrupt on Ctrl-C (see :mod:`jaxdbg.runtime.interrupts`)."""
    out = stdout if stdout is not None else sys.stdout
    fd = _stdin_fd()
    if fd is None:  # callers ask should_read_descriptor() first
        raise ValueError("read_line needs a stdin with a file descriptor")
    wake_read, wake_write = os.pipe()

    def wake() -> None:
        try:
            os.write(wake_write, b"\x03")
        except OSError:
            pass

    try:
        with interrupts.listening(wake) as listener:
            return _read_until_newline(prompt, out, fd, wake_read, listener)
    finally:
        os.close(wake_read)
        os.close(wake_write)


def _read_until_newline(prompt: str, out: IO[str], fd: int, wake_read: int, listener: interrupts.Listener) -> str:
    out.write(prompt)
    out.flush()
    data = bytearray()
    while True:
        ready, _, _ = select.select([fd, wake_read], [], [])
        if wake_read in ready:
            listener.interrupted()
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
    encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
    return data.decode(encoding, errors="replace").rstrip("\r")
