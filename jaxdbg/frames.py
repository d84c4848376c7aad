"""Frames as the debugger sees them, and their capture at trace time.

Capture walks the live Python stack when a breakpoint is traced. Locals that
hold tracers are remembered as *operand slots*: the breakpoint ships those
tracers to the host callback, which fills the slots with runtime values.
Everything else (untraced locals, module globals, source) is kept as is.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys
import types
import warnings
from typing import Any, Callable

import jax

from jaxdbg.internals import ipython_api, jax_api

# Modules whose frames are machinery, not the user's program.
_HIDDEN_MODULE_PREFIXES = (
    "jax", "jaxlib", "jaxdbg", "jaxdbg_widgets", "IPython", "ipykernel",
    "asyncio", "tornado", "zmq", "traitlets", "runpy", "threading",
    "concurrent", "_pytest", "pluggy", "pytest", "comm", "ipywidgets",
)


# Entry-point scripts that run as __main__, so their module name says nothing.
_HIDDEN_SCRIPTS = {"ipykernel_launcher.py", "colab_kernel_launcher.py"}


@dataclasses.dataclass
class Frame:
    """One stack frame with runtime values, innermost frames first in a stack."""

    filename: str
    lineno: int
    function: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    source: list[str]  # every line of the file or notebook cell, "\n"-terminated
    first_lineno: int  # where the frame's function starts (1 for module code)

    def line(self, lineno: int | None = None) -> str:
        n = self.lineno if lineno is None else lineno
        return self.source[n - 1].rstrip("\n") if 0 < n <= len(self.source) else ""

    @property
    def location(self) -> str:
        return f"{display_filename(self.filename)}:{self.lineno}"


def display_filename(filename: str) -> str:
    """A notebook cell's temp file reads as ``<cell>``-style name; files stay as they are."""
    cell = ipython_api.cell_label(filename)
    return cell if cell is not None else filename


def _is_hidden(frame: types.FrameType) -> bool:
    if frame.f_locals.get("__tracebackhide__") or frame.f_globals.get("__tracebackhide__"):
        return True
    module = frame.f_globals.get("__name__") or ""
    if module.split(".")[0] in _HIDDEN_MODULE_PREFIXES:
        return True
    filename = frame.f_code.co_filename
    if filename.startswith("<frozen ") or os.path.basename(filename) in _HIDDEN_SCRIPTS:
        return True
    return not jax_api.include_frame(frame)


def is_hidden(frame: types.FrameType) -> bool:
    """Whether a live frame is machinery (JAX, IPython, jaxdbg...) rather than the user's code."""
    return _is_hidden(frame)


def python_stack(skip: int, filter_frames: bool, num_frames: int | None) -> list[types.FrameType]:
    """The caller's stack, innermost first, without machinery frames when filtering."""
    frame: types.FrameType | None = sys._getframe(skip + 1)
    stack = []
    while frame is not None:
        if not (filter_frames and _is_hidden(frame)):
            stack.append(frame)
            if num_frames is not None and len(stack) >= num_frames:
                break
        frame = frame.f_back
    return stack


class Unavailable:
    """Stands for a traced value that cannot reach the host from this stop."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<unavailable: {self.why}>"


TANGENT_ONLY = Unavailable("a tangent while JAX linearizes a custom_jvp rule")


@dataclasses.dataclass(frozen=True)
class OperandSlot:
    """Placeholder for the runtime value of the operand with this index."""

    index: int


@dataclasses.dataclass
class FrameTemplate:
    """A frame captured at trace time; ``build`` fills in runtime values."""

    filename: str
    lineno: int
    function: str
    globals: dict[str, Any]
    first_lineno: int
    static_locals: dict[str, Any]
    traced_locals: dict[str, tuple[Any, list[Any]]]  # name -> (treedef, leaves w/ slots)
    order: list[str]

    def build(self, operand: Callable[[int], Any]) -> Frame:
        if not self.order:  # module code: locals are the (live) globals
            return Frame(self.filename, self.lineno, self.function, dict(self.static_locals),
                         self.globals, linecache.getlines(self.filename, self.globals),
                         self.first_lineno)
        values = {}
        for name in self.order:
            if name in self.traced_locals:
                treedef, leaves = self.traced_locals[name]
                filled = [operand(l.index) if isinstance(l, OperandSlot) else l for l in leaves]
                values[name] = jax.tree_util.tree_unflatten(treedef, filled)
            else:
                values[name] = self.static_locals[name]
        source = linecache.getlines(self.filename, self.globals)
        return Frame(self.filename, self.lineno, self.function, values, self.globals,
                     source, self.first_lineno)


class OperandCollector:
    """Gathers distinct tracers across frames so each is shipped to the host once."""

    def __init__(self) -> None:
        self.operands: list[Any] = []
        self._index_by_id: dict[int, int] = {}

    def slot(self, tracer: Any) -> OperandSlot | Unavailable:
        if jax_api.is_linear_unknown(tracer):
            return TANGENT_ONLY
        key = id(tracer)
        if key not in self._index_by_id:
            self._index_by_id[key] = len(self.operands)
            self.operands.append(tracer)
        return OperandSlot(self._index_by_id[key])


def _flatten(value: Any):
    try:
        return jax.tree_util.tree_flatten(value)
    except Exception:
        return None


def capture(frame: types.FrameType, collector: OperandCollector) -> FrameTemplate:
    """Snapshot one live frame, turning tracer leaves of its locals into slots."""
    code = frame.f_code
    first = 1 if code.co_name == "<module>" else code.co_firstlineno
    if frame.f_locals is frame.f_globals:
        # Module or notebook-cell code: its locals are the live globals, which hold
        # no tracers (they would have leaked); skip flattening a whole namespace.
        return FrameTemplate(code.co_filename, frame.f_lineno, code.co_name, frame.f_globals,
                             first, frame.f_globals, {}, [])
    static, traced, order = {}, {}, []
    with warnings.catch_warnings():  # e.g. "generator is treated as a leaf"
        warnings.simplefilter("ignore")
        flattened = {name: _flatten(value) for name, value in frame.f_locals.items()}
    for name, value in frame.f_locals.items():
        order.append(name)
        if flattened[name] is None:  # an object that refuses to flatten is kept whole
            static[name] = value
            continue
        leaves, treedef = flattened[name]
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            slotted = [collector.slot(l) if isinstance(l, jax.core.Tracer) else l for l in leaves]
            traced[name] = (treedef, slotted)
        else:
            static[name] = value
    return FrameTemplate(code.co_filename, frame.f_lineno, code.co_name, frame.f_globals,
                         first, static, traced, order)


def live_frame(frame: types.FrameType) -> Frame:
    """A frame whose values are already concrete (used outside any trace)."""
    collector = OperandCollector()
    template = capture(frame, collector)
    return template.build(lambda i: collector.operands[i])
