"""The ``widgets`` debugger backend: the panel in the cell that hit the breakpoint.

The breakpoint's thread owns the Session. It shows a :class:`DebuggerPanel`, then
parks on a :class:`PauseChannel` whose widget handlers only post commands; the
driver (:mod:`jaxdbg.frontends.driver`) takes each one to the panel, which runs it
through the session and redraws. When the stop ends, the panel collapses to static
HTML, also written into the cell's output as a plain ``text/html`` bundle so a saved
notebook or nbconvert shows it without a kernel.

Whether anyone can click is found out, not assumed: a frontend without a widget
manager (jupyter console, qtconsole, an editor's client, a VS Code whose widget renderer
failed) prints the panel's text and never draws it. The panel's browser code says
``held`` when a widget manager holds it and ``drawn`` when a view renders; when neither
comes within :data:`jaxdbg.config.PANEL_DRAW_WAIT_S`, the stop is answered at the typed
prompt (or continued, when the cell allows no stdin), and later stops of that client go
to the prompt at once (:data:`jaxdbg.config.PANEL_DRAWING`). The decision is made before
any stdin request, which a frontend cannot withdraw.

When widget clicks cannot reach this thread (``Mechanism.PROMPT``) or the panel
was closed while paused, it says so and falls back to the typed prompt of
:func:`jaxdbg.frontends.cli.run_cli`, which reads with ``input()`` from any thread. When the
frontend reports that the panel's last view was removed (Clear Output), the panel is
shown in the cell again.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from typing import Any, Optional

from jaxdbg import config
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.session import Session
from jaxdbg.frontends import cli, driver
from jaxdbg.internals import ipykernel_kernel, ipykernel_parents, ipython_api
from jaxdbg.runtime import interrupts, notices, phrases
from jaxdbg_widgets.panel.protocol import PRESENCE, TYPE

HEADER_REFRESH_S = 0.5  # how often a paused panel re-reads the count of waiting stops
NOT_DRAWN = "this frontend did not draw the jaxdbg panel"
NOT_DRAWN_LINE = f"{NOT_DRAWN}; answering here"
PANEL_CONTEXT = phrases.PANEL_CONTEXT  # default ``context``: source lines either side of the current line
# The panel's own option, plus the typed prompt's (used when falling back to it).
OPTIONS = tuple(dict.fromkeys(("context", *cli.OPTIONS)))


class NotDrawnNotices:
    """The not-drawn line is said at the first stop of each cell only: a scan or a pmap
    would otherwise print it again before every prompt of the cell."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_cell: str | None = None  # the request id of the cell last told

    def line_for(self, parent: dict | None) -> str:
        """The line to say at this stop of the cell of ``parent``: "" once said there."""
        cell = ((parent or {}).get("header") or {}).get("msg_id")
        with self._lock:
            if cell is not None and cell == self._last_cell:
                return ""
            self._last_cell = cell
        return NOT_DRAWN_LINE


NOT_DRAWN_NOTICES = NotDrawnNotices()


def available() -> bool:
    """True inside an ipykernel with ipywidgets installed (the frontend can show widgets)."""
    if importlib.util.find_spec("ipywidgets") is None:
        return False
    return ipykernel_kernel.current_kernel() is not None


def prepare() -> None:
    """From the kernel's main thread (when a panel breakpoint is traced, or on
    ``%load_ext``): interrupts and cell tracking for XLA-thread stops. Idempotent."""
    if ipykernel_kernel.current_kernel() is None or threading.current_thread() is not threading.main_thread():
        return
    try:
        from jaxdbg_widgets import pause

        pause.install()
    except Exception:
        pass


def _output_to_cell(kernel: Any, parent: dict | None):
    """Send this thread's displays to the paused cell (ipykernel 7 pins per thread,
    which PauseChannel does; ipykernel 6 needs the display publisher's parent set)."""
    return ipykernel_parents.display_parent_6x(kernel, parent)


def _show_in_queued_cell(session: Session, panel: Any, kernel: Any, parent: dict, with_panel: bool) -> Any:
    """A cell run while this stop is paused (after a reload without saving the page
    shows no stop) gets a line saying why it waits, and the live panel itself; the
    handle of that view (None when it could not be shown).

    The view gets a display id of its own: a display reusing the paused cell's id makes
    the frontend redraw the paused cell's view too, dropping what is typed in it."""
    from IPython.display import display

    line = notices.phrase(
        f"this cell waits: the kernel is paused at {session.banner()}. "
        "Answer the stop in the panel below, or interrupt the kernel to end it."
    )
    undo = ipykernel_parents.pin_thread_parent(kernel, None, parent)
    try:
        with _output_to_cell(kernel, parent):
            # a display, not a print: ipykernel 6.17's streams have one global parent
            display({"text/plain": line}, raw=True)
            return display(panel.widget, display_id=True) if with_panel else None
    finally:
        undo()


