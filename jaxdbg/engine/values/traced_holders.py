"""Python values that hold a trace's tracers where pytrees do not look.

A train step's ``loss_fn`` reads the step's ``x`` and ``y`` from its closure; ``self`` in a
method of a class that is no pytree holds the step's values in its attributes; a bound
method holds its object, a ``functools.partial`` its arguments. Kept as they are, such
locals hold the trace's tracers past the trace (``jax.checking_leaks`` reports them), and
read at the stop they give tracers, not values. The stop captures a :class:`TracedHolder`
in their place: a pytree whose children are the traced values held, so they travel with
the stop's other values, and which is made again at the stop over the values that arrived:
the same function closing over them, an object of the same class with them as attributes,
the method of that object. ``loss_fn(params)`` and ``self.loss(x)`` run there on the
step's data.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import jax
import numpy as np

from jaxdbg.engine.values import linen_modules
from jaxdbg.internals import jax_api
from jaxdbg.runtime.guarded_calls import guarded

# How deep held values are followed: `grad_fn = jax.value_and_grad(loss_fn)` closes over
# `loss_fn`, which closes over the step's data; `self.settings.scale`; nnx.grad's wrappers
# hold the user's `loss_fn` four deep.
_DEPTH = 6

# An object with more attributes than this is kept whole: reading them all at every trace
# of a breakpoint would cost more than what it holds is likely worth.
_MOST_ATTRIBUTES = 64


class _Recipe:
    """What makes a holder again, less its traced values (named by ``names``: free
    variables or attributes); compared by identity (JAX may hash tree metadata)."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def make(self, values: tuple) -> Any:
        raise NotImplementedError


class _Function(_Recipe):
    """A function whose closure cells or attributes (``functools.wraps``' ``__wrapped__``)
    hold tracers: ``names`` are the traced cells' free variables, then the attributes'."""

    __slots__ = ("function", "cells", "traced_cells", "own_cells", "attributes")

    def __init__(self, function: types.FunctionType, cells: list, traced: tuple, own: tuple, attributes: dict, names):
        super().__init__(names)
        # The function itself holds tracers, so only what remakes it is kept.
        self.function = (function.__code__, function.__globals__, function.__name__, function.__defaults__)
        self.cells = cells  # the cells' contents; None where traced or the function's own
        self.traced_cells = traced  # the positions of the traced cells
        self.own_cells = own  # those of the cells holding the function itself
        self.attributes = (function.__qualname__, function.__kwdefaults__, attributes)

    def make(self, values: tuple) -> types.FunctionType:
        contents = list(self.cells)
        for position, value in zip(self.traced_cells, values):
            contents[position] = value
        code, globals_, name, defaults = self.function
        closure = tuple(types.CellType(value) for value in contents) if contents else None
        made = types.FunctionType(code, globals_, name, defaults, closure)
        for position in self.own_cells:
            closure[position].cell_contents = made  # type: ignore[index]
        made.__qualname__, made.__kwdefaults__, attributes = self.attributes
        vars(made).update(attributes)
        vars(made).update(zip(self.names[len(self.traced_cells) :], values[len(self.traced_cells) :]))
        return made


class _Object(_Recipe):
    """An object of a plain class whose attributes (in its ``__dict__`` or its slots) hold tracers."""

    __slots__ = ("cls", "attributes")

    def __init__(self, cls: type, attributes: dict, names: tuple[str, ...]) -> None:
        super().__init__(names)
        self.cls, self.attributes = cls, attributes

    def make(self, values: tuple) -> Any:
        made: Any = object.__new__(self.cls)  # no __init__: the attributes are the stop's
        slots = _slot_names(self.cls)
        for name, value in [*self.attributes.items(), *zip(self.names, values)]:
            if name in slots:  # past a frozen dataclass's own __setattr__, as its __init__ does
                object.__setattr__(made, name, value)
            else:
                vars(made)[name] = value
        return made


def _state(leaf: Any) -> dict[str, Any]:
    """An object's attributes: its ``__dict__`` and the slots it has set."""
    state = dict(vars(leaf)) if isinstance(getattr(leaf, "__dict__", None), dict) else {}
    for name in _slot_names(type(leaf)):
        try:
            state[name] = object.__getattribute__(leaf, name)
        except AttributeError:  # a slot never set
            pass
    return state


def _slot_names(kind: type) -> frozenset[str]:
    """The slots a class and those above it declare, as their attributes are named."""
    known = _SLOTS.get(kind)
    if known is None:
        if len(_SLOTS) > _MOST_KINDS:
            _SLOTS.clear()
        names = set()
        for base in kind.__mro__:
            declared = vars(base).get("__slots__", ())
            for name in [declared] if isinstance(declared, str) else declared:
                private = name.startswith("__") and not name.endswith("__")
                names.add(f"_{base.__name__.lstrip('_')}{name}" if private else name)
        known = _SLOTS[kind] = frozenset(names - _NO_STATE)
    return known


_SLOTS: dict[type, frozenset[str]] = {}


