"""The print log: one widget per cell run that collects ``jaxdbg.print`` rows.

Rows arrive on whichever thread runs the callback (the kernel's main thread, or
XLA threads under pmap). They are appended under a lock; a background thread
sends what is new every :data:`FLUSH_INTERVAL_S` (sooner after
:data:`ROWS_PER_MESSAGE` rows) as one widget state update, so 10,000 prints from a
scan reach the frontend in a few dozen messages. When the cell ends the widget is
replaced by static HTML plus a readable ``text/plain`` of every row, which is what
a saved notebook and nbconvert show.
"""

from __future__ import annotations

import base64
import threading
import uuid
import time
from pathlib import Path
from typing import Any, Callable

import anywidget
import traitlets
from markupsafe import Markup, escape

from jaxdbg.capture import prints
from jaxdbg.internals import ipykernel_busy, ipykernel_kernel, ipykernel_parents, ipython_api
from jaxdbg.capture.prints import PrintRow
from jaxdbg.views import theme

FLUSH_INTERVAL_S = 0.2  # newest rows reach the frontend this soon while a cell starts
MAX_FLUSH_INTERVAL_S = 2.0
ROWS_PER_MESSAGE = 2_000  # a flush is due sooner once this many rows wait
SHOWN_ROWS = 20  # rows shown at each end of the log
KEPT_LOGS = 10  # logs of recent cells kept in memory (for last_log() and late rows)
_STATIC = Path(__file__).resolve().parents[1] / "static"


def _where(row: PrintRow) -> str:
    return " · ".join(p for p in (row.site.batch_label, row.site.device_label) if p)


def _cells(row: PrintRow) -> list[str]:
    return [row.site.location, _where(row), row.text]


class PrintLogWidget(anywidget.AnyWidget):
    """The live view: first and last rows, the count, a filter and a Save button."""

    _esm = (_STATIC / "print_log.js").read_text(encoding="utf-8")
    _css = (_STATIC / "print_log.css").read_text(encoding="utf-8")
    log_id = traitlets.Unicode().tag(sync=True)  # names this log's rows in the page
    title = traitlets.Unicode("print log").tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    head = traitlets.List().tag(sync=True)
    tail = traitlets.List().tag(sync=True)
    chunk = traitlets.Dict().tag(sync=True)  # {"offset": first row's index, "rows": [...]}


class PrintLog:
    """Every row printed during one cell run, its widget while the cell runs, and the
    static output it leaves behind."""

    def __init__(self, title: str, parent: tuple[Any, dict] | None = None) -> None:
        self.title = title
        self.rows: list[PrintRow] = []
        self.messages = 0  # state updates sent to the frontend
        self.finished = False
        self._parent = parent
        self._sent = 0
        self._started = time.monotonic()
        self._last_flush = self._started
        self._static_stale = False
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self.widget: PrintLogWidget | None = None
        self._handle: Any = None
        self._release_busy: Callable[[], None] | None = None

    # -- collecting ----------------------------------------------------------------
    def add(self, row: PrintRow) -> int:
        """Append a row; the number of rows not yet sent."""
        with self._lock:
            self.rows.append(row)
            if self.finished:
                self._static_stale = True
            return len(self.rows) - self._sent

    def show(self) -> None:
        """Display the live widget in the cell this log belongs to."""
        from IPython.display import display

        self.widget = PrintLogWidget(title=self.title, log_id=uuid.uuid4().hex)
        self._keep_cell_busy()
        with _InCell(self._parent):
            self._handle = display(self.widget, display_id=True)

    def _keep_cell_busy(self) -> None:
        """Requests handled while the cell runs (JupyterLab opens a subshell for the
        widget's comm on the control channel) each end with an idle, and the status bar
        shows the last status: say busy again for the running cell until it ends."""
        kernel = ipykernel_kernel.current_kernel()
        if kernel is None or self._parent is None:
            return
        try:
            self._release_busy = ipykernel_busy.keep_cell_busy(kernel, self._parent[1])
        except Exception:
            self._release_busy = None

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
        return waiting > 0 and now - self._last_flush >= interval

    def flush(self) -> None:
        """Send the rows added since the last flush as one state update."""
        self._last_flush = time.monotonic()
        with self._send_lock:
            with self._lock:
                new = self.rows[self._sent:]
                offset, total = self._sent, len(self.rows)
                head_missing = offset < SHOWN_ROWS
                head = [_cells(r) for r in self.rows[:SHOWN_ROWS]] if head_missing else None
                tail = [_cells(r) for r in self.rows[-SHOWN_ROWS:]]
                stale, self._static_stale = self._static_stale, False
                self._sent = total
            if self.finished:
                if stale:
                    self._show_static()
                return
            if not new or self.widget is None:
                return
            with self.widget.hold_sync():
                if head is not None:
                    self.widget.head = head
                self.widget.tail = tail
                self.widget.chunk = {"offset": offset, "rows": [_cells(r) for r in new]}
                self.widget.total = total
            self.messages += 1

    def finish(self) -> None:
        """The cell ended: send the rest, then leave static output in place of the widget."""
        self.flush()
        with self._send_lock:
            self.finished = True
            release_busy, self._release_busy = self._release_busy, None
            self._show_static()
            if self.widget is not None:
                self.widget.close()
        if release_busy is not None:
            release_busy()

    def _show_static(self) -> None:
        if self._handle is None:
            return
        with _InCell(self._parent):
            try:
                self._handle.update(self._repr_mimebundle_(), raw=True)
            except Exception:
                pass

    # -- what stays ------------------------------------------------------------------
    def text(self) -> str:
        """Every row as a line: location, batch / device, then the printed text."""
        with self._lock:
            rows = list(self.rows)
        lines = []
        for row in rows:
            where = _where(row)
            lines.append(f"{row.site.location}  {where + '  ' if where else ''}| {row.text}")
        return "\n".join(lines) + ("\n" if lines else "")

    def save(self, path: str | Path) -> Path:
        """Write :meth:`text` to ``path``; the path."""
        path = Path(path)
        path.write_text(self.text(), encoding="utf-8")
        return path

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.plain_summary()}

    def plain_summary(self) -> str:
        count = len(self.rows)
        return f"jaxdbg print log ({self.title}, {count:,} row{'s' if count != 1 else ''})\n" + self.text()

    def html(self) -> str:
        with self._lock:
            rows = list(self.rows)
        count = len(rows)
        full = self.text()
        data = base64.b64encode(full.encode("utf-8")).decode("ascii")
        filename = "".join(c if c.isalnum() or c in "._-" else "_" for c in self.title) + ".txt"
        hidden = count - min(count, 2 * SHOWN_ROWS)
        return Markup(
            '<div class="jaxdbg-print-log jaxdbg-static" style="{box}">'
            '<div style="margin-bottom:4px"><b>{title}</b> · {count} · '
            '<a download="{filename}" href="data:text/plain;charset=utf-8;base64,{data}">Save log</a></div>'
            '{table}{groups}{details}</div>').format(
                box=_BOX, title=self.title, count=_rows_label(count),
                filename=filename, data=data, table=_rows_table(rows), groups=_groups_html(rows),
                details=Markup('<details><summary>All {:,} rows as text</summary>'
                               '<pre style="{}">{}</pre></details>').format(count, _MONO, full)
                if hidden else "")


