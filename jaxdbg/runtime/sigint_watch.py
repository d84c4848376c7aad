"""See each SIGINT the moment it arrives, even while the main thread is inside a C call.

Python runs a signal's handler on the main thread, at its next bytecode. While a stop
waits on an XLA thread, the main thread may be inside XLA waiting for that very stop:
jaxlib 0.12.1 and later run a multi-device CPU computation with host callbacks inside
the call itself, older ones block in the result's read, which runs pending handlers
and so needs no help. ``signal.set_wakeup_fd`` makes CPython's C-level handler write
the signal number to a socket at once; a small thread counts the SIGINTs there and
tells its subscribers (:mod:`jaxdbg.runtime.interrupts`, which wakes the waiting
stops when the main thread cannot). The panel's wait watches :attr:`SigintWatch.count`
directly. A wakeup fd someone else had set is kept fed with the same bytes.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import threading
from typing import Callable

__all__ = ["WATCH", "SigintWatch"]


class SigintWatch:
    """The counter and its thread; :data:`WATCH` is the process's one instance."""

    def __init__(self) -> None:
        self.count = 0  # SIGINTs read so far
        self.installed = False
        self._lock = threading.Lock()  # install / uninstall
        # One reader at a time: the thread or take_pending (from the SIGINT handler, which
        # a second Ctrl-C's handler may interrupt on the same thread: re-entrant).
        self._reading = threading.RLock()
        self._subscribers: list[Callable[[int], None]] = []
        self._reader: socket.socket | None = None
        self._writer: socket.socket | None = None  # CPython's handler writes here
        self._previous = -1

    def subscribe(self, on_sigint: Callable[[int], None]) -> None:
        """Call ``on_sigint(count)`` on the watch's thread after each SIGINT it reads;
        it must be quick and must not raise."""
        self._subscribers.append(on_sigint)

    def install(self) -> bool:
        """From the main thread (``set_wakeup_fd`` is main-thread only); idempotent.
        Whether the watch runs."""
        if self.installed:
            return True
        if threading.current_thread() is not threading.main_thread() or os.name != "posix":
            return False
        with self._lock:
            if self.installed:
                return True
            try:
                reader, writer = socket.socketpair()
                reader.setblocking(False)
                writer.setblocking(False)
                previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            except (ValueError, OSError):
                return False
            self._reader, self._writer = reader, writer
            self._previous = previous
            thread = threading.Thread(target=self._watch, args=(reader,), name="jaxdbg-sigint", daemon=True)
            thread.start()
            self.installed = True
            return True

    def uninstall(self) -> None:
        """Give the wakeup fd back to whoever had it, and end the watch thread."""
        if not self.installed or threading.current_thread() is not threading.main_thread():
            return
        with self._lock:
            writer = self._writer
            assert writer is not None
            try:
                current = signal.set_wakeup_fd(self._previous, warn_on_full_buffer=False)
                if current != writer.fileno():  # someone set theirs on top: keep it
                    signal.set_wakeup_fd(current, warn_on_full_buffer=False)
            except (ValueError, OSError):
                pass
            writer.close()  # the watch thread sees end-of-file and closes the reader
            self.installed = False

    def take_pending(self) -> int:
        """The count, with every SIGINT written so far read first. The main thread's
        handler runs after its signal's byte was written, so the count it gets here
        includes that signal even when the thread has not woken for it yet."""
        if self._reader is not None and self.installed:
            with self._reading:
                self._read_available(self._reader)
        return self.count

    def _watch(self, reader: socket.socket) -> None:
        while True:
            try:
                select.select([reader], [], [])
            except (OSError, ValueError):
                return
            with self._reading:
                before = self.count
                open_ = self._read_available(reader)
                after = self.count
            if after != before:
                for on_sigint in list(self._subscribers):
                    on_sigint(after)
            if not open_:
                return

    def _read_available(self, reader: socket.socket) -> bool:
        """Read what is there without blocking; whether the socket is still open.
        The caller holds ``_reading``."""
        while True:
            try:
                data = reader.recv(64)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not data:
                reader.close()
                return False
            self.count += data.count(int(signal.SIGINT))
            if self._previous != -1:
                try:
                    os.write(self._previous, data)
                except OSError:
                    pass


WATCH = SigintWatch()