def run_widget_debugger(session: Session, **options: Any) -> None:
    """Serve one stop with the debugger panel; returns when the session has ended.

    ``options`` are passed on to the terminal prompt when falling back to it
    (e.g. ``stdin=`` / ``stdout=`` in scripts). KeyboardInterrupt propagates.
    """
    from jaxdbg_widgets.pause import PauseChannel

    channel = PauseChannel()
    with channel:  # pins this thread's prints and prompts to the paused cell
        channel.report_queued_cells()
        panel = PanelInCell(channel, options)
        driver.drive(
            session, panel, options=options, fallback=lambda session: cli.run_cli(session, **panel.prompt_options)
        )


class PanelInCell(driver.Frontend):
    """The panel in the paused cell; its commands come through the PauseChannel."""

    def __init__(self, channel: Any, options: dict[str, Any]) -> None:
        self.channel = channel
        self.options = {"context": PANEL_CONTEXT, **options}  # the caller's dict is not touched
        self.prompt_options = options  # the typed prompt's; once the panel is shown, the panel's
        self.kernel = ipykernel_kernel.current_kernel()
        self.parent: dict | None = None
        self.panel: Any = None
        self.display_handle: Any = None
        # The panel's views in cells queued behind this one, each with its cell's request.
        self.queued_views: list[tuple[Any, dict]] = []
        self.client = ""  # the Jupyter session id of the frontend that ran the cell
        self.shown_at = 0.0
        self.draw_deadline: float | None = None  # until a frontend says it holds the panel

    def open(self, session: Session) -> None:
        from IPython.display import display

        from jaxdbg_widgets.panel.panel import DebuggerPanel
        from jaxdbg_widgets.pause import Mechanism

        channel = self.channel
        if channel.mechanism is Mechanism.PROMPT:
            raise driver.FallBack(
                "the debugger panel cannot receive clicks here" + (f" ({channel.detail})" if channel.detail else "")
            )
        if self.kernel is not None:
            try:
                self.parent = ipykernel_parents.cell_parent(self.kernel)[1]
            except Exception:
                self.parent = None
        self.client = str(((self.parent or {}).get("header") or {}).get("session") or "")
        drawing = config.PANEL_DRAWING
        seen = drawing.of(self.client)
        if seen is config.PanelDrawn.NOT_DRAWN and not drawing.forced:
            # found at an earlier stop
            raise driver.FallBack(NOT_DRAWN, line=NOT_DRAWN_NOTICES.line_for(self.parent))
        session.context = self.options["context"]
        self.prompt_options = self.options
        # The comm is routed before the frontend hears of it, so even a command sent the
        # moment the panel appears reaches this stop.
        self.panel = DebuggerPanel(
            session, post=channel.post, context=self.options["context"], before_open=channel.attach
        )
        answered = (
            "answering at the prompt below"
            if driver.interactive_input_available(self.options)
            else "continuing, since nothing can answer a prompt here"
        )
        self.panel.widget.text_form = self.panel.text_form(f"no panel here, {answered}")
        with _output_to_cell(self.kernel, self.parent):
            self.display_handle = display(self.panel.widget, display_id=True)
        self.shown_at = time.monotonic()
        if seen is config.PanelDrawn.UNKNOWN and not drawing.forced:
            self.draw_deadline = self.shown_at + config.PANEL_DRAW_WAIT_S

        def end_stuck() -> None:
            """An interrupted command that cannot be ended at once: the panel ends now,
            saying so (called on another thread, whose output is pinned to the cell too)."""
            with channel.pinned():
                self._finish(notices.phrase(interrupts.STUCK_NOTICE))

        session.on_stuck_command = end_stuck

    def read(self, session: Session) -> Any:
        from jaxdbg_widgets.pause import CLOSED, HIDDEN, UNRESPONSIVE, QueuedCell

        timeout = HEADER_REFRESH_S
        if self.draw_deadline is not None:
            timeout = max(0.0, min(timeout, self.draw_deadline - time.monotonic()))
        # Past the deadline this still looks once: on a loaded machine the frontend's
        # ``held`` may be waiting to be read, and it counts as in time.
        command = self.channel.wait(timeout=timeout)
        if isinstance(command, dict):  # only a frontend that holds the panel sends any
            self._heard(command)
            if command.get(TYPE) in PRESENCE:
                return None
        if command is None:  # timed out
            if self.draw_deadline is not None and time.monotonic() >= self.draw_deadline:
                # Decided before any stdin request, which cannot be withdrawn.
                config.PANEL_DRAWING.record(self.client, drawn=False)
                raise driver.FallBack(NOT_DRAWN, line=NOT_DRAWN_NOTICES.line_for(self.parent))
            self.panel.refresh_header()  # only the waiting count may have moved
            return None
        if isinstance(command, QueuedCell):
            shown = self.display_handle is not None
            view = _show_in_queued_cell(session, self.panel, self.kernel, command.parent, with_panel=shown)
            if view is not None:
                self.queued_views.append((view, command.parent))
            return None
        if command is HIDDEN:
            # Clear Output removed every view while the stop still needs an answer.
            if self.display_handle is not None:
                with _output_to_cell(self.kernel, self.parent):
                    self.display_handle.display(self.panel.widget)
            return None
        if command is CLOSED:
            raise driver.FallBack("the debugger panel was closed")
        if command is UNRESPONSIVE:
            detail = self.channel.detail
            raise driver.FallBack("the debugger panel stopped receiving clicks" + (f" ({detail})" if detail else ""))
        if not isinstance(command, dict):
            return None  # not a browser message (the panel ignores those, so a line never runs)
        return command  # the panel runs it (handle)

    def _heard(self, command: dict) -> None:
        """A message from the panel's browser code: the frontend holds the panel."""
        kind = command.get(TYPE)
        if kind in PRESENCE:
            config.PANEL_DRAWING.heard(self.client, str(kind), time.monotonic() - self.shown_at)
        if self.draw_deadline is not None:
            self.draw_deadline = None
            config.PANEL_DRAWING.record(self.client, drawn=True)

    def handle(self, session: Session, command: Any) -> None:
        self.panel.handle(command)

    def close(self, session: Session, fell_back: str | None = None) -> None:
        note = f"{fell_back}; continued at the text prompt." if fell_back else None
        if fell_back == NOT_DRAWN:  # what a view drawn late shows: the stop is answered elsewhere
            answered = (
                "this stop is being answered at the prompt"
                if driver.interactive_input_available(self.prompt_options)
                else "this stop continued, since nothing could answer a prompt"
            )
            note = f"{NOT_DRAWN} within {config.PANEL_DRAW_WAIT_S:g} s; {answered}."
        self._finish(note)

    def _finish(self, note: str | None) -> None:
        views = [(self.display_handle, self.parent), *self.queued_views] if self.display_handle is not None else []
        _finish(self.panel, views, self.kernel, note)


