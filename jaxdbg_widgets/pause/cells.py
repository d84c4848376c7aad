"""The cell a stop pauses, and the cells run while it is paused.

ipykernel parents every output to the request it handled last. Once a click was
handled on another thread, output from threads that never set a parent (XLA's) would
go to that click, which the frontend drops; so each thread that serves the stop pins
its output to the paused cell's request. The frontend's status bar shows the last
status the kernel sent, and each request handled while paused ends with an idle, so
the paused cell says busy again until the stop ends. A cell run meanwhile waits behind
the paused one; the stop can be told about it, to show itself there too.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from jaxdbg.internals import (
    ipykernel_busy,
    ipykernel_kernel,
    ipykernel_parents,
    ipykernel_queued_cells,
)

__all__ = ["PausedCell", "QueuedCell", "track", "untrack"]


def track() -> None:
    """Start following which request each cell runs for (from the main thread)."""
    if ipykernel_kernel.current_kernel() is not None:
        ipykernel_parents.track_cells()


def untrack() -> None:
    ipykernel_parents.untrack_cells()


class QueuedCell:
    """``wait`` result: a cell was run while this one is paused (it waits behind it).

    A page reloaded without saving shows no sign of the stop; the panel is shown in
    that cell's output too (``parent`` is its execute_request) so the stop can be
    answered from there."""

    def __init__(self, parent: dict) -> None:
        self.parent = parent

    def __repr__(self) -> str:
        return f"QueuedCell({(self.parent.get('header') or {}).get('msg_id')!r})"


class PausedCell:
    """One stop's cell: found when the stop begins, kept busy until :meth:`end`."""

    def __init__(self, kernel: Any) -> None:
        self._kernel = kernel
        self._pins: dict[int, Callable[[], None]] = {}  # thread ident -> undo
        self._lock = threading.Lock()
        self.ident: Any = None
        self.parent: dict = {}
        self._release_busy: Callable[[], None] | None = None
        self._unwatch_queued: Callable[[], None] | None = None
        if kernel is None:
            return
        try:
            self.ident, self.parent = ipykernel_parents.cell_parent(kernel)
        except Exception:
            pass
        try:
            self._release_busy = ipykernel_busy.keep_cell_busy(kernel, self.parent)
        except Exception:
            self._release_busy = None

    def pin(self) -> Callable[[], None] | None:
        """Keep this thread's output in the paused cell; returns an undo, or None when
        there is no cell or this thread is pinned already."""
        key = threading.get_ident()
        if self._kernel is None or not self.parent or key in self._pins:
            return None
        undo = ipykernel_parents.pin_thread_parent(self._kernel, self.ident, self.parent)
        self._pins[key] = undo
        return undo

    def unpin(self) -> None:
        """Undo this thread's :meth:`pin`, if it pinned."""
        undo = self._pins.pop(threading.get_ident(), None)
        if undo is not None:
            undo()

    def report_queued(self, report: Callable[[QueuedCell], None]) -> None:
        """Call ``report`` with a :class:`QueuedCell` for each cell run from now on
        while paused (once; a second call does nothing)."""
        if self._kernel is None or self._unwatch_queued is not None:
            return
        try:
            self._unwatch_queued = ipykernel_queued_cells.watch_queued_cells(
                self._kernel, lambda request: report(QueuedCell(request))
            )
        except Exception:
            self._unwatch_queued = None

    def end(self) -> None:
        """The stop ended: the cell's status is its own again, queued cells are not
        reported any more."""
        with self._lock:
            release_busy, self._release_busy = self._release_busy, None
            unwatch_queued, self._unwatch_queued = self._unwatch_queued, None
        if release_busy is not None:
            release_busy()
        if unwatch_queued is not None:
            unwatch_queued()
