"""A function defined inside a traced function, closing over its traced values.

A train step's ``loss_fn`` reads the step's ``x`` and ``y`` from its closure. Kept as
it is, such a local would hold the trace's tracers past the trace (``jax.checking_leaks``
reports them), and calling it at the stop would raise. The stop captures a
:class:`TracedClosure` in its place: a pytree whose children are the closure's traced
values, so they travel with the stop's other values, and which is rebuilt at the stop
as the same function closing over the values that arrived: ``loss_fn(params)`` runs
there on the step's data.
"""

from __future__ import annotations

import types
from typing import Any

import jax

from jaxdbg.internals import jax_api
from jaxdbg.runtime.guarded_calls import guarded


class _Recipe:
    """What makes the function again, less its traced cells; compared by identity (JAX may
    hash tree metadata)."""

    __slots__ = ("code", "globals", "name", "qualname", "defaults", "kwdefaults", "cells", "traced")

    def __init__(self, function: types.FunctionType, cells: list[Any], traced: tuple[int, ...]) -> None:
        self.code, self.globals = function.__code__, function.__globals__
        self.name, self.qualname = function.__name__, function.__qualname__
        self.defaults, self.kwdefaults = function.__defaults__, function.__kwdefaults__
        self.cells = cells  # the untraced cells' contents; None where traced
        self.traced = traced  # the positions of the traced cells

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def function(self, traced_values: Any) -> types.FunctionType:
        contents = list(self.cells)
        for position, value in zip(self.traced, traced_values):
            contents[position] = value
        closure = tuple(types.CellType(value) for value in contents)
        made = types.FunctionType(self.code, self.globals, self.name, self.defaults, closure)
        made.__qualname__, made.__kwdefaults__ = self.qualname, self.kwdefaults
        return made


class TracedClosure:
    """Stands for a closure over traced values in the trace; unflattened, it is the
    function again, closing over the values it is given."""

    __slots__ = ("recipe", "values")

    def __init__(self, recipe: _Recipe, values: tuple) -> None:
        self.recipe, self.values = recipe, values


def flattened(value: Any) -> tuple[list, Any]:
    """``jax.tree_util.tree_flatten(value)``, where each function among the leaves (the
    value itself, a field of an Equinox Module) that closes over tracers is flattened as
    its :class:`TracedClosure`."""
    leaves, treedef = jax.tree_util.tree_flatten(value)
    swapped = _functions_swapped(leaves, _NESTED_CLOSURES)
    if swapped is None:
        return leaves, treedef
    return jax.tree_util.tree_flatten(jax.tree_util.tree_unflatten(treedef, swapped))


# How deep a closure's own closures are followed: `grad_fn = jax.value_and_grad(loss_fn)`
# closes over `loss_fn`, which closes over the step's data.
_NESTED_CLOSURES = 3


def _functions_swapped(leaves: list, depth: int) -> list | None:
    """``leaves`` with each function that closes over tracers swapped for its stand-in;
    None where none does."""
    if not any(type(leaf) is types.FunctionType for leaf in leaves):
        return None
    swapped = [
        guarded(lambda: _standing_for(leaf, depth), lambda e: leaf) if type(leaf) is types.FunctionType else leaf
        for leaf in leaves
    ]
    return None if all(new is old for new, old in zip(swapped, leaves)) else swapped


def _standing_for(function: types.FunctionType, depth: int) -> Any:
    """A :class:`TracedClosure` for ``function`` where its closure holds tracers, else ``function``."""
    if not function.__closure__ or jax_api.holds_tracer((function.__defaults__, function.__kwdefaults__)):
        return function
    contents, traced = [], []
    for position, cell in enumerate(function.__closure__):
        try:
            content = cell.cell_contents
        except ValueError:  # a name not yet assigned in the enclosing function
            return function
        if depth > 1 and content is not function:  # a closure over a closure (`grad_fn` over `loss_fn`)
            leaves, treedef = jax.tree_util.tree_flatten(content)
            swapped = _functions_swapped(leaves, depth - 1)
            content = content if swapped is None else jax.tree_util.tree_unflatten(treedef, swapped)
        held = jax_api.holds_tracer(content)
        contents.append(None if held else content)
        if held:
            traced.append((position, content))
    if not traced:
        return function
    recipe = _Recipe(function, contents, tuple(position for position, _ in traced))
    return TracedClosure(recipe, tuple(content for _, content in traced))


def _flatten_with_keys(closure: TracedClosure) -> tuple[tuple[tuple[Any, Any], ...], _Recipe]:
    names = closure.recipe.code.co_freevars
    keyed = tuple(
        (jax.tree_util.GetAttrKey(names[position]), value)
        for position, value in zip(closure.recipe.traced, closure.values)
    )
    return keyed, closure.recipe


def _flatten(closure: TracedClosure) -> tuple[tuple, _Recipe]:
    return closure.values, closure.recipe


def _unflatten(recipe: _Recipe, children: Any) -> Any:
    return recipe.function(tuple(children))  # at the stop: the function, over the values that arrived


jax.tree_util.register_pytree_with_keys(TracedClosure, _flatten_with_keys, _unflatten, _flatten)
