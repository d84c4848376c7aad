"""A pytree watch at each hit: the tree's structure is read once per structure, and what
each hit keeps (its line, global norm, each float leaf's norm and NaN / Inf counts) is
what reading the whole tree the slow way gives, NaNs, Infs, dtypes and big leaves included."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxdbg.engine import watches
from jaxdbg.engine.values import tree_hits, tree_summaries


def _grads(scale: float = 1.0):
    a = jnp.tanh(jnp.arange(256.0) / 50) * scale
    return {
        "l1": {"kernel": jnp.outer(a[:64], a[:32]), "bias": a[:32]},
        "bn": {"scale": a[:32] * 2, "bias": a[32:64]},
        "l2": {"kernel": jnp.outer(a[:32], a[:2]), "bias": a[:2]},
    }


def _slowly(value, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(tree_hits, "tree_hit", lambda value: None)
        return watches.value_of(1, value)


TREES = {
    "gradients": lambda: _grads(),
    "a NaN and an Inf": lambda: {
        **_grads(),
        "l3": {"kernel": jnp.array([1.0, jnp.nan, jnp.nan]), "bias": jnp.array([jnp.inf, 2.0])},
    },
    "a leaf of only NaN": lambda: [jnp.full((3,), jnp.nan), jnp.ones(2)],
    "two dtypes and a big leaf": lambda: {
        "w": jnp.ones((300, 300), jnp.float32),  # past SMALL_LEAF: read on its own
        "h": jnp.arange(8, dtype=jnp.bfloat16),
        "step": jnp.int32(3),
        "name": "adam",
    },
    "an optax state": lambda: pytest.importorskip("optax").adam(1e-3).init(_grads()),
}


@pytest.mark.parametrize("make", TREES.values(), ids=TREES.keys())
def test_each_hit_keeps_what_the_whole_tree_read_slowly_gives(make, monkeypatch):
    tree_hits._LAYOUTS.clear()
    for _ in range(2):  # the first hit reads the structure, the second uses it
        value = make()
        quick, slow = watches.value_of(1, value), _slowly(value, monkeypatch)
        assert quick.text == slow.text
        np.testing.assert_allclose(quick.number, slow.number, rtol=1e-12)
        assert quick.leaves.paths == slow.leaves.paths
        np.testing.assert_allclose(quick.leaves.norms, slow.leaves.norms, rtol=1e-12)
        np.testing.assert_array_equal(quick.leaves.nans, slow.leaves.nans)
        np.testing.assert_array_equal(quick.leaves.infs, slow.leaves.infs)


def test_a_nan_names_its_leaf():
    value = TREES["a NaN and an Inf"]()
    hit = tree_hits.tree_hit(value)
    assert "NaN in ['l3']['kernel'] (2)" in hit.summary.line() and "Inf in ['l3']['bias'] (1)" in hit.summary.line()
    assert hit.paths[int(np.flatnonzero(hit.nans)[0])] == "['l3']['kernel']"


def test_the_structure_is_read_once_per_structure(monkeypatch):
    tree_hits._LAYOUTS.clear()
    reads = []
    real = tree_summaries.leaves
    monkeypatch.setattr(tree_summaries, "leaves", lambda value, **kw: reads.append(1) or real(value, **kw))
    hits = [tree_hits.tree_hit(_grads(scale=1 + i / 10)) for i in range(20)]
    assert len(reads) == 1
    assert all(h.paths is hits[0].paths for h in hits)  # one tuple for all of them
    assert hits[5].summary.norm != hits[0].summary.norm  # the numbers are each hit's own
    bigger = _grads()
    bigger["l2"]["bias"] = jnp.ones(7)  # the same structure, another shape: read again
    line = tree_hits.tree_hit(bigger).summary.line()
    assert len(reads) == 2 and "2,215 float32" in line, line


def test_a_tree_without_float_leaves_is_left_to_the_slow_way():
    assert tree_hits.tree_hit({"step": jnp.int32(1), "lr": 0.1}) is None
    assert watches.value_of(1, {"step": jnp.int32(1), "lr": 0.1}).text
