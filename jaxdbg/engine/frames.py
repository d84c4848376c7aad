"""Frames as the debugger sees them, and their capture at trace time.

Capture walks the live Python stack when a breakpoint is traced. Locals that
hold tracers are remembered as *operand slots*: the breakpoint ships those
tracers to the host callback, which fills the slots with runtime values.
Everything else (untraced locals, module globals, source) is kept as is.
"""

from __future__ import annotations

import dataclasses
import functools
import linecache
import os
import sys
import types
import warnings
from typing import Any, Callable, MutableMapping, Sequence

import jax

from jaxdbg.engine import program_shardings
from jaxdbg.engine.values import linen_modules, traced_holders
from jaxdbg.internals import ipython_api, jax_api, jax_debugger, jax_partial_eval
from jaxdbg.runtime.guarded_calls import guarded
from jaxdbg.runtime.lazy_values import LazyValues

# A traced pytree local with more leaves is rebuilt from them when first read (see
# LazyValues): a stop shows its row long before, from its structure.
TREE_LEAVES_REBUILT_AT_ONCE = 256

# Modules whose frames are machinery, not the user's program.
_HIDDEN_MODULE_PREFIXES = (
    "jax",
    "jaxlib",
    "jaxdbg",
    "jaxdbg_widgets",
    "IPython",
    "ipykernel",
    "asyncio",
    "tornado",
    "zmq",
    "traitlets",
    "runpy",
    "threading",
    "concurrent",
    "_pytest",
    "pluggy",
    "pytest",
    "xdist",
    "execnet",
    "comm",
    "ipywidgets",
)


# Entry-point scripts that run as __main__, so their module name says nothing.
_HIDDEN_SCRIPTS = {"ipykernel_launcher.py", "colab_kernel_launcher.py"}


@dataclasses.dataclass
class Frame:
    """One stack frame with runtime values, innermost frames first in a stack."""

    filename: str
    lineno: int
    function: str
    locals: MutableMapping[str, Any]  # a LazyValues where big traced trees wait to be read
    globals: dict[str, Any]
    source: list[str]  # every line of the file or notebook cell, "\n"-terminated
    first_lineno: int  # where the frame's function starts (1 for module code)
    # The layout in the program of locals that were traced, where JAX says
    # (``P('x',) on mesh x=8``); their runtime values were gathered to the host.
    shardings: dict[str, str] = dataclasses.field(default_factory=dict)
    traced: frozenset[str] = frozenset()  # names whose values came from the computation
    # The sharding XLA chose for a traced local of a sharded jit (a jax.sharding.Sharding),
    # recorded at compile time; its value here is a copy on one device.
    compiled_shardings: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The function's code and the offset of the instruction it was at (the call that
    # led to the stop): what a replay calls again, and how it tells a rebound argument.
    code: types.CodeType | None = None
    instruction: int = -1
    replay: bool = False  # a frame of a replay run from the stop (replay/stepping.py)

    def line(self, lineno: int | None = None) -> str:
        n = self.lineno if lineno is None else lineno
        return self.source[n - 1].rstrip("\n") if 0 < n <= len(self.source) else ""

    @property
    def location(self) -> str:
        return f"{display_filename(self.filename)}:{self.lineno}"

    @property
    def is_module_code(self) -> bool:
        """A module's or notebook cell's top-level code (IPython 7 names it ``<cell line: N>``)."""
        return self.function == "<module>" or self.function.startswith("<cell line")


# The name compile(), exec() and `python -c` give code without a file: many sources share
# it (from Python 3.13 linecache holds the `-c` command under it), so none of them is
# the source of a given frame.
_NAMELESS_SOURCE = "<string>"


def source_lines(filename: str, module_globals: dict[str, Any] | None) -> list[str]:
    """The lines of a frame's file or notebook cell, [] where there is none to trust."""
    if filename == _NAMELESS_SOURCE:
        return []
    return linecache.getlines(filename, module_globals)


def display_filename(filename: str) -> str:
    """A notebook cell's temp file reads as ``<cell>``-style name; files stay as they are."""
    cell = ipython_api.cell_label(filename)
    return cell if cell is not None else filename


