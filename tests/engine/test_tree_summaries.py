"""The locals row of a pytree: kind, leaves, dtypes, bytes, norm, max |x|, NaN / Inf by path.

Real Flax NNX, Equinox and optax values (the ``test`` extra); each test that needs one
skips where it is not installed.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdbg.engine.values import leaf_stats, local_rows, tree_summaries
from jaxdbg.engine.values.tree_summaries import summarize, tree_summary


def _nnx_mlp():
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(4, 16, rngs=rngs)
            self.bn = nnx.BatchNorm(16, rngs=rngs)
            self.l2 = nnx.Linear(16, 2, rngs=rngs)

    return nnx, MLP(nnx.Rngs(0))


def _global_norm(tree) -> float:
    return float(np.sqrt(sum(float(np.sum(np.square(np.asarray(x, np.float64)))) for x in jax.tree.leaves(tree))))


def test_nnx_module_row_gives_kind_counts_dtypes_bytes_norm_and_max():
    nnx, model = _nnx_mlp()
    line = summarize("model", model).preview
    # 4*16 + 16 + 16*2 + 2 = 114 Linear weights, 4 * 16 BatchNorm values
    assert line.startswith("nnx.Module · 8 arrays · 178 float32 · 712 B · ‖·‖ ")
    params = nnx.state(model, nnx.Param)
    norm = _global_norm(model)
    assert f"‖·‖ {norm:.4g}" in line
    top = max(float(jnp.max(jnp.abs(x))) for x in jax.tree.leaves(model))
    assert line.endswith(f"max {top:.4g}")
    assert "NaN" not in line and "..." not in line
    assert summarize("params", params).preview.startswith("nnx.State · 6 arrays · 146 float32 · 584 B")
    assert summarize("p", model.l1.kernel).preview.startswith("nnx.Param · float32[4,16] · 256 B · ‖·‖ ")
    assert summarize("s", model.bn.mean).preview.startswith("nnx.BatchStat · float32[16] · 64 B")


def test_nan_and_inf_are_named_by_the_first_leaf_path_that_holds_them():
    nnx, model = _nnx_mlp()
    grads = jax.tree.map(jnp.zeros_like, nnx.state(model, nnx.Param))
    grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...].at[0, :].set(jnp.nan)  # 2 NaN
    grads["l1"]["bias"][...] = grads["l1"]["bias"][...].at[3].set(jnp.inf)
    summary = tree_summary(grads)
    assert summary is not None and summary.nonfinite
    line = summary.line()
    assert "NaN in ['l2']['kernel'] (2)" in line
    assert "Inf in ['l1']['bias'] (1)" in line
    assert "‖·‖ 0 · max 0" in line  # over the finite values
    grads["l1"]["kernel"][...] = grads["l1"]["kernel"][...].at[0, 0].set(jnp.nan)
    assert "NaN in ['l1']['kernel'] (1) and 1 more leaf (3 in all)" in tree_summary(grads).line()


def test_a_module_leaf_path_is_an_expression_of_the_module():
    _, model = _nnx_mlp()
    model.l2.kernel[...] = model.l2.kernel[...].at[1, 1].set(jnp.nan)
    line = summarize("model", model).preview
    assert line.endswith("NaN in .l2.kernel (1)")
    assert bool(jnp.isnan(eval("model" + ".l2.kernel", {"model": model})[1, 1]))


def test_equinox_module_counts_its_functions_and_keeps_static_fields_out():
    eqx = pytest.importorskip("equinox")
    mlp = eqx.nn.MLP(2, 2, 4, 2, key=jax.random.key(0))
    line = summarize("model", mlp).preview
    # weights 2x4+4, 4x4+4, 4x2+2; activation and final_activation are leaves (functions)
    assert line.startswith("eqx.Module · 6 arrays · 42 float32 · 168 B · 2 other leaves · ‖·‖ ")
    assert f"‖·‖ {_global_norm(eqx.filter(mlp, eqx.is_array)):.4g}" in line


def test_an_equinox_module_opened_in_the_panel_marks_its_static_fields():
    eqx = pytest.importorskip("equinox")
    mlp = eqx.nn.MLP(2, 2, 4, 1, key=jax.random.key(0))
    rows, total = local_rows.child_rows(mlp, 50)
    types = {r["name"]: r["type"] for r in rows}
    assert types["in_size"] == "static int" and types["use_bias"] == "static bool"
    assert types["layers"] == "tuple" and types["activation"] == "custom_jvp"
    layer_rows, _ = local_rows.child_rows(mlp.layers[0], 50)
    assert {r["name"]: r["type"] for r in layer_rows}["weight"] == "Array"
    assert total == len(rows)


def test_optax_states_by_their_kind():
    optax = pytest.importorskip("optax")
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    state = optax.adam(1e-3).init(params)
    assert summarize("opt_state", state).preview.startswith("optax state · 5 arrays · 16 float32 + 1 int32 · 68 B")
    assert tree_summaries.library_kind(state[0]) == "optax state"
    assert summarize("s", state[0]).type_name == "ScaleByAdamState"


def test_linen_style_dicts_lists_and_registered_dataclasses():
    params = {"params": {"Dense_0": {"kernel": jnp.ones((3, 4)), "bias": jnp.zeros(4)}}}
    assert summarize("params", params).preview == "2 arrays · 16 float32 · 64 B · ‖·‖ 3.464 · max 1"

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Batch:
        x: jax.Array
        y: jax.Array

    batch = Batch(jnp.arange(6.0).reshape(2, 3), jnp.array([1, 2], jnp.int32))
    line = summarize("batch", batch).preview
    assert line.startswith("dataclass · 2 arrays · 6 float32 + 2 int32 · 32 B · ‖·‖ 7.416 · max 5")
    mixed = [jnp.ones(3, jnp.bfloat16), "relu", jax.random.key(0)]
    assert summarize("m", mixed).preview.startswith("2 arrays · 3 bfloat16 + 1 key<fry> · ")
    assert "1 other leaf" in summarize("m", mixed).preview


def test_values_that_are_no_pytree_get_type_and_size_never_a_cut_repr():
    assert summarize("f", jax.nn.relu).preview == "custom_jvp jax._src.nn.functions.relu"
    assert summarize("s", "x" * 500).preview == "str, 500 characters"
    assert summarize("s", "short").preview == "'short'"
    assert summarize("d", {"lr": 0.1}).preview == "{'lr': 0.1}"
    assert summarize("l", list(range(100))).preview == "100 leaves, no arrays"

    class Opaque:
        def __repr__(self):
            return "Opaque(" + "z" * 200 + ")"

    text = summarize("o", Opaque()).preview
    assert text.startswith("Opaque object, ") and text.endswith(" B") and "zzz" not in text


def test_a_huge_tree_row_reads_no_values_until_shown():
    tree = {f"layer{i}": jnp.full((8,), float(i)) for i in range(10_000)}
    lazy = local_rows.local_row("params", tree, lazy=True)
    # its kind and size only: the leaves are not even listed until the row is shown
    assert lazy["pending"] and lazy["summary"] == "dict · 10,000 entries · summary when shown"
    assert not any(leaf_stats._cached(leaf)[0] for leaf in tree.values())  # no value read
    full = local_rows.local_row("params", tree)
    norm = math.sqrt(sum(8.0 * i * i for i in range(10_000)))
    assert not full["pending"] and f"‖·‖ {norm:.4g} · max 9999" in full["summary"]
    assert full["summary"].startswith("10,000 arrays · 80,000 float32 · 312 KB")


def test_small_leaves_read_together_match_one_by_one():
    values = [jnp.array([1.0, -3.0]), jnp.array([jnp.nan, 2.0, jnp.inf]), jnp.array([jnp.nan]), jnp.zeros(0)]
    together = leaf_stats.many_leaf_stats(values)
    alone = [leaf_stats._float_stats(np.asarray(v)) for v in values]
    assert together[:3] == alone[:3]
    assert together[1] == leaf_stats.LeafStats(4.0, 2.0, 1, 1)
    assert together[2].max_abs is None  # no finite value


def test_locals_row_marks_a_tree_holding_a_nan():
    tree = {"a": jnp.ones(3), "b": jnp.array([1.0, jnp.nan])}
    row = local_rows.local_row("grads", tree)
    assert row["nonfinite"] and row["summary"].endswith("NaN in ['b'] (1)")
    assert row["type"] == "dict" and row["array"] == ""


def test_the_terminal_locals_table_draws_a_trees_nan_in_red_and_the_rest_plain():
    import io

    from rich.console import Console

    from jaxdbg.engine.outputs import Output, OutputKind
    from jaxdbg.frontends import cli

    rows = tree_summaries.summarize_locals({"grads": {"a": jnp.ones(3), "b": jnp.array([1.0, jnp.nan])}})
    out = io.StringIO()
    cli.render(
        Console(file=out, force_terminal=True, color_system="standard", width=160), Output(OutputKind.LOCALS, "", rows)
    )
    text = out.getvalue()
    red = "\x1b[1;31m"
    assert red + "NaN in ['b'] (1)" in text, repr(text)
    assert red + "2 arrays" not in text and "2 arrays" in text  # only the alarming piece is red


def test_a_watch_of_a_pytree_keeps_its_line_and_its_norm_for_the_plot():
    from jaxdbg.engine import watches

    kept = watches.value_of(3, {"w": jnp.array([3.0, 4.0]), "b": jnp.array([jnp.nan])})
    assert kept.number == 5.0  # the global norm over finite values: what the plot draws
    assert kept.text == "2 arrays · 3 float32 · 12 B · ‖·‖ 5 · max 4 · NaN in ['b'] (1)"
