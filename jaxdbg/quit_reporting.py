"""Show a quit (or an interrupt) from inside jit as one clear line.

Inside a compiled computation XLA wraps an exception raised by a host callback
in ``JaxRuntimeError: INTERNAL: CpuCallback error ...`` with a long trace.
When that error was caused by the debugger's ``quit`` or by an interrupt while
paused, IPython (custom exception handler) and plain Python (excepthook) show
``DebuggerQuit: ...`` or ``KeyboardInterrupt`` instead.
"""

from __future__ import annotations

import sys
from typing import Any

from jaxdbg.errors import DebuggerQuit
from jaxdbg.internals import ipython_api, jax_api

QUIT_LINE = "jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped"


INTERRUPT_LINE = "KeyboardInterrupt: interrupted while paused in the debugger"


def _stop_cause(exc: BaseException) -> type[BaseException] | None:
    """DebuggerQuit or KeyboardInterrupt when the debugger caused ``exc``, else None."""
    if isinstance(exc, DebuggerQuit):
        return DebuggerQuit
    if jax_api.is_jax_runtime_error(exc):
        text = str(exc)
        if "callback" not in text.lower():
            return None
        if DebuggerQuit.__name__ in text:
            return DebuggerQuit
        if "KeyboardInterrupt" in text:
            return KeyboardInterrupt
    return None


def stop_reason(exc: BaseException) -> str | None:
    """The one line to show for an error caused by the debugger, or None."""
    cause = _stop_cause(exc)
    if cause is None:
        return None
    return QUIT_LINE if cause is DebuggerQuit else INTERRUPT_LINE


def _ipython_handler(shell: Any, etype, value, tb, tb_offset=None):
    cause = _stop_cause(value)
    if cause is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    line = stop_reason(value)
    ipython_api.show_short_error(shell, cause, line.split(": ", 1)[1], line)
    return None


_installed = False


def install() -> None:
    """Idempotent; called when a stop ends with quit or an interrupt, and by the extension."""
    global _installed
    if _installed:
        return
    _installed = True
    jax_api.quiet_callback_failures((DebuggerQuit, KeyboardInterrupt))
    # A stopped computation's error is shown once, where its results are used; later
    # jax.effects_barrier() calls and JAX's wait at exit do not raise it again.
    jax_api.drop_stopped_effects_when_waiting(lambda exc: _stop_cause(exc) is not None)
    shell = ipython_api.shell()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        import jax

        shell.set_custom_exc((jax.errors.JaxRuntimeError, DebuggerQuit), _ipython_handler)
        return
    previous = sys.excepthook

    def excepthook(etype, value, tb):
        line = stop_reason(value)
        if line is None:
            previous(etype, value, tb)
        else:
            print(line, file=sys.stderr)

    sys.excepthook = excepthook
