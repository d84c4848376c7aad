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

from jaxdbg import interrupts
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


def _interrupt_line(exc: BaseException) -> str | None:
    """INTERRUPT_LINE for a plain KeyboardInterrupt that ended (or is ending) a stop.

    In a kernel the interrupt reaches the main thread too, wherever it waits for the
    stopped computation (e.g. inside ``.tolist()``): that traceback says nothing useful.
    """
    if type(exc) is KeyboardInterrupt:
        from jaxdbg import stops

        if stops.in_progress():
            return INTERRUPT_LINE
    return None


def _ipython_handler(shell: Any, etype, value, tb, tb_offset=None):
    cause = _stop_cause(value)
    line = stop_reason(value) if cause is not None else _interrupt_line(value)
    if line is not None:
        ipython_api.show_short_error(shell, cause or KeyboardInterrupt, line.split(": ", 1)[1], line)
        return None
    previous_kinds, previous_handler = _previous_custom_exc
    if previous_kinds and isinstance(value, previous_kinds) and previous_handler is not None:
        return previous_handler(etype, value, tb, tb_offset=tb_offset)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return None


def _relay_interrupts(*_: Any) -> None:
    interrupts.install()  # the kernel puts Python's default SIGINT handler back for each cell


_installed = False
_previous_custom_exc: tuple[tuple[type[BaseException], ...], Any] = ((), None)
_previous_excepthook = None


def install() -> None:
    """Idempotent; called when a stop ends with quit or an interrupt, and by the extension.

    In IPython the handler takes the shell's one custom-exception slot and passes
    the exceptions that an earlier handler claimed on to it.
    """
    global _installed, _previous_custom_exc, _previous_excepthook
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

        previous_kinds = tuple(getattr(shell, "custom_exceptions", ()) or ())
        previous_handler = getattr(shell, "CustomTB", None) if previous_kinds else None
        _previous_custom_exc = (previous_kinds, previous_handler)
        ours = (jax.errors.JaxRuntimeError, DebuggerQuit, KeyboardInterrupt)
        shell.set_custom_exc(previous_kinds + tuple(k for k in ours if k not in previous_kinds),
                             _ipython_handler)
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("pre_run_cell", _relay_interrupts)
        return
    previous = _previous_excepthook = sys.excepthook

    def excepthook(etype, value, tb):
        line = stop_reason(value) or _interrupt_line(value)
        if line is None:
            previous(etype, value, tb)
        else:
            print(line, file=sys.stderr)

    sys.excepthook = excepthook


def uninstall() -> None:
    """Undo :func:`install`'s IPython handler or excepthook (for ``%unload_ext``)."""
    global _installed, _previous_custom_exc, _previous_excepthook
    if not _installed:
        return
    _installed = False
    shell = ipython_api.shell()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        kinds, handler = _previous_custom_exc
        if handler is not None and kinds:
            shell.custom_exceptions = kinds
            shell.CustomTB = handler
        else:
            shell.custom_exceptions = ()
        events = getattr(shell, "events", None)
        if events is not None:
            try:
                events.unregister("pre_run_cell", _relay_interrupts)
            except ValueError:
                pass
        _previous_custom_exc = ((), None)
    elif _previous_excepthook is not None:
        sys.excepthook = _previous_excepthook
        _previous_excepthook = None
