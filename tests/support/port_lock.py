"""One lock, across every pytest worker of a run, from choosing free ports to binding them.

The browser tests' servers pick a free port (below the ephemeral range, where no
outgoing connection takes it) and bind it a moment later, in another process. Between
the two another worker could pick the same port, and one of the two servers fails to
start. Holding this lock over that window, in every worker, closes it (as other Jupyter
projects do in their parallel test suites). The kernels the tests start use Unix
sockets, no ports.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

LOCK_FILE = Path(tempfile.gettempdir()) / f"jaxdbg-tests-ports-{os.getuid()}.lock"


class PortLock:
    """The lock, taken by :meth:`acquire`; :meth:`release` may be called more than once."""

    def __init__(self) -> None:
        self._handle: IO[str] | None = None

    def acquire(self) -> "PortLock":
        handle = open(LOCK_FILE, "a")
        fcntl.flock(handle, fcntl.LOCK_EX)
        self._handle = handle
        return self

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


@contextlib.contextmanager
def ports_chosen_and_bound() -> Iterator[None]:
    """Held while a process picks free ports and until whoever uses them has bound them."""
    lock = PortLock().acquire()
    try:
        yield
    finally:
        lock.release()
