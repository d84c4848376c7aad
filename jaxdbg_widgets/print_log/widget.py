"""The live print log: the widget shown in a running cell, and keeping it in sync.

The widget shows the first and last rows, the count, a filter and a Save button
(``print_log.js``). Each flush is one state update (``hold_sync``): the ends of the log
and the new rows as a ``chunk`` the page keeps for its filter and Save. Displays go to
the log's own cell even from XLA threads, and the cell says busy while its log is live.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any, Callable

import anywidget
import traitlets

from jaxdbg import config
from jaxdbg.internals import ipykernel_busy, ipykernel_kernel, ipykernel_parents
from jaxdbg_widgets.print_log.buffer import Batch, row_cells

__all__ = ["LiveLog", "PrintLogWidget"]

_STATIC = Path(__file__).resolve().parents[1] / "static"


class PrintLogWidget(anywidget.AnyWidget):
    """The live view: first and last rows, the count, a filter and a Save button."""

    _esm = (_STATIC / "print_log.js").read_text(encoding="utf-8")
    _css = (_STATIC / "print_log.css").read_text(encoding="utf-8")
    log_id = traitlets.Unicode().tag(sync=True)  # names this log's rows in the page
    title = traitlets.Unicode("print log").tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    head: traitlets.List[Any] = traitlets.List().tag(sync=True)
    tail: traitlets.List[Any] = traitlets.List().tag(sync=True)
    chunk = traitlets.Dict().tag(sync=True)  # {"offset": first row's index, "rows": [...]}


class LiveLog:
    """One log's widget in its cell, from :meth:`show` until :meth:`close`.

    ``parent`` is the cell's ``(ident, parent header)``, or None outside a kernel cell.
    """

    def __init__(self, parent: tuple[Any, dict] | None) -> None:
        self._parent = parent
        self.widget: PrintLogWidget | None = None
        self._handle: Any = None
        self._release_busy: Callable[[], None] | None = None

    def show(self, title: str) -> None:
        """Display the live widget in the cell this log belongs to; where this cell's
        frontend is known not to draw widgets (a stop found out), nothing yet: the static
        log, whose text carries every row, is displayed when the cell ends."""
        from IPython.display import display

        if not _frontend_draws_widgets(self._parent):
            return
        # Before the widget: its comm opens as it is made, and the frontend's subshell
        # request for it may be answered (busy, idle) before the next line runs.
        self._keep_cell_busy()
        try:
            self.widget = PrintLogWidget(title=title, log_id=uuid.uuid4().hex)
        except BaseException:
            release, self._release_busy = self._release_busy, None
            if release is not None:
                release()
            raise
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

    def send(self, batch: Batch) -> bool:
        """Send the batch's rows as one state update; whether there was one to send."""
        if not batch.new or self.widget is None:
            return False
        with self.widget.hold_sync():
            if batch.head is not None:
                self.widget.head = batch.head
            self.widget.tail = batch.tail
            self.widget.chunk = {"offset": batch.offset, "rows": [row_cells(r) for r in batch.new]}
            self.widget.total = batch.total
        return True

    def show_static(self, bundle: Callable[[], dict[str, str]]) -> None:
        """Put ``bundle()`` (the static output) where the widget was shown (or, where no
        widget was shown, into the cell as a new display)."""
        if self._handle is None:
            if self.widget is None:
                from IPython.display import display

                with _InCell(self._parent):
                    self._handle = display(bundle(), raw=True, display_id=True)
            return
        with _InCell(self._parent):
            try:
                self._handle.update(bundle(), raw=True)
            except Exception:
                pass

    def close(self, bundle: Callable[[], dict[str, str]]) -> Callable[[], None] | None:
        """Leave the static output in the widget's place and close the widget; returns
        what gives the cell its own status back, to call once the log is done."""
        release_busy, self._release_busy = self._release_busy, None
        self.show_static(bundle)
        if self.widget is not None:
            self.widget.close()
        return release_busy


def _frontend_draws_widgets(parent: tuple[Any, dict] | None) -> bool:
    """False once a stop found that the frontend which ran this cell draws no widgets."""
    header = (parent[1] or {}).get("header") if parent is not None else None
    client = str((header or {}).get("session") or "")
    drawing = config.PANEL_DRAWING
    return drawing.forced or drawing.of(client) is not config.PanelDrawn.NOT_DRAWN


class _InCell:
    """Pin this thread's displays to the log's cell (prints can run on XLA threads)."""

    def __init__(self, parent: tuple[Any, dict] | None) -> None:
        self.parent = parent
        self.undo: Callable[[], None] | None = None

    def __enter__(self) -> None:
        kernel = ipykernel_kernel.current_kernel()
        if kernel is not None and self.parent is not None and threading.current_thread() is not threading.main_thread():
            self.undo = ipykernel_parents.pin_thread_parent(kernel, *self.parent)

    def __exit__(self, *exc: Any) -> None:
        if self.undo is not None:
            self.undo()
