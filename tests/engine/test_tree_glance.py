"""A big pytree's locals row before it is shown: kind and top-level size, no walk.

Real JAX values and a real Equinox Module; "no walk" is seen as flatten calls of a
registered pytree type that counts them, and as leaves whose values were never read.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxdbg.engine.values import leaf_stats, local_rows, tree_glance

LIMIT = tree_glance.LEAVES_AT_A_GLANCE
FLATTENED = [0]


class Pair:
    """Two leaves; flattening one counts in :data:`FLATTENED`."""

    def __init__(self, a, b):
        self.a, self.b = a, b


def _flatten(pair):
    FLATTENED[0] += 1
    return (pair.a, pair.b), None


jax.tree_util.register_pytree_node(Pair, _flatten, lambda _, children: Pair(*children))


def test_a_tree_at_the_limit_is_summarised_at_once_one_past_it_is_not():
    at_limit = [jnp.full((2,), float(i)) for i in range(LIMIT)]
    row = local_rows.local_row("xs", at_limit, lazy=True)
    assert not row["pending"] and row["summary"].startswith(f"{LIMIT} arrays · {2 * LIMIT} float32")
    assert "‖·‖" in row["summary"]
    past = at_limit + [jnp.ones(2)]
    row = local_rows.local_row("xs", past, lazy=True)
    assert row["pending"] and row["summary"] == f"list · {LIMIT + 1} entries · summary when shown"
    assert not leaf_stats._cached(past[-1])[0]  # no value of it read


def test_the_glance_visits_only_the_leaves_it_counts():
    tree = {"blocks": [Pair(jnp.ones(3), jnp.zeros(3)) for _ in range(10_000)], "step": jnp.int32(0)}
    FLATTENED[0] = 0
    row = local_rows.local_row("state", tree, lazy=True)
    assert row["summary"] == "dict · 2 entries · summary when shown" and row["pending"]
    assert FLATTENED[0] <= LIMIT // 2 + 1
    FLATTENED[0] = 0
    full = local_rows.local_row("state", tree)
    assert FLATTENED[0] >= 10_000 and full["summary"].startswith("20,001 arrays · 60,000 float32 + 1 int32")


def test_a_libraries_kind_names_a_big_tree():
    eqx = pytest.importorskip("equinox")
    mlp = eqx.nn.MLP(4, 4, width_size=4, depth=200, key=jax.random.PRNGKey(0))
    row = local_rows.local_row("mlp", mlp, lazy=True)
    assert row["pending"] and row["type"] == "MLP" and row["expandable"]
    assert row["summary"].startswith("eqx.Module · ") and row["summary"].endswith(" · summary when shown")
    assert local_rows.local_row("mlp", mlp)["summary"].startswith("eqx.Module · 402 arrays")


def test_a_tree_that_cannot_be_walked_keeps_its_row():
    class Broken:
        pass

    jax.tree_util.register_pytree_node(Broken, lambda b: (_ for _ in ()).throw(ValueError("no")), lambda *_: Broken())
    assert not tree_glance.has_more_leaves(Broken())
    row = local_rows.local_row("b", [Broken()] * 300, lazy=True)  # the row says what it can, never raises
    assert row["name"] == "b"
