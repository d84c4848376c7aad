"""Evaluate user input against a frame without touching the program.

Locals, module globals and earlier scratch assignments are merged into one
globals dict, so comprehensions and lambdas (which only see globals and their
own closure) can use locals too. Statements run in that copy; names they bind
are kept in the session's scratch namespace for later expressions.
"""

from __future__ import annotations

import builtins
from typing import Any

from jaxdbg.engine.frames import Frame
from jaxdbg.runtime import interrupts, quit_reporting
from jaxdbg.runtime.errors import DebuggerQuit
from jaxdbg.runtime.guarded_calls import format_exception, guarded  # noqa: F401  (re-exported)

NESTED_QUIT = "DebuggerQuit: the nested stop was quit"


class EvaluationError(Exception):
    """Wraps an exception raised by user code, for display as ``*** Type: msg``."""

    def __init__(self, original: BaseException, text: str | None = None) -> None:
        super().__init__(str(original))
        self.original = original
        self.text = text

    def __str__(self) -> str:
        return self.text if self.text is not None else format_exception(self.original)


def _failure(exc: BaseException) -> EvaluationError:
    """The error to show for what evaluated code raised. A stop reached from the
    prompt (a jitted call typed there) that was quit is one line, not XLA's
    traceback of the callback."""
    if quit_reporting.stop_cause(exc) is DebuggerQuit:
        return EvaluationError(exc, NESTED_QUIT)
    return EvaluationError(exc)


_NOTHING = object()


def namespace(frame: Frame, scratch: dict[str, Any]) -> dict[str, Any]:
    ns = dict(frame.globals)
    ns.setdefault("__builtins__", builtins)
    ns.update(frame.locals)
    ns.update(scratch)
    return ns


def compile_input(source: str) -> tuple[Any, bool]:
    """Compile as an expression if possible, else as statements. Returns (code, is_expr)."""
    try:
        return compile(source, "<jaxdbg>", "eval"), True
    except SyntaxError:
        pass
    return compile(source, "<jaxdbg>", "exec"), False


def evaluate(source: str, frame: Frame, scratch: dict[str, Any], *, expression_only: bool = False) -> Any:
    """Run ``source`` in the frame's namespace; returns the value (or _NOTHING for statements).

    Raises SyntaxError for input that does not compile, EvaluationError for
    exceptions raised while running it, a KeyboardInterrupt that the code raised
    itself included (pdb shows ``*** KeyboardInterrupt: ...`` and goes on). A real
    interrupt (Ctrl-C, the kernel's interrupt) passes through: it ends the stop.
    """
    if expression_only:
        code, is_expr = compile(source, "<jaxdbg>", "eval"), True
    else:
        code, is_expr = compile_input(source)
    ns = namespace(frame, scratch)
    before = dict(ns)
    mark = interrupts.signals_seen()
    try:
        if is_expr:
            return eval(code, ns)
        exec(code, ns)
    except KeyboardInterrupt as e:
        if interrupts.interrupted_since(mark):
            raise
        raise EvaluationError(e) from None
    except BaseException as e:
        raise _failure(e) from None
    for name, value in ns.items():
        if before.get(name, _NOTHING) is not value and name != "__builtins__":
            scratch[name] = value
    return _NOTHING


def is_nothing(value: Any) -> bool:
    return value is _NOTHING