class _Method(_Recipe):
    """A bound method of a holder."""

    __slots__ = ()

    def make(self, values: tuple) -> Any:
        owner, function = values
        return types.MethodType(function, owner)


class _Partial(_Recipe):
    """A ``functools.partial`` with traced arguments."""

    __slots__ = ()

    def make(self, values: tuple) -> Any:
        function, args, keywords = values
        return functools.partial(function, *args, **keywords)


class TracedHolder:
    """Stands for a holder of traced values in the trace; unflattened, it is made again
    over the values it is given."""

    __slots__ = ("recipe", "values")

    def __init__(self, recipe: _Recipe, values: tuple) -> None:
        self.recipe, self.values = recipe, values


def flattened(value: Any) -> tuple[list, Any]:
    """``jax.tree_util.tree_flatten(value)``, where each holder of tracers among the leaves
    (the value itself, a field of an Equinox Module) is flattened as its :class:`TracedHolder`."""
    leaves, treedef = jax.tree_util.tree_flatten(value)
    if not jax_api.is_tracing():
        return leaves, treedef  # eager: no value holds a tracer
    holders = [_may_hold(leaf) for leaf in leaves]  # asked once per leaf: it runs for every local
    if not any(holders):
        return leaves, treedef
    budget = _Budget()
    swapped = [_holder_swapped(leaf, _DEPTH, budget)[0] if holder else leaf for leaf, holder in zip(leaves, holders)]
    if all(new is old for new, old in zip(swapped, leaves)):
        return leaves, treedef
    return jax.tree_util.tree_flatten(jax.tree_util.tree_unflatten(treedef, swapped))


class _Budget:
    """How many more values one local's walk may visit (a frame's objects can reach far: a
    test runner's configuration, a library's registries), and the holders it is inside."""

    __slots__ = ("left", "inside")

    def __init__(self) -> None:
        self.left = _MOST_VISITED
        self.inside: set[int] = set()

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


