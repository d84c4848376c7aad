"""An ended panel's static summary, redrawn while the stops passed after it take watch values.

After ``continue all`` the panel has been replaced by its static summary, but the passed
stops of its breakpoint still evaluate its watches. A :class:`LiveSummary` thread looks
every ``interval`` seconds at how many values the watches have taken
(:meth:`jaxdbg.engine.watches.WatchBook.recorded`, one dict read) and redraws the summary
when that moved; :meth:`LiveSummary.stop` (when the cell is done) redraws it once more.
A passed stop itself only counts its value: it never waits for a drawing.
"""

from __future__ import annotations

import threading
from typing import Callable

REDRAW_INTERVAL_S = 0.5


class LiveSummary:
    """Calls ``redraw()`` on its own thread, at most every ``interval`` seconds, whenever
    ``recorded()`` has changed; :meth:`stop` ends the thread and redraws a last time."""

    def __init__(
        self, recorded: Callable[[], int], redraw: Callable[[], None], interval: float = REDRAW_INTERVAL_S
    ) -> None:
        self._recorded = recorded
        self._redraw = redraw
        self._interval = interval
        self._stopped = threading.Event()
        self._drawing = threading.Lock()  # the last redraw never runs beside a periodic one
        self._seen = recorded()
        self._thread = threading.Thread(target=self._run, name="jaxdbg-live-summary", daemon=True)

    def start(self) -> "LiveSummary":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            now = self._recorded()
            if now != self._seen:
                self._seen = now
                with self._drawing:
                    if not self._stopped.is_set():
                        self._draw()

    def _draw(self) -> None:
        try:
            self._redraw()
        except Exception:  # a summary that cannot be drawn now is drawn at the end
            pass

    def stop(self) -> None:
        """End the redraws, then draw the summary as it reads now."""
        self._stopped.set()
        with self._drawing:
            self._draw()
