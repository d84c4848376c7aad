"""Count SIGINTs as they arrive, even while the main thread is stuck in XLA.

A KeyboardInterrupt is raised on the main thread only when it next runs Python
bytecode. When the breakpoint waits on an XLA thread, the main thread is inside XLA
waiting for that very callback, so the interrupt would never be seen and the cell
would hang. ``signal.set_wakeup_fd`` makes the C-level handler write the signal number
to a socket at once; a small thread counts SIGINTs there, and waiters on other threads
(:class:`~jaxdbg_widgets.pause.channel.PauseChannel`) raise KeyboardInterrupt when the
count moves. A wakeup fd someone else had set is kept fed with the same bytes.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import Any

__all__ = ["WATCH", "InterruptWatch", "interrupt_count", "listener"]


class InterruptWatch:
    """The counter and its watch thread; :data:`WATCH` is the process's one instance."""

    def __init__(self) -> None:
        self.count = 0
        self.installed = False
        self._lock = threading.Lock()

    def install(self) -> bool:
        if self.installed:
            return True
        if threading.current_thread() is not threading.main_thread():
            return False  # set_wakeup_fd is main-thread only
        with self._lock:
            if self.installed:
                return True
            try:
                reader, writer = socket.socketpair()
                writer.setblocking(False)
                previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            except (ValueError, OSError):
                return False
            self._keep = (reader, writer)  # keep both ends alive
            self._previous = previous
            thread = threading.Thread(target=self._watch, args=(reader, previous), name="jaxdbg-sigint", daemon=True)
            thread.start()
            self.installed = True
            return True

    def uninstall(self) -> None:
        """Give the wakeup fd back to whoever had it, and end the watch thread."""
        if not self.installed or threading.current_thread() is not threading.main_thread():
            return
        with self._lock:
            reader, writer = self._keep
            try:
                current = signal.set_wakeup_fd(self._previous, warn_on_full_buffer=False)
                if current != writer.fileno():  # someone set theirs on top: keep it
                    signal.set_wakeup_fd(current, warn_on_full_buffer=False)
            except (ValueError, OSError):
                pass
            writer.close()  # the watch thread sees end-of-file and closes the reader
            self.installed = False

    def _watch(self, reader: socket.socket, previous: int) -> None:
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                reader.close()
                return
            if int(signal.SIGINT) in data:
                self.count += 1
            if previous != -1:
                try:
                    os.write(previous, data)
                except OSError:
                    pass


WATCH = InterruptWatch()


def listener(on_main: bool) -> Any:
    """Off the main thread, with interrupts counted: a SIGINT ends this wait (which
    watches the count) instead of raising in the main thread (see jaxdbg.runtime.interrupts)."""
    from jaxdbg.runtime import interrupts

    return interrupts.listening(active=not on_main and WATCH.installed)


def interrupt_count() -> int:
    """How many SIGINTs arrived since the watch was installed (for tests and diagnostics)."""
    return WATCH.count
