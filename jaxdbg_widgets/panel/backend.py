"""The ``widgets`` debugger backend: the panel in the cell that hit the breakpoint.

The breakpoint's thread owns the Session. It shows a :class:`DebuggerPanel`, then
parks on a :class:`PauseChannel` whose widget handlers only post commands; each
command runs through the session here and the panel is redrawn. When the stop ends,
the panel collapses to static HTML, also written into the cell's output as a plain
``text/html`` bundle so a saved notebook or nbconvert shows it without a kernel.

When widget clicks cannot reach this thread (``Mechanism.PROMPT``) or the panel
was closed while paused, it says so and falls back to the typed prompt of
:func:`jaxdbg.frontends.cli.run_cli`, which reads with ``input()`` from any thread. When the
frontend reports that the panel's last view was removed (Clear Output), the panel is
shown in the cell again.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from jaxdbg.frontends import cli
from jaxdbg.engine import interrupts
from jaxdbg.frontends import scripted
from jaxdbg.internals import ipykernel_api as api
from jaxdbg.engine.session import Session

HEADER_REFRESH_S = 0.5  # how often a paused panel re-reads the count of waiting stops
PANEL_CONTEXT = 8  # default ``context``: source lines either side of the current line
# The panel's own option, plus the typed prompt's (used when falling back to it).
OPTIONS = tuple(dict.fromkeys(("context", *cli.OPTIONS)))


def available() -> bool:
    """True inside an ipykernel with ipywidgets installed (the frontend can show widgets)."""
    if importlib.util.find_spec("ipywidgets") is None:
        return False
    return api.current_kernel() is not None


def prepare() -> None:
    """From the kernel's main thread (when a panel breakpoint is traced, or on
    ``%load_ext``): interrupts and cell tracking for XLA-thread stops. Idempotent."""
    import threading

    if api.current_kernel() is None or threading.current_thread() is not threading.main_thread():
        return
    try:
        from jaxdbg_widgets.pause import channel as pause

        pause.install()
    except Exception:
        pass


def _output_to_cell(kernel: Any, parent: dict | None):
    """Send this thread's displays to the paused cell (ipykernel 7 pins per thread,
    which PauseChannel does; ipykernel 6 needs the display publisher's parent set)."""
    return api.display_parent_6x(kernel, parent)


def _show_in_queued_cell(session: Session, panel: Any, handle: Any, kernel: Any, parent: dict) -> None:
    """A cell run while this stop is paused (after a reload without saving the page
    shows no stop) gets a line saying why it waits, and the live panel itself."""
    from IPython.display import display

    line = (f"jaxdbg: this cell waits: the kernel is paused at {session.banner()}. "
            "Answer the stop in the panel below, or interrupt the kernel to end it.")
    undo = api.pin_thread_parent(kernel, None, parent)
    try:
        with _output_to_cell(kernel, parent):
            # a display, not a print: ipykernel 6.17's streams have one global parent
            display({"text/plain": line}, raw=True)
            if handle is not None:  # the same display: the stop's summary replaces it here too
                handle.display(panel.widget)
    finally:
        undo()


def _notice(text: str) -> None:
    print(f"jaxdbg: {text}", flush=True)


def _fallback(session: Session, why: str, options: dict[str, Any]) -> None:
    if not scripted.interactive_input_available(options):  # nbclient, papermill, Voila
        scripted.continue_without_input(session, f"{why}, and {scripted.no_input_reason()}")
        return
    _notice(f"{why}; type debugger commands at the prompt below instead (help lists them).")
    cli.run_cli(session, **options)


def run_widget_debugger(session: Session, **options: Any) -> None:
    """Serve one stop with the debugger panel; returns when the session has ended.

    ``options`` are passed on to the terminal prompt when falling back to it
    (e.g. ``stdin=`` / ``stdout=`` in scripts). KeyboardInterrupt propagates.
    """
    from jaxdbg_widgets.pause.channel import CLOSED, UNRESPONSIVE, Mechanism, PauseChannel

    kernel = api.current_kernel()
    channel = PauseChannel()
    with channel:  # pins this thread's prints and prompts to the paused cell
        channel.report_queued_cells()
        if channel.mechanism is Mechanism.PROMPT:
            _fallback(session, "the debugger panel cannot receive clicks here"
                      + (f" ({channel.detail})" if channel.detail else ""), options)
            return
        parent = None
        if kernel is not None:
            try:
                parent = api.cell_parent(kernel)[1]
            except Exception:
                parent = None
        _serve_panel(session, channel, kernel, parent, options, CLOSED, UNRESPONSIVE)


def _serve_panel(session: Session, channel: Any, kernel: Any, parent: dict | None,
                 options: dict[str, Any], closed: Any, unresponsive: Any) -> None:
    from IPython.display import display

    from jaxdbg_widgets.panel.panel import DebuggerPanel
    from jaxdbg_widgets.pause.channel import HIDDEN, QueuedCell

    options = {"context": PANEL_CONTEXT, **options}  # the caller's dict is not touched
    session.context = options["context"]
    # The comm is routed before the frontend hears of it, so even a command sent the
    # moment the panel appears reaches this stop.
    panel = DebuggerPanel(session, post=channel.post, context=options["context"],
                          before_open=channel.attach)
    with _output_to_cell(kernel, parent):
        handle = display(panel.widget, display_id=True)
    def end_stuck() -> None:
        """An interrupted command that cannot be ended at once: the panel ends now,
        saying so (called on another thread, whose output is pinned to the cell too)."""
        with channel.pinned():
            _finish(panel, handle, kernel, parent, interrupts.STUCK_NOTICE)

    session.on_stuck_command = end_stuck
    shown = False
    try:
        while not session.finished:
            command = channel.wait(timeout=HEADER_REFRESH_S)
            if command is None:  # timed out: only the waiting count may have moved
                panel.refresh_header()
                continue
            if isinstance(command, QueuedCell):
                _show_in_queued_cell(session, panel, handle, kernel, command.parent)
                continue
            if command is HIDDEN:
                # Clear Output removed every view while the stop still needs an answer.
                if handle is not None:
                    with _output_to_cell(kernel, parent):
                        handle.display(panel.widget)
                continue
            if command is closed or command is unresponsive:
                why = ("the debugger panel was closed" if command is closed else
                       "the debugger panel stopped receiving clicks"
                       + (f" ({channel.detail})" if channel.detail else ""))
                _finish(panel, handle, kernel, parent, f"{why}; continued at the text prompt.")
                shown = True
                _fallback(session, why, options)
                return
            panel.handle(command)
    except KeyboardInterrupt:
        session.mark_interrupted()  # the summary's outcome says "Interrupted."
        raise
    finally:
        if not shown:
            _finish(panel, handle, kernel, parent, None)


def _finish(panel: Any, handle: Any, kernel: Any, parent: dict | None, note: str | None) -> None:
    """End the panel (if a command has not already), put its static summary in the
    cell's output in place of the widget, then close the widget's comm: a finished
    stop keeps no comm open."""
    panel.finish(note)
    if handle is not None:
        with _output_to_cell(kernel, parent):
            try:  # HTML with a readable text/plain twin (jaxdbg.views.html)
                handle.update(panel.finished_display)
            except Exception:
                pass
    panel.close()