def _is_hidden(frame: types.FrameType) -> bool:
    # f_locals is read only where the name is a local: making it copies every local (3.12-)
    code = frame.f_code
    named = "__tracebackhide__" in code.co_varnames or "__tracebackhide__" in code.co_cellvars
    hide_local = named and frame.f_locals.get("__tracebackhide__")
    if hide_local or frame.f_globals.get("__tracebackhide__"):
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


def hidden_file_test() -> Callable[[str], bool]:
    """Whether a file belongs to machinery (as :func:`_is_hidden` judges live frames),
    for frames known only by file name, such as JAX's DebuggerFrames."""
    roots, files = [], set()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in _HIDDEN_MODULE_PREFIXES:
            continue
        file = getattr(module, "__file__", None)
        if not file:
            continue
        if "." not in name and getattr(module, "__path__", None):
            roots.append(os.path.dirname(file) + os.sep)  # a package: everything under it
        else:
            files.add(file)
    roots_tuple = tuple(roots)

    def hidden(filename: str) -> bool:
        return (
            filename in files
            or filename.startswith(roots_tuple)
            or filename.startswith("<frozen ")
            or os.path.basename(filename) in _HIDDEN_SCRIPTS
        )

    return hidden


def _module_globals(filename: str) -> dict[str, Any]:
    """The globals of the module defined in ``filename`` (``__main__`` for notebook cells)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return vars(module)
    main = sys.modules.get("__main__")
    return vars(main) if main is not None else {}


def module_globals(filename: str) -> dict[str, Any]:
    """The globals of the module defined in ``filename`` (``__main__`` for notebook cells)."""
    return _module_globals(filename)


def _function_name(lines: list[str], lineno: int, first: int, whole_file: bool) -> str:
    """Name the function whose frame starts at ``first`` and is at ``lineno``:
    JAX's frames carry no code object, so read it from the source."""
    import ast

    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return "<module>" if whole_file else "?"
    best, span = None, None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        end = getattr(node, "end_lineno", None) or node.lineno
        if start == first and node.lineno <= lineno <= end and (span is None or end - start < span):
            best, span = node, end - start
    if best is None:
        return "<module>" if whole_file or first == 1 else "?"
    return "<lambda>" if isinstance(best, ast.Lambda) else best.name


def from_jax_frames(raw_frames: list[Any]) -> list[Frame]:
    """JAX's own DebuggerFrames (a function traced before jaxdbg was hooked in) as the
    same filtered, named frames a jaxdbg capture gives."""
    hidden = hidden_file_test()
    frames = []
    for raw in raw_frames:
        f = jax_debugger.read_jax_frame(raw)
        if hidden(f.filename):
            continue
        module_globals = _module_globals(f.filename)
        lines = source_lines(f.filename, module_globals)
        first = f.lineno - f.offset if f.offset is not None else 1
        whole_file = f.offset is not None and first == 1 and len(f.source) >= len(lines)
        if not lines:  # no file to read: JAX's copy of the function's source
            lines = [""] * (first - 1) + [line + "\n" for line in f.source]
        function = _function_name(lines, f.lineno, first, whole_file)
        if function == "<module>":  # module code: its locals are its globals
            local_values = {**module_globals, **f.locals} if module_globals else f.locals
            frames.append(Frame(f.filename, f.lineno, function, local_values, module_globals, lines, 1))
        else:
            frames.append(Frame(f.filename, f.lineno, function, f.locals, module_globals, lines, first))
    return frames


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
OUTSIDE_BODY = Unavailable("traced outside the jit, scan, cond, loop or checkpoint body this breakpoint is in")