# A view of the panel: its display handle, and the request of the cell it is in.
View = tuple[Any, Optional[dict]]


def _finish(panel: Any, views: list[View], kernel: Any, note: str | None) -> None:
    """End the panel (if a command has not already), put its static summary in place of
    each view of it (the paused cell's, and those of cells queued behind it), then close
    the widget's comm: a finished stop keeps no comm open."""
    panel.finish(note)
    if views:
        _show_summary(panel.finished_display, views, kernel)
        if panel.session.resume is Resume.CONTINUE_ALL and panel.session.watched():
            _follow_watches(panel, views, kernel)
    panel.close()


def _follow_watches(panel: Any, views: list[View], kernel: Any) -> None:
    """The stops passed next give the watches their values: the summary shows them as
    they come (redrawn on a thread of its own, throttled), and the whole history once
    the cell is done."""
    from jaxdbg.engine import watches
    from jaxdbg_widgets.panel.live_summary import LiveSummary

    book = panel.session.watch_book or watches.LIVE
    number = panel.session.info.breakpoint_id

    def redraw() -> None:  # on the summary's own thread
        _show_summary(panel.summary_display(), views, kernel)

    if ipython_api.shell() is None:  # no cell to end: drawn once, as it reads now
        redraw()
        return
    live = LiveSummary(lambda: book.recorded(number), redraw).start()
    ipython_api.on_cell_finished(live.stop)


def _show_summary(display: Any, views: list[View], kernel: Any) -> None:
    """Each view replaced by ``display``, the update sent as output of the view's cell."""
    for handle, parent in views:
        undo = ipykernel_parents.pin_thread_parent(kernel, None, parent) if parent else (lambda: None)
        try:
            with _output_to_cell(kernel, parent):
                handle.update(display)  # HTML with a readable text/plain twin (jaxdbg.views.html)
        except Exception:
            pass
        finally:
            undo()
