"""Cells queued behind a paused cell: who wants to hear about them.

An ``execute_request`` that arrives while a cell is paused waits behind it; the shell
channel reader (7.4, :mod:`ipykernel_paused_requests`) or the 6.x pump
(:mod:`ipykernel_pump`) sees it first and tells the watchers here.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

__all__ = ["watch_queued_cells", "notify_queued_cell"]

_lock = threading.Lock()

_queued_cell_watchers: "weakref.WeakKeyDictionary[Any, list[Callable[[dict], None]]]" = weakref.WeakKeyDictionary()


def watch_queued_cells(kernel: Any, callback: Callable[[dict], None]) -> Callable[[], None]:
    """Call ``callback(request)`` for each ``execute_request`` that arrives while a
    cell is paused (it waits behind the paused cell: 7.4's info desk and 6.x's pump
    see it first). Called on the thread that read it; returns the undo."""
    with _lock:
        _queued_cell_watchers.setdefault(kernel, []).append(callback)

    def undo() -> None:
        with _lock:
            watchers = _queued_cell_watchers.get(kernel, [])
            if callback in watchers:
                watchers.remove(callback)

    return undo


def notify_queued_cell(kernel: Any, request: dict) -> None:
    with _lock:
        watchers = list(_queued_cell_watchers.get(kernel, []))
    for callback in watchers:
        try:
            callback(request)
        except Exception:
            kernel.log.error("jaxdbg: a queued-cell watcher failed", exc_info=True)