# Where JAX's machinery starts: a frame of these calls the function it traces.
_JAX_MODULES = ("jax", "jaxlib")


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
    shardings: dict[str, str] = dataclasses.field(default_factory=dict)
    sharded_operands: dict[str, int] = dataclasses.field(default_factory=dict)  # name -> operand
    code: types.CodeType | None = None
    instruction: int = -1
    #: Traced locals with more than TREE_LEAVES_REBUILT_AT_ONCE leaves, each with what
    #: describes it until it is rebuilt (``capture``'s ``describe_big_tree``).
    big_trees: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: Per traced local, its operands' indices when every leaf is one (the common case).
    _slot_indices: dict[str, Sequence[int]] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _filled(self, name: str, leaves: list[Any], operand: Callable[[int], Any]) -> list[Any]:
        """A traced local's leaves with their runtime values. A reader's ``many`` reads
        them at once: a 10,000-leaf parameter tree costs no call per leaf."""
        many = getattr(operand, "many", None)
        if many is not None:
            indices = self._slot_indices.get(name)
            if indices is None:
                indices = self._slot_indices[name] = _slot_indices(leaves)
            if indices:
                read: list[Any] = many(indices)
                return read
        return [operand(leaf.index) if isinstance(leaf, OperandSlot) else leaf for leaf in leaves]

    def traced_value(self, name: str, operand: Callable[[int], Any]) -> Any:
        """Traced local ``name`` with its runtime values, as :meth:`build` makes it."""
        treedef, leaves = self.traced_locals[name]
        return _rebuilt(treedef, self._filled(name, leaves, operand))

    def build(self, operand: Callable[[int], Any], compiled: Callable[[int], Any] | None = None) -> Frame:
        """The frame with runtime values; ``compiled(i)``: operand i's compiled sharding."""
        if not self.order:  # module code: locals are the (live) globals
            return Frame(
                self.filename,
                self.lineno,
                self.function,
                dict(self.static_locals),
                self.globals,
                source_lines(self.filename, self.globals),
                self.first_lineno,
            )
        values: dict[str, Any] = {}
        later: dict[str, tuple[Any, Callable[[], Any]]] = {}  # big trees, rebuilt when read
        for name in self.order:
            if name in self.traced_locals:
                treedef, leaves = self.traced_locals[name]
                rebuild = functools.partial(_rebuilt, treedef, self._filled(name, leaves, operand))
                if name in self.big_trees:
                    later[name] = (self.big_trees[name], rebuild)
                    values[name] = None
                else:
                    values[name] = rebuild()
            else:
                values[name] = self.static_locals[name]
        source = source_lines(self.filename, self.globals)
        chosen = {name: compiled(i) for name, i in self.sharded_operands.items()} if compiled else {}
        return Frame(
            self.filename,
            self.lineno,
            self.function,
            LazyValues(values, later) if later else values,
            self.globals,
            source,
            self.first_lineno,
            dict(self.shardings),
            frozenset(self.traced_locals),
            {name: s for name, s in chosen.items() if s is not None},
            self.code,
            self.instruction,
        )


def _slot_indices(leaves: list[Any]) -> Sequence[int]:
    """The operand indices of a local whose every leaf is a slot (a ``range`` where they
    follow each other, as a flattened argument's do), else none."""
    if not all(type(leaf) is OperandSlot for leaf in leaves):
        return []
    indices = [leaf.index for leaf in leaves]
    if indices == list(range(indices[0], indices[0] + len(indices))):
        return range(indices[0], indices[0] + len(indices))
    return indices


def _rebuilt(treedef: Any, leaves: list[Any]) -> Any:
    # A user pytree's unflatten is user code: it must not end the stop.
    return guarded(
        lambda: jax.tree_util.tree_unflatten(treedef, leaves),
        lambda e: Unavailable(f"rebuilding it raised {type(e).__name__}"),
    )


class OperandCollector:
    """Gathers distinct tracers across frames so each is shipped to the host once,
    with the layout each has in the program (None where JAX does not say)."""

    def __init__(self) -> None:
        self.operands: list[Any] = []
        self.shardings: list[program_shardings.ProgramSharding | None] = []
        self._index_by_id: dict[int, int] = {}
        self._reach = jax_api.traces_in_reach()

    def slot(self, tracer: Any, own: bool = False) -> OperandSlot | Unavailable:
        """``own``: the tracer is a local of the traced function itself (see
        :func:`trace_frames`), so JAX would capture it the same way."""
        if jax_partial_eval.is_linear_unknown(tracer):
            return TANGENT_ONLY
        if not own and not jax_api.in_reach(tracer, self._reach):
            # An enclosing program's value: JAX may cache this body's jaxpr and
            # reuse it in another program, so it must not become an operand.
            return OUTSIDE_BODY
        key = id(tracer)
        if key not in self._index_by_id:
            self._index_by_id[key] = len(self.operands)
            self.operands.append(tracer)
            self.shardings.append(program_shardings.of_tracer(tracer))
        return OperandSlot(self._index_by_id[key])

    def sharding_of(self, slot: Any) -> program_shardings.ProgramSharding | None:
        return self.shardings[slot.index] if isinstance(slot, OperandSlot) else None

    def mesh(self) -> str | None:
        """The mesh of the first sharded operand (the banner names it)."""
        return next((s.mesh for s in self.shardings if s is not None), None)


