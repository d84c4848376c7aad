"""Show a quit (or an interrupt) from inside jit as one clear line.

Inside a compiled computation XLA wraps an exception raised by a host callback
in ``JaxRuntimeError: INTERNAL: CpuCallback error ...`` with a long trace.
When that error was caused by the debugger's ``quit`` or by an interrupt while
paused, IPython (custom exception handler) and plain Python (excepthook) show
``DebuggerQuit: ...`` or ``KeyboardInterrupt`` instead.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from jaxdbg.internals import ipykernel_pump, ipython_api, jax_api
from jaxdbg.runtime import interrupts
from jaxdbg.runtime.errors import DebuggerQuit, DebugHostGone

QUIT_LINE = "jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped"


INTERRUPT_LINE = "KeyboardInterrupt: interrupted while paused in the debugger"

# A stopped computation's results carry its error into every computation that takes
# them: a later step raises it without stopping, which these lines explain. A step that
# writes its results back into the objects it was given (nnx.jit) leaves them so.
_MAKE_IT_AGAIN = "; compute that input again (after an nnx.jit step, its model and optimizer too)"
INPUT_LINES = {
    DebuggerQuit: "jaxdbg.DebuggerQuit: an input of this computation came from one the debugger quit" + _MAKE_IT_AGAIN,
    KeyboardInterrupt: "KeyboardInterrupt: an input of this computation came from one interrupted in the debugger"
    + _MAKE_IT_AGAIN,
}


def stop_cause(exc: BaseException) -> type[BaseException] | None:
    """DebuggerQuit or KeyboardInterrupt when the debugger caused ``exc``, else None."""
    if isinstance(exc, DebuggerQuit) or _host_gone_reason(exc) is not None:
        return DebuggerQuit
    for cause in (DebuggerQuit, KeyboardInterrupt):
        if jax_api.failed_callback_names(exc, cause.__name__):
            return cause
    return None


def _host_gone_reason(exc: BaseException) -> str | None:
    """Why a stop of a job could not be served (DebugHostGone's message), or None."""
    if isinstance(exc, DebugHostGone):
        return str(exc)
    return jax_api.failed_callback_message(exc, DebugHostGone.__name__)


def stop_reason(exc: BaseException) -> str | None:
    """The one line to show for an error caused by the debugger, or None."""
    cause = stop_cause(exc)
    if cause is None:
        return None
    gone = _host_gone_reason(exc)
    if gone is not None:
        return f"jaxdbg.DebuggerQuit: {gone}"
    return QUIT_LINE if cause is DebuggerQuit else INTERRUPT_LINE


# How many stops ended with a quit or an interrupt, and how many had when a line was
# last shown: an error of the same ending shown again came through an input.
_stops_ended = 0
_stops_ended_when_shown = -1


def note_a_stop_ended() -> None:
    """Count a stop that ends its computation with DebuggerQuit or KeyboardInterrupt."""
    global _stops_ended
    _stops_ended += 1


def line_to_show(exc: BaseException) -> str | None:
    """The one line to show for ``exc`` (stop_reason's, or the interrupt's), or None; noted
    as shown. The line of an ending already shown, raised again because a computation
    took the stopped one's result (as the next step takes the model an nnx.jit step
    wrote back), names that input: the same line again would read as a new quit. The
    first line shown for an ending is its own, even where an input carried it (the
    stopped call's result indexed, say)."""
    global _stops_ended_when_shown
    cause = stop_cause(exc)
    line = stop_reason(exc) if cause is not None else _interrupt_line(exc)
    if line is None:
        return None
    if (
        line in (QUIT_LINE, INTERRUPT_LINE)
        and cause is not None
        and jax_api.failed_in_an_input(exc)
        and _stops_ended_when_shown == _stops_ended
    ):
        line = INPUT_LINES[cause]
    _stops_ended_when_shown = _stops_ended
    return line


# Whether a stop is being served or waiting. Stop serving sits above this module (it
# installs the reporting when a stop opens), so it hands its question down here.
_stop_in_progress: Callable[[], bool] = lambda: False


def ask_stops_in_progress(in_progress: Callable[[], bool]) -> None:
    """Give :func:`_interrupt_line` the serving queue's ``in_progress`` (stop_serving does)."""
    global _stop_in_progress
    _stop_in_progress = in_progress


def _interrupt_line(exc: BaseException) -> str | None:
    """INTERRUPT_LINE for a plain KeyboardInterrupt that ends (or ended) a stop.

    Should the interrupt reach the main thread too, wherever it waits for the
    stopped computation (e.g. inside ``.tolist()``), that traceback says nothing useful.
    """
    if type(exc) is KeyboardInterrupt and (_stop_in_progress() or interrupts.main_got_a_passed_on_interrupt()):
        return INTERRUPT_LINE
    return None


def _ipython_handler(shell: Any, etype, value, tb, tb_offset=None) -> bool:
    """One line for an error the debugger caused; False passes anything else on."""
    line = line_to_show(value)
    if line is None:
        return False
    cause = stop_cause(value)
    ipykernel_pump.wait_until_idle(getattr(shell, "kernel", None), timeout=2.0)
    ipython_api.show_short_error(shell, cause or KeyboardInterrupt, line.split(": ", 1)[1], line)
    return True


def _relay_interrupts(*_: Any) -> None:
    interrupts.cell_started()
    interrupts.install()  # the kernel puts Python's default SIGINT handler back for each cell


_installed = False
_undo: list[Any] = []


def _stopped_by_debugger(exc: BaseException) -> bool:
    return stop_cause(exc) is not None


def adapt_effect_waits() -> None:
    """A stopped computation's error is shown once, where its results are used; later
    ``jax.effects_barrier()`` calls and JAX's wait at exit do not raise it again.

    Called when a breakpoint is traced too, before its computation is dispatched: a
    program may reach its exit, and JAX's wait there, before an asynchronously
    dispatched stop is served and quit. Idempotent; changes nothing a user sees.
    """
    jax_api.drop_stopped_effects_when_waiting(_stopped_by_debugger)


def install() -> None:
    """Idempotent; called when a stop ends with quit or an interrupt, and by the extension."""
    global _installed
    if _installed:
        return
    _installed = True
    jax_api.quiet_callback_failures((DebuggerQuit, KeyboardInterrupt))
    adapt_effect_waits()
    shell = ipython_api.shell()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        import jax

        _undo.append(
            ipython_api.add_custom_exc(
                shell, (jax.errors.JaxRuntimeError, DebuggerQuit, KeyboardInterrupt), _ipython_handler
            )
        )
        # The cell's value is shown by display formatters, which catch its repr's error
        # (a pmap result whose computation was quit) outside the custom-exception slot.
        _undo.append(ipython_api.add_traceback_filter(shell, _ipython_handler))
        _undo.append(ipython_api.register_cell_events(shell, pre_run_cell=_relay_interrupts))
        return
    previous = sys.excepthook

    def excepthook(etype, value, tb):
        line = line_to_show(value)
        if line is None:
            previous(etype, value, tb)
        else:
            print(line, file=sys.stderr)

    sys.excepthook = excepthook

    def restore() -> None:
        if sys.excepthook is excepthook:
            sys.excepthook = previous

    _undo.append(restore)


def uninstall() -> None:
    """Undo :func:`install` (``%unload_ext jaxdbg``); a later stop installs it again."""
    global _installed
    while _undo:
        _undo.pop()()
    jax_api.unquiet_callback_failures()
    _installed = False
