"""The rows of one print log and when to send them.

Rows arrive on whichever thread runs the callback (the kernel's main thread, or XLA
threads under pmap) and are appended under a lock. A flush takes what is new in one
step; one is due every :data:`FLUSH_INTERVAL_S` (an interval that grows with the
cell's running time), or sooner once :data:`ROWS_PER_MESSAGE` rows wait, so 10,000
prints from a scan reach the frontend in a few dozen messages.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from jaxdbg.capture.prints import PrintRow
from jaxdbg.runtime import phrases

__all__ = [
    "FLUSH_INTERVAL_S",
    "MAX_FLUSH_INTERVAL_S",
    "ROWS_PER_MESSAGE",
    "SHOWN_ROWS",
    "Batch",
    "RowBuffer",
    "row_cells",
    "where",
]

FLUSH_INTERVAL_S = 0.2  # newest rows reach the frontend this soon while a cell starts
MAX_FLUSH_INTERVAL_S = 2.0
ROWS_PER_MESSAGE = 2_000  # a flush is due sooner once this many rows wait
SHOWN_ROWS = 20  # rows shown at each end of the log


def where(row: PrintRow) -> str:
    """The row's logging level (a ``jax.debug.log`` row), batch element and device, as
    far as known ("" for none), and ``recomputed`` for a row printed again by the
    backward pass of ``jax.checkpoint``."""
    recomputed = phrases.RECOMPUTED if row.site.recomputed else None
    return " · ".join(p for p in (row.level_name, row.site.batch_label, row.site.device_label, recomputed) if p)


def row_cells(row: PrintRow) -> list[str]:
    """A row as the widget's table shows it: location, where, text."""
    return [row.site.location, where(row), row.text]


@dataclass
class Batch:
    """What one flush takes: the rows added since the last one, and the ends of the log."""

    offset: int  # index of the first new row
    total: int
    new: list[PrintRow]
    head: list[list[str]] | None  # the first SHOWN_ROWS rows, while the frontend lacks some
    tail: list[list[str]]  # the last SHOWN_ROWS rows
    static_stale: bool  # rows came after the log finished: its static output is out of date


class RowBuffer:
    """Every row of one log, and how many of them were sent."""

    def __init__(self) -> None:
        self.rows: list[PrintRow] = []
        self.finished = False  # the cell ended; rows still added go to the static output
        self._sent = 0
        self._started = time.monotonic()
        self.last_flush = self._started
        self._static_stale = False
        self._lock = threading.Lock()

    def add(self, row: PrintRow) -> int:
        """Append a row; the number of rows not yet sent."""
        with self._lock:
            self.rows.append(row)
            if self.finished:
                self._static_stale = True
            return len(self.rows) - self._sent

    def snapshot(self) -> list[PrintRow]:
        with self._lock:
            return list(self.rows)

    def due(self, now: float) -> bool:
        """Whether a flush is due: many rows wait, or the interval passed.

        The interval grows with the cell's running time (a twentieth of it), so a
        long cell that prints all along sends a bounded number of messages.
        """
        with self._lock:
            waiting = len(self.rows) - self._sent
        if waiting >= ROWS_PER_MESSAGE or (self.finished and self._static_stale):
            return True
        interval = min(MAX_FLUSH_INTERVAL_S, max(FLUSH_INTERVAL_S, (now - self._started) / 20))
        # Compared as a deadline, not a difference: (t + 0.2) - t can round below 0.2.
        return waiting > 0 and now >= self.last_flush + interval

    def take(self) -> Batch:
        """What is new since the last take, which counts as sent from now on."""
        with self._lock:
            offset, total = self._sent, len(self.rows)
            head_missing = offset < SHOWN_ROWS
            batch = Batch(
                offset=offset,
                total=total,
                new=self.rows[offset:],
                head=[row_cells(r) for r in self.rows[:SHOWN_ROWS]] if head_missing else None,
                tail=[row_cells(r) for r in self.rows[-SHOWN_ROWS:]],
                static_stale=self._static_stale,
            )
            self._static_stale = False
            self._sent = total
        return batch
