"""The one save/restore route for every jax.* function jaxdbg stands in for."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import jax

from jaxdbg.runtime import jax_routes
from jaxdbg.runtime.jax_routes import Route

ROOT = Path(__file__).resolve().parents[2]


def jax_own():
    return "jax"


def ours():
    return "jaxdbg"


def test_a_route_stands_in_and_puts_back_exactly_what_it_replaced():
    module = types.SimpleNamespace(fn=jax_own)
    route = Route(module, "fn")
    assert not route.installed and route.original() is jax_own
    assert route.install(ours)
    assert module.fn is ours and route.installed and route.replacement is ours
    assert route.original() is jax_own  # JAX's own, also while ours stands in
    assert route.uninstall()
    assert module.fn is jax_own and not route.installed and route.original() is jax_own


def test_installing_twice_keeps_the_first_and_one_uninstall_restores():
    module = types.SimpleNamespace(fn=jax_own)
    route = Route(module, "fn")
    assert route.install(ours)
    assert not route.install(lambda: "other")
    assert module.fn is ours and route.original() is jax_own  # not our own function
    route.uninstall()
    assert module.fn is jax_own
    assert not route.uninstall() and module.fn is jax_own  # nothing to undo: left alone


def test_uninstall_restores_the_original_even_when_something_rewrapped_it():
    module = types.SimpleNamespace(fn=jax_own)
    route = Route(module, "fn")
    route.install(ours)
    wrapped = module.fn

    def rewrapped():
        return "user:" + wrapped()

    module.fn = rewrapped  # a user's (or library's) wrapper around ours
    route.uninstall()
    assert module.fn is jax_own


def test_original_is_the_function_captured_when_declared_even_after_a_rebinding():
    """``jax.debug.callback = jaxdbg.callback`` must not make jaxdbg call itself."""
    module = types.SimpleNamespace(fn=jax_own)
    route = Route(module, "fn")
    module.fn = ours  # a user or library rebinds JAX's name to jaxdbg's
    assert route.original() is jax_own
    route.install(lambda: "routed")
    assert route.original() is jax_own
    route.uninstall()
    assert module.fn is ours  # what was there before install is put back


def test_each_swapped_jax_function_has_one_route_and_none_is_left_installed():
    pairs = [(route.owner, route.name) for route in jax_routes.ROUTES]
    assert len(set(map(repr, pairs))) == len(pairs)
    for route in jax_routes.ROUTES:
        assert callable(getattr(route.owner, route.name)), route
        assert not route.installed, route
    assert jax_routes.JIT.original() is jax.jit
    assert jax_routes.INSPECT_ARRAY_SHARDING.original() is jax.debug.inspect_array_sharding


def test_only_the_routes_module_assigns_jax_attributes():
    """``jax.x = ...`` or ``setattr(jax..., ...)`` anywhere else bypasses the route."""
    offenders = []
    for package in ("jaxdbg", "jaxdbg_widgets"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "jaxdbg" / "runtime" / "jax_routes.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                targets = []
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and node.args:
                    targets = [ast.Attribute(value=node.args[0], attr="?")]
                for target in targets:
                    if isinstance(target, ast.Attribute) and ast.unparse(target.value).split(".")[0] == "jax":
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "swap jax functions through jaxdbg.runtime.jax_routes:\n" + "\n".join(offenders)
