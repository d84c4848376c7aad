"""One print log per cell run, and the sink that ``jaxdbg.print`` rows go to.

:class:`PrintLogs` (installed by ``%load_ext jaxdbg``) takes every row and hands it to
the running cell's :class:`PrintLog`, which it opens with the cell's first row; a
background thread flushes the logs. A :class:`PrintLog` is the cell's rows
(:mod:`.buffer`), its live widget while the cell runs (:mod:`.widget`), and the static
output it leaves behind (:mod:`.static`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from jaxdbg.capture import jax_print_routing, prints
from jaxdbg.capture.prints import PrintRow
from jaxdbg.internals import ipykernel_kernel, ipykernel_parents, ipython_api
from jaxdbg_widgets.print_log import static
from jaxdbg_widgets.print_log.buffer import (
    FLUSH_INTERVAL_S,
    ROWS_PER_MESSAGE,
    RowBuffer,
)
from jaxdbg_widgets.print_log.widget import LiveLog, PrintLogWidget

__all__ = ["KEPT_LOGS", "PrintLog", "PrintLogs", "last_log", "load", "unload"]

KEPT_LOGS = 10  # logs of recent cells kept in memory (for last_log() and late rows)


class PrintLog:
    """Every row printed during one cell run, its widget while the cell runs, and the
    static output it leaves behind."""

    def __init__(self, title: str, parent: tuple[Any, dict] | None = None) -> None:
        self.title = title
        self.messages = 0  # state updates sent to the frontend
        self._buffer = RowBuffer()
        self._live = LiveLog(parent)
        self._send_lock = threading.Lock()

    @property
    def rows(self) -> list[PrintRow]:
        return self._buffer.rows

    @property
    def finished(self) -> bool:
        return self._buffer.finished

    @property
    def widget(self) -> PrintLogWidget | None:
        return self._live.widget

    # -- collecting ----------------------------------------------------------------
    def add(self, row: PrintRow) -> int:
        """Append a row; the number of rows not yet sent."""
        return self._buffer.add(row)

    def show(self) -> None:
        """Display the live widget in the cell this log belongs to."""
        self._live.show(self.title)

    def due(self, now: float) -> bool:
        """Whether a flush is due (see :meth:`.buffer.RowBuffer.due`)."""
        return self._buffer.due(now)

    def flush(self) -> None:
        """Send the rows added since the last flush as one state update."""
        self._buffer.last_flush = time.monotonic()
        with self._send_lock:
            batch = self._buffer.take()
            if self.finished:
                if batch.static_stale:
                    self._live.show_static(self._repr_mimebundle_)
                return
            if self._live.send(batch):
                self.messages += 1

    def finish(self) -> None:
        """The cell ended: send the rest, then leave static output in place of the widget."""
        self.flush()
        with self._send_lock:
            self._buffer.finished = True
            release_busy = self._live.close(self._repr_mimebundle_)
        if release_busy is not None:
            release_busy()

    # -- what stays ------------------------------------------------------------------
    def text(self) -> str:
        """Every row as a line: location, batch / device, then the printed text."""
        return static.text(self._buffer.snapshot())

    def save(self, path: str | Path) -> Path:
        """Write :meth:`text` to ``path``; the path."""
        return static.save(self._buffer.snapshot(), path)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return static.mimebundle(self.title, self._buffer.snapshot())

    def plain_summary(self) -> str:
        return static.plain_summary(self.title, self._buffer.snapshot())

    def html(self) -> str:
        return static.html(self.title, self._buffer.snapshot())


class PrintLogs:
    """Routes rows to the running cell's log and flushes logs from one background thread."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.logs: list[PrintLog] = []  # of this kernel's life, newest last
        self._current: PrintLog | None = None
        self._cell: tuple[str, tuple[Any, dict] | None] | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous_sink: Callable[[PrintRow], None] | None = None
        self._unregister_cells: Callable[[], None] = lambda: None

    # -- lifetime --------------------------------------------------------------------
    def install(self) -> None:
        self._unregister_cells = ipython_api.register_cell_events(
            self.shell, pre_run_cell=self.pre_run_cell, post_run_cell=self.post_run_cell
        )
        self._previous_sink = prints.set_sink(self.add)
        jax_print_routing.route_jax_print()
        self._thread = threading.Thread(target=self._flush_loop, name="jaxdbg-print-log", daemon=True)
        self._thread.start()

    def uninstall(self) -> None:
        self._unregister_cells()
        jax_print_routing.unroute_jax_print()
        prints.set_sink(self._previous_sink)
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._finish_current()

    # -- cells -----------------------------------------------------------------------
    def pre_run_cell(self, info: Any = None) -> None:
        self._finish_current()  # a cell whose post_run_cell never ran
        with self._lock:
            self._cell = (self._cell_title(), self._parent_now())

    def post_run_cell(self, result: Any = None) -> None:
        count = getattr(result, "execution_count", None)
        # Leave the cell in the same step as taking its log, so a row an XLA thread
        # prints while the log is finished joins it instead of opening a second log.
        with self._lock:
            log, self._current, self._cell = self._current, None, None
            if log is not None and count is not None:
                log.title = f"In[{count}] print log"
        if log is not None:
            log.finish()

    def _finish_current(self) -> None:
        with self._lock:
            log, self._current = self._current, None
        if log is not None:
            log.finish()

    def _cell_title(self) -> str:
        # The cell's number is known for sure only at its end (IPython versions differ
        # on when execution_count moves); post_run_cell sets it.
        return "print log"

    def _parent_now(self) -> tuple[Any, dict] | None:
        kernel = ipykernel_kernel.current_kernel()
        if kernel is None:
            return None
        try:
            return ipykernel_parents.cell_parent(kernel)
        except Exception:
            return None

    # -- rows ------------------------------------------------------------------------
    def add(self, row: PrintRow) -> None:
        with self._lock:
            log = self._current
            if log is None:
                if self._cell is None and self.logs:
                    log = self.logs[-1]  # arrived after its cell ended (asynchronous dispatch)
                else:
                    title, parent = self._cell or (self._cell_title(), self._parent_now())
                    log = self._current = PrintLog(title, parent)
                    self.logs.append(log)
                    del self.logs[:-KEPT_LOGS]
                    log.show()
        if log.add(row) >= ROWS_PER_MESSAGE or log.finished:
            self._wake.set()

    def _flush_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(FLUSH_INTERVAL_S / 2)
            self._wake.clear()
            with self._lock:
                logs = [log for log in self.logs[-2:]]
            now = time.monotonic()
            for log in logs:
                try:
                    if log.due(now):
                        log.flush()
                except Exception:
                    pass


_installed: PrintLogs | None = None


def load(shell: Any) -> None:
    """The ``print-log`` feature of ``%load_ext jaxdbg``."""
    global _installed
    if _installed is not None or getattr(shell, "kernel", None) is None:
        return
    _installed = PrintLogs(shell)
    _installed.install()


def unload(shell: Any) -> None:
    global _installed
    if _installed is not None:
        _installed.uninstall()
        _installed = None


def last_log() -> PrintLog | None:
    """The newest cell's print log (to ``save`` it, or read its ``rows``)."""
    return _installed.logs[-1] if _installed is not None and _installed.logs else None
