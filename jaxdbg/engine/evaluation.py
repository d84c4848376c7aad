"""Evaluate user input against a frame without touching the program.

Locals, module globals and earlier scratch assignments are merged into one
globals dict, so comprehensions and lambdas (which only see globals and their
own closure) can use locals too. Statements run in that copy; names they bind
are kept in the session's scratch namespace for later expressions.
"""

from __future__ import annotations

import ast
import builtins
import functools
from typing import Any, Callable, NamedTuple

import jax
import numpy as np

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


# A condition, log template or watch is evaluated at every step a loop passes its
# breakpoint; compiling it again each time was a fifth of a screened stop's host time.
@functools.lru_cache(maxsize=512)
def compile_input(source: str, expression_only: bool = False) -> tuple[Any, bool]:
    """Compile as an expression if possible, else as statements. Returns (code, is_expr)."""
    if expression_only:
        return compile(source, "<jaxdbg>", "eval"), True
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
    code, is_expr = compile_input(source, expression_only)
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


# What an expression may hold to be evaluated on NumPy copies of its arrays: comparisons,
# `and` / `or` / `not`, +, -, *, //, % and indexing of names and constants. NumPy and JAX
# give these the same answer (elementwise IEEE arithmetic, the same promotion of Python
# scalars), and NumPy gives it in a microsecond where each JAX operation on the host is
# a dispatch of tens (conditions and watches are evaluated at every step a loop passes).
_NUMPY_SAFE_NODES = (
    ast.Expression, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
    ast.UAdd, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Name, ast.Load,
    ast.Constant, ast.Subscript, ast.Slice, ast.Tuple, ast.Eq, ast.NotEq, ast.Lt, ast.LtE,
    ast.Gt, ast.GtE, ast.Is, ast.IsNot,
)  # fmt: skip

#: What :func:`on_numpy` gives for an expression it may not evaluate, or one that raised.
NOT_ON_NUMPY = object()


class _OnNumpy(NamedTuple):
    """An expression NumPy may evaluate, compiled."""

    code: Any
    names: frozenset[str]  # the names it reads
    arithmetic: bool  # it does arithmetic, which NumPy may warn about
    bare_name: bool  # it is one name (a watch of a local): its value is the answer


@functools.lru_cache(maxsize=256)
def _numpy_safe(source: str) -> _OnNumpy | None:
    """The expression, compiled, when NumPy may evaluate it."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return None
    nodes = list(ast.walk(tree))
    if not all(isinstance(node, _NUMPY_SAFE_NODES) for node in nodes):
        return None
    names = frozenset(node.id for node in nodes if isinstance(node, ast.Name))
    arithmetic = any(isinstance(node, (ast.BinOp, ast.UnaryOp)) for node in nodes)
    return _OnNumpy(compile(tree, "<jaxdbg>", "eval"), names, arithmetic, isinstance(tree.body, ast.Name))


def on_numpy(source: str, frame: Frame) -> Any:
    """``source`` evaluated with the frame's arrays as NumPy arrays, or
    :data:`NOT_ON_NUMPY` where that may differ from JAX's answer (a call, an attribute,
    a dtype NumPy lacks) or raised: then evaluate it with :func:`evaluate`, which
    says what went wrong."""
    return on_numpy_values(source, lookup_in(frame))


def lookup_in(frame: Frame) -> Callable[[str], Any]:
    """A name's value in ``frame``, a local or a global (KeyError: neither)."""

    def lookup(name: str) -> Any:
        return frame.locals[name] if name in frame.locals else frame.globals[name]

    return lookup


def on_numpy_values(source: str, lookup: Callable[[str], Any]) -> Any:
    """:func:`on_numpy` with each name's value from ``lookup`` (KeyError: not at hand)."""
    safe = _numpy_safe(source)
    if safe is None:
        return NOT_ON_NUMPY
    ns: dict[str, Any] = {"__builtins__": {}}
    for name in safe.names:
        try:
            value = lookup(name)
        except KeyError:
            return NOT_ON_NUMPY
        # PRNG keys, bfloat16, float0 and complex stay JAX's (NumPy lacks or differs)
        if isinstance(value, (np.ndarray, np.generic)):
            if value.dtype.kind not in "biuf":
                return NOT_ON_NUMPY
        elif isinstance(value, jax.Array):
            if getattr(value.dtype, "kind", "") not in ("b", "i", "u", "f") or not value.is_fully_addressable:
                return NOT_ON_NUMPY
            value = np.asarray(value)
        if safe.bare_name:
            return value
        ns[name] = value
    try:
        if not safe.arithmetic:  # comparisons and indexing: NumPy says nothing (and it costs a µs per step)
            return eval(safe.code, ns)
        with np.errstate(all="ignore"):
            return eval(safe.code, ns)
    except Exception:
        return NOT_ON_NUMPY
