"""Fixes for older JAX releases that jaxdbg still supports (Colab runs jax 0.7).

jax 0.7's ``custom_vmap_call`` primitive reports no effects, so under ``jit`` a
breakpoint whose (unused) result is dead code is pruned with its host callback:
the stop silently never happens. jax 0.8 made the primitive report the effects of
its body; :func:`apply` gives 0.7 the same abstract-evaluation rule. Newer JAX is
left untouched.
"""

from __future__ import annotations

from typing import Any

import jax

_applied = False


def _custom_vmap_primitive() -> Any:
    try:
        from jax._src import custom_batching
    except ImportError:
        return None
    return getattr(custom_batching, "custom_vmap_p", None)


def custom_vmap_keeps_effects() -> bool:
    """Whether a debug callback inside ``custom_vmap`` survives as an effect of the call."""
    from jax.custom_batching import custom_vmap

    @custom_vmap
    def probe(x):
        jax.debug.callback(lambda _: None, x)
        return x

    probe.def_vmap(lambda axis_size, in_batched, x: (probe(x), in_batched[0]))
    jaxpr = jax.make_jaxpr(probe)(1.0)
    return bool(jaxpr.effects)


def apply() -> None:
    """Make ``custom_vmap_call`` report its body's effects where JAX does not (0.7)."""
    global _applied
    if _applied:
        return
    _applied = True
    if custom_vmap_keeps_effects():
        return
    primitive = _custom_vmap_primitive()
    if primitive is None or not hasattr(primitive, "def_effectful_abstract_eval"):
        return

    def abstract_eval(*in_avals: Any, call: Any, **_: Any) -> Any:
        return call.out_avals, call.effects

    primitive.def_effectful_abstract_eval(abstract_eval)


def names_in_use() -> dict[str, bool]:
    """Private names this module needs on the running JAX (for tests/test_internals.py)."""
    primitive = _custom_vmap_primitive()
    return {"jax._src.custom_batching.custom_vmap_p.def_effectful_abstract_eval":
            primitive is not None and hasattr(primitive, "def_effectful_abstract_eval")}