def _rows_label(count: int) -> str:
    return f"{count:,} row{'s' if count != 1 else ''}"


def _rows_table(rows: list[PrintRow]) -> Markup:
    """The first and last SHOWN_ROWS rows with a count of those between."""
    first = rows[:SHOWN_ROWS]
    last = rows[max(SHOWN_ROWS, len(rows) - SHOWN_ROWS):]
    hidden = len(rows) - len(first) - len(last)
    body = [_row_html(r) for r in first]
    if hidden:
        body.append(Markup('<tr><td colspan="3" style="{}">… {:,} more rows …</td></tr>')
                    .format(_MUTED + "font-style:italic;", hidden))
    body += [_row_html(r) for r in last]
    return Markup('<table style="border-collapse:collapse">{}</table>').format(Markup("").join(body))


def _groups_html(rows: list[PrintRow]) -> Markup:
    """The static log's filter: one ``<details>`` per source line and per device (when
    there are several), each holding that group's rows. Plain HTML, no script, so it
    works in an untrusted notebook too."""
    parts = []
    for title, key in (("by line", lambda r: r.site.location), ("by device", lambda r: r.site.device_label)):
        groups: dict[str, list[PrintRow]] = {}
        for row in rows:
            name = key(row)
            if name:
                groups.setdefault(name, []).append(row)
        if len(groups) < 2:
            continue
        items = Markup("").join(
            Markup('<details class="jaxdbg-pl-group"><summary style="cursor:pointer">{} · {}</summary>{}</details>')
            .format(name, _rows_label(len(members)), _rows_table(members))
            for name, members in groups.items())
        parts.append(Markup('<div class="jaxdbg-pl-groups" style="margin-top:4px">'
                            '<div style="{}">Show only the rows {}:</div>{}</div>').format(_MUTED, title, items))
    return Markup("").join(parts)


_MONO = theme.MONO + "margin:0;"
_MUTED = theme.MUTED
_BOX = theme.BOX
_TD = "padding:0 8px 0 0;vertical-align:top;white-space:pre;text-align:left;"


def _row_html(row: PrintRow) -> Markup:
    return Markup('<tr><td style="{muted}">{loc}</td><td style="{muted}">{where}</td>'
                  '<td style="{td}">{text}</td></tr>').format(
        muted=_TD + _MUTED, td=_TD, loc=row.site.location, where=_where(row), text=escape(row.text))


class _InCell:
    """Pin this thread's displays to the log's cell (prints can run on XLA threads)."""

    def __init__(self, parent: tuple[Any, dict] | None) -> None:
        self.parent = parent
        self.undo: Callable[[], None] | None = None

    def __enter__(self) -> None:
        kernel = ipykernel_kernel.current_kernel()
        if kernel is not None and self.parent is not None and \
                threading.current_thread() is not threading.main_thread():
            self.undo = ipykernel_parents.pin_thread_parent(kernel, *self.parent)

    def __exit__(self, *exc: Any) -> None:
        if self.undo is not None:
            self.undo()


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
            self.shell, pre_run_cell=self.pre_run_cell, post_run_cell=self.post_run_cell)
        self._previous_sink = prints.set_sink(self.add)
        prints.route_jax_print()
        self._thread = threading.Thread(target=self._flush_loop, name="jaxdbg-print-log", daemon=True)
        self._thread.start()

    def uninstall(self) -> None:
        self._unregister_cells()
        prints.unroute_jax_print()
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