def _flatten(value: Any, in_trace: bool):
    # A user pytree's flatten is user code: anything it raises keeps the value whole. In
    # a frame a trace runs in, a function closing over traced values, or an object
    # holding them, flattens to them (traced_holders).
    if not in_trace:
        return guarded(lambda: jax.tree_util.tree_flatten(value), lambda e: None)
    return guarded(lambda: traced_holders.flattened(value), lambda e: None)


def trace_frames(skip: int) -> tuple[set[int], set[int]]:
    """The ids of the caller's frames up to the first JAX frame (the traced function and
    those it called: JAX itself captures their locals in the body it stages), and of those
    newer than the outermost JAX frame (the frames a trace runs in, which alone may hold
    its tracers: those further out were suspended in the call that began it)."""
    own: set[int] = set()
    walked: list[int] = []
    inside: set[int] = set()
    frame: types.FrameType | None = sys._getframe(skip + 1)
    while frame is not None:
        if (frame.f_globals.get("__name__") or "").split(".")[0] in _JAX_MODULES:
            inside.update(walked)
        else:
            walked.append(id(frame))
            if not inside:  # no JAX frame met yet
                own.add(id(frame))
        frame = frame.f_back
    return own, inside


def capture(
    frame: types.FrameType,
    collector: OperandCollector,
    own: bool = False,
    describe_big_tree: Callable[[Any], Any] | None = None,
    in_trace: bool = False,
) -> FrameTemplate:
    """Snapshot one live frame, turning tracer leaves of its locals into slots.

    ``own``, ``in_trace``: a frame of the traced function itself, one a trace runs in
    (:func:`trace_frames`), whose objects and closures are searched for its tracers.
    ``describe_big_tree(traced_value)``: what stands for a traced local with more than
    :data:`TREE_LEAVES_REBUILT_AT_ONCE` leaves in its built frames until something reads
    it (its structure is the same at every stop); without it every local is rebuilt at once.
    """
    code = frame.f_code
    first = 1 if code.co_name == "<module>" else code.co_firstlineno
    if frame.f_locals is frame.f_globals:
        # Module or notebook-cell code: its locals are the live globals, which hold
        # no tracers (they would have leaked); skip flattening a whole namespace.
        return FrameTemplate(
            code.co_filename, frame.f_lineno, code.co_name, frame.f_globals, first, frame.f_globals, {}, []
        )
    static, traced, order, shardings, sharded, big = {}, {}, [], {}, {}, {}
    # A bound Linen Module is no pytree: what stands for it carries its variables.
    values = {name: linen_modules.standing_for(value) for name, value in frame.f_locals.items()}
    with warnings.catch_warnings():  # e.g. "generator is treated as a leaf"
        warnings.simplefilter("ignore")
        flattened = {name: _flatten(value, in_trace) for name, value in values.items()}
    for name, value in values.items():
        order.append(name)
        if flattened[name] is None:  # an object that refuses to flatten is kept whole
            static[name] = value
            continue
        leaves, treedef = flattened[name]
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            slotted = [collector.slot(l, own) if isinstance(l, jax.core.Tracer) else l for l in leaves]
            traced[name] = (treedef, slotted)
            if describe_big_tree is not None and len(leaves) > TREE_LEAVES_REBUILT_AT_ONCE:
                big[name] = describe_big_tree(value)
            only = slotted[0] if len(slotted) == 1 else None
            if isinstance(only, OperandSlot):
                where = collector.sharding_of(only)
                if where is not None:
                    shardings[name] = where.label()
                    sharded[name] = only.index
        else:
            static[name] = value
    return FrameTemplate(
        code.co_filename,
        frame.f_lineno,
        code.co_name,
        frame.f_globals,
        first,
        static,
        traced,
        order,
        shardings,
        sharded,
        code,
        frame.f_lasti,
        big,
    )


def live_frame(frame: types.FrameType) -> Frame:
    """A frame whose values are already concrete (used outside any trace)."""
    collector = OperandCollector()
    template = capture(frame, collector)
    return template.build(lambda i: collector.operands[i])