class _MadeAbove:
    """What a holder's reference back to one it is inside is at the stop (a child Node's
    ``parent``): a pytree holds no cycle, so the holder is made once, above."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<the {self.kind} holding this, made above>"


_MOST_VISITED = 20_000
_MOST_NESTED = 32  # containers in containers

# Values that hold nothing: skipped at once.
_ATOMS = frozenset({int, float, complex, bool, str, bytes, type(None), np.ndarray})


def _swapped(content: Any, depth: int, budget: _Budget, nested: int = 0) -> tuple[Any, bool]:
    """(``content`` with the holders in it swapped for their stand-ins, whether it holds a
    tracer): walked here, in Python, not flattened by JAX at once. JAX's flatten fails on
    a dict whose keys do not sort (``argparse``'s registries), and each such failure
    leaves Python's recursion limit one call lower for good."""
    if isinstance(content, jax.core.Tracer):
        return content, True
    kind = type(content)
    if kind in _ATOMS or isinstance(content, jax.Array) or not budget.take() or nested > _MOST_NESTED:
        return content, False
    if _may_hold(content):
        return _holder_swapped(content, depth, budget)
    if isinstance(content, dict):
        children = list(content.values())
    elif kind is list or kind is tuple:
        children = list(content)
    else:  # a pytree node (a NamedTuple, an optax state, an Equinox Module), one level
        one_level = guarded(
            lambda: jax.tree_util.tree_flatten(content, is_leaf=lambda node: node is not content), lambda e: None
        )
        if one_level is None or (len(one_level[0]) == 1 and one_level[0][0] is content):
            return content, False  # a leaf, not a holder: an object of a library's class
        children, treedef = one_level
    walked = [_swapped(child, depth, budget, nested + 1) for child in children]
    traced = any(held for _, held in walked)
    if all(new is old for (new, _), old in zip(walked, children)):
        return content, traced
    new_children = [new for new, _ in walked]
    if kind is dict:
        return dict(zip(content, new_children)), traced
    if kind is list or kind is tuple:
        return kind(new_children), traced
    if isinstance(content, dict):  # a dict of another class: kept as it is
        return content, traced
    return jax.tree_util.tree_unflatten(treedef, new_children), traced


def _holder_swapped(holder: Any, depth: int, budget: _Budget) -> tuple[Any, bool]:
    """:func:`_swapped` of a value :func:`_may_hold` took for a holder."""
    if id(holder) in budget.inside:
        return _MadeAbove(type(holder).__qualname__), False
    if depth < 1:
        return holder, False
    budget.inside.add(id(holder))
    try:
        made = guarded(lambda: _standing_for(holder, depth, budget), lambda e: holder)
    finally:
        budget.inside.discard(id(holder))
    return made, made is not holder


def _traced_parts(parts: dict, depth: int, budget: _Budget) -> tuple[dict, dict]:
    """``parts`` split into (untraced, traced), each traced part with its holders swapped."""
    untraced: dict[str, Any] = {}
    traced: dict[str, Any] = {}
    for name, content in parts.items():
        content, held = _swapped(content, depth - 1, budget)
        (traced if held else untraced)[name] = content
    return untraced, traced


def _standing_for(leaf: Any, depth: int, budget: _Budget) -> Any:
    """A :class:`TracedHolder` for ``leaf`` where it holds tracers, else ``leaf``."""
    kind = type(leaf)
    if kind is types.FunctionType:
        return _function_standing_for(leaf, depth, budget)
    if kind is types.MethodType or kind is functools.partial:
        if kind is types.MethodType:
            parts = {"__self__": leaf.__self__, "__func__": leaf.__func__}
        else:
            parts = {"func": leaf.func, "args": leaf.args, "keywords": leaf.keywords}
        _, traced = _traced_parts(parts, depth, budget)
        if not traced:
            return leaf
        parts.update(traced)
        recipe = _Method(tuple(parts)) if kind is types.MethodType else _Partial(tuple(parts))
        return TracedHolder(recipe, tuple(parts.values()))
    if linen_modules.is_module(leaf):  # its own stand-in, which reads its scope
        return linen_modules.standing_for(leaf)
    untraced, traced = _traced_parts(_state(leaf), depth, budget)
    if not traced:
        return leaf
    return TracedHolder(_Object(kind, untraced, tuple(traced)), tuple(traced.values()))


def _function_standing_for(function: types.FunctionType, depth: int, budget: _Budget) -> Any:
    if _swapped((function.__defaults__, function.__kwdefaults__), 0, budget)[1]:
        return function
    cells = {}
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # a name not yet assigned in the enclosing function
            return function
    # A recursive inner function's cell holds the function itself: the one made again.
    own = tuple(position for position, content in enumerate(cells.values()) if content is function)
    others = {name: content for name, content in cells.items() if content is not function}
    untraced_cells, traced_cells = _traced_parts(others, depth, budget)
    untraced, traced = _traced_parts(vars(function), depth, budget)
    if not traced_cells and not traced:
        return function
    positions = tuple(position for position, name in enumerate(cells) if name in traced_cells)
    contents = [untraced_cells.get(name) for name in cells]
    recipe = _Function(function, contents, positions, own, untraced, (*traced_cells, *traced))
    return TracedHolder(recipe, (*traced_cells.values(), *traced.values()))


def _may_hold(leaf: Any) -> bool:
    """Whether ``leaf`` is a kind of holder made again at the stop: a function, a bound
    method, a partial, a Linen Module, or an object of a plain class with a few attributes."""
    kind = type(leaf)
    verdict = _KINDS.get(kind)
    if verdict is None:  # decided once per type: this runs for every leaf of every local
        if len(_KINDS) > _MOST_KINDS:  # classes made again and again (a notebook's cells)
            _KINDS.clear()
        verdict = _KINDS[kind] = guarded(lambda: _kind_may_hold(kind), lambda e: False)
    if verdict is not _PLAIN:
        return bool(verdict)
    state = getattr(leaf, "__dict__", None)
    attributes = (len(state) if isinstance(state, dict) else 0) + len(_slot_names(kind))
    return 0 < attributes <= _MOST_ATTRIBUTES


_PLAIN = "plain class"
_KINDS: dict[type, Any] = {}
_MOST_KINDS = 4096


def _kind_may_hold(kind: type) -> Any:
    """True, False, or :data:`_PLAIN` for a class whose objects are copied safely: its
    state all in its ``__dict__`` and slots (no builtin base), made by ``object.__new__``,
    no ``__del__`` that a copy would run too, and not Python's, JAX's, NumPy's or jaxdbg's."""
    if kind in (types.FunctionType, types.MethodType, functools.partial):
        return True
    linen = linen_modules.linen_module_class()
    if linen is not None and issubclass(kind, linen):
        return True
    if kind.__new__ is not object.__new__ or str(kind.__module__).partition(".")[0] in _LIBRARIES_OWN:
        return False
    if getattr(kind, "__del__", None) is not None:
        return False
    return _PLAIN if all(base is object or base.__module__ != "builtins" for base in kind.__mro__) else False


_LIBRARIES_OWN = frozenset({"builtins", "jax", "jaxlib", "numpy", "jaxdbg", "ml_dtypes", "types", "functools"})
_NO_STATE = frozenset({"__dict__", "__weakref__"})


def _flatten_with_keys(holder: TracedHolder) -> tuple[tuple[tuple[Any, Any], ...], _Recipe]:
    keyed = tuple((jax.tree_util.GetAttrKey(name), value) for name, value in zip(holder.recipe.names, holder.values))
    return keyed, holder.recipe


def _flatten(holder: TracedHolder) -> tuple[tuple, _Recipe]:
    return holder.values, holder.recipe


def _unflatten(recipe: _Recipe, children: Any) -> Any:
    return recipe.make(tuple(children))  # at the stop: the holder, over the values that arrived


jax.tree_util.register_pytree_with_keys(TracedHolder, _flatten_with_keys, _unflatten, _flatten)
