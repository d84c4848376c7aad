"""A stop's pytree locals rebuilt from the operands that reached the host: a big tree's
leaves are read at once (no call per leaf), a batched stop's each as its element, and an
operand that was not sent stands as unavailable."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxdbg
from jaxdbg.capture.breakpoints import _reader
from jaxdbg.engine.frames import FrameTemplate, OperandSlot, Unavailable


def _template(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    slots = [OperandSlot(i) for i in range(len(leaves))]
    return FrameTemplate(__file__, 1, "step", {}, 1, {}, {"params": (treedef, slots)}, ["params"]), leaves


def test_an_unbatched_stops_tree_is_read_at_once():
    tree = {f"layer{i}": {"w": jnp.full((2, 2), float(i)), "b": jnp.zeros(2)} for i in range(1_000)}
    template, leaves = _template(tree)
    levels = [(False,)] * len(leaves)
    for _ in range(2):  # two stops: each reads the very arrays that came
        reader = _reader((), levels, dict(enumerate(leaves)), {})
        built = template.build(reader).locals["params"]
        assert built["layer7"]["w"] is tree["layer7"]["w"]  # the very arrays, not copies
        assert jax.tree_util.tree_structure(built) == jax.tree_util.tree_structure(tree)
    assert reader.cache_info().misses == 0  # type: ignore[attr-defined]  # no call per leaf


def test_a_batched_stop_reads_each_leaf_as_its_element():
    tree = {"w": jnp.arange(6.0).reshape(3, 2), "b": jnp.arange(3.0)}  # batched along axis 0
    template, leaves = _template(tree)
    reader = _reader((1,), [(True,)] * len(leaves), dict(enumerate(leaves)), {})
    built = template.build(reader).locals["params"]
    np.testing.assert_array_equal(built["w"], [2.0, 3.0])
    assert float(built["b"]) == 1.0


def test_an_operand_that_was_not_sent_is_unavailable():
    tree = {"a": jnp.ones(2), "b": jnp.zeros(2)}
    template, leaves = _template(tree)
    reader = _reader((), [(False,)] * 2, {0: leaves[0]}, {})  # a screening sent only the first
    built = template.build(reader).locals["params"]
    assert built["a"] is leaves[0] and isinstance(built["b"], Unavailable)


def test_a_jitted_stops_big_tree_local_holds_its_values():
    seen = {}

    def keep(session, **_):
        seen["params"] = session.frames[0].locals["params"]
        session.execute("continue")

    jaxdbg.register_debugger("operand-reading-test", keep, priority=-1000, replace=True)

    @jax.jit
    def step(params, x):
        jaxdbg.breakpoint(backend="operand-reading-test")
        return x + params["layer0"]["b"]

    params = {f"layer{i}": {"w": jnp.full((2,), float(i)), "b": jnp.ones(2)} for i in range(600)}
    for _ in range(2):
        step(params, jnp.zeros(2)).block_until_ready()
        assert float(seen["params"]["layer599"]["w"][0]) == 599.0 and len(seen["params"]) == 600
