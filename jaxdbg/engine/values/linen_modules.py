"""A bound Flax Linen Module met as a stop's local (``self`` in a ``__call__``).

A Linen Module is no pytree: its parameters live in its scope, which in a traced
function holds tracers, so the Module alone would show tracers at the stop. The stop
captures a :class:`LinenModule` in its place: a pytree whose child is the Module's
variables, so they travel with the stop's other values. At the stop it stands for the
Module bound to the values that arrived (``clone(parent=None).bind(variables)``):
``self.features``, ``self.variables['params']``, ``self(x)`` and the Module's methods
answer as on the live Module, and the locals row, ``tree`` and ``pp`` read the variables.

Flax is never imported here: a value is a Linen Module only where ``flax.linen`` is loaded.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
from typing import Any, Callable

import jax

from jaxdbg.runtime.guarded_calls import guarded

#: The library kind a locals row gives a Linen Module (as ``nnx.Module`` for NNX).
KIND = "nn.Module"


def _linen() -> Any:
    return sys.modules.get("flax.linen")


def linen_module_class() -> type | None:
    """``flax.linen.Module``, where Flax's Linen is loaded."""
    linen = _linen()
    return getattr(linen, "Module", None) if linen is not None else None


def is_module(value: Any) -> bool:
    """Whether ``value`` is a Linen Module (bound or not)."""
    module = linen_module_class()
    if module is None:
        return False
    try:
        return isinstance(value, module)
    except Exception:  # a user object whose __class__ raises
        return False


def standing_for(value: Any) -> Any:
    """A :class:`LinenModule` for a bound Linen Module whose variables can be read, else
    ``value`` itself. An unbound Module (``nn.Dense(8)`` before ``init``) holds no values."""
    if type(value) is LinenModule or not is_module(value):
        return value
    return guarded(lambda: _standing_for(value), lambda e: value)


def _standing_for(module: Any) -> Any:
    if getattr(module, "scope", None) is None:
        return module
    # An unbound copy (its submodules too), and new containers for its variables: the
    # Module holds its scope, whose variables and RNGs are the trace's tracers, and which
    # init fills in after the stop; the stop's template outlives the trace.
    variables = jax.tree_util.tree_map(lambda leaf: leaf, module.variables)
    return LinenModule(module.copy(parent=None, name=module.name), variables)


class _Aux:
    """The Module a stand-in was made from, as tree metadata: compared by identity (a
    Module's own ``==`` compares its fields, and JAX may hash tree metadata)."""

    __slots__ = ("module",)

    def __init__(self, module: Any) -> None:
        self.module = module

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Aux) and other.module is self.module

    def __hash__(self) -> int:
        return id(self.module)


class LinenModule:
    """Stands for a bound Linen Module at a stop (see the module docstring): its
    attributes, methods and calls are the Module's, bound to ``variables``."""

    __slots__ = ("_module", "_variables", "_bound")

    def __init__(self, module: Any, variables: Any) -> None:
        self._module, self._variables = module, variables
        self._bound: Any = None

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(self, nn.Module) holds, as on the live Module
        return type(self._module)

    @property
    def module_type(self) -> type:
        """The Module's class (``Block``), which the locals row names."""
        return type(self._module)

    def bound(self) -> Any:
        """The Module bound to this stop's variables (made when first asked for). As in
        ``apply`` without ``mutable``, a call that would change a collection raises."""
        if self._bound is None:
            self._bound = self._module.clone(parent=None).bind(self._variables)
        return self._bound

    def fields(self) -> list[tuple[str, Any]]:
        """The Module's attributes (``features``), without Linen's ``parent`` and ``name``."""
        return [
            (f.name, getattr(self._module, f.name, None))
            for f in dataclasses.fields(self._module)
            if f.name not in ("parent", "name")
        ]

    def method_for_replay(self, code: types.CodeType) -> Callable[..., Any] | None:
        """The Module's method whose function is ``code``, on a fresh binding to new
        containers over this stop's arrays, every collection mutable (a train step's
        BatchNorm updates its statistics): Linen sets up a method's scope, which the bare
        function would lack, and the stop's own variables stay as they were."""
        method = getattr(type(self._module), code.co_name, None)
        if method is None or getattr(inspect.unwrap(method), "__code__", None) is not code:
            return None
        variables = jax.tree_util.tree_map(lambda leaf: leaf, self._variables)
        rebound: Callable[..., Any] = getattr(
            self._module.clone(parent=None).bind(variables, mutable=True), code.co_name
        )
        return rebound

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # copy / pickle probes: not the Module's
            raise AttributeError(name)
        if any(field.name == name for field in dataclasses.fields(self._module)):  # no binding needed
            return getattr(self._module, name)
        try:
            bound = self.bound()
        except Exception as e:  # hasattr() and views then read "no such attribute", with why
            raise AttributeError(
                f"{name!r}: the {type(self._module).__name__} could not be bound to the stop's variables ({e})"
            ) from e
        return getattr(bound, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.bound()(*args, **kwargs)

    def __dir__(self) -> list[str]:  # what completion offers after ``self.``
        return sorted(set(dir(self._module)) | {"variables"})

    def __repr__(self) -> str:
        return repr(self._module)


def _flatten_with_keys(module: LinenModule) -> tuple[tuple[tuple[Any, Any], ...], _Aux]:
    return ((jax.tree_util.GetAttrKey("variables"), module._variables),), _Aux(module._module)


def _flatten(module: LinenModule) -> tuple[tuple[Any, ...], _Aux]:
    return (module._variables,), _Aux(module._module)


def _unflatten(aux: _Aux, children: Any) -> LinenModule:
    return LinenModule(aux.module, children[0])


jax.tree_util.register_pytree_with_keys(LinenModule, _flatten_with_keys, _unflatten, _flatten)
