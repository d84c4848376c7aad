"""Stops inside the train steps JAX users write (Flax NNX, Equinox, optax), at the terminal.

The locals rows of the model, its gradients and the optimizer state, ``whatis``, ``pp``
as a tree of leaf summaries (``--full``: every element), ``tree EXPR [depth]``, and a
NaN planted in one gradient leaf named by its path.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from support.transcript import Transcript

nnx = pytest.importorskip("flax.nnx", reason="the test extra installs flax")
optax = pytest.importorskip("optax", reason="the test extra installs optax")


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 16, rngs=rngs)
        self.bn = nnx.BatchNorm(16, rngs=rngs)
        self.l2 = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.bn(self.l1(x))))


def _nnx_step(t: Transcript, plant_nan: bool):
    model = MLP(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, opt, x, y):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        if plant_nan:
            grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...].at[:3, 0].set(jnp.nan)
        jaxdbg.breakpoint(**t.options)
        opt.update(model, grads)
        return loss

    train_step(model, opt, jnp.ones((8, 4)), jnp.zeros((8, 2)))


def _row(table: str, name: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(name + " "))


def test_nnx_train_step_rows_whatis_and_a_nan_named_by_its_path():
    t = Transcript("locals", "whatis model", "whatis grads", "whatis opt", "whatis model.l1.kernel", "c")
    _nnx_step(t, plant_nan=True)
    table = t.answers("locals")[0]
    assert re.fullmatch(
        r"model +MLP +nnx\.Module · 8 arrays · 178 float32 · 712 B · ‖·‖ [\d.]+ · max [\d.]+", _row(table, "model")
    )
    grads = _row(table, "grads")
    assert "nnx.State · 6 arrays · 146 float32 · 584 B · ‖·‖ " in grads
    assert grads.endswith("NaN in ['l2']['kernel'] (3)")
    assert "nnx.Optimizer · 14 arrays · 292 float32 + 1 int32 + 1 uint32 · 1.15 KB" in _row(table, "opt")
    assert "..." not in table
    assert t.answers("whatis model") == [
        "nnx.Module MLP: 3 submodules, 6 Param (146 float32), 2 BatchStat (32 float32)"
    ]
    assert t.answers("whatis grads") == ["nnx.State: 6 Param (146 float32)"]
    assert t.answers("whatis opt")[0].startswith("nnx.Optimizer: 1 OptArray (1 int32), 12 OptVariable (292 float32)")
    assert t.answers("whatis model.l1.kernel") == ["nnx.Param float32[4,16]"]


def test_pp_of_gradients_is_a_tree_of_leaf_summaries_and_full_prints_every_element():
    t = Transcript("pp grads", "pp grads --full", "tree model 1", "tree model.l1", "tree model 0", "tree x", "c")
    _nnx_step(t, plant_nan=True)
    tree = t.answers("pp grads")[0].splitlines()
    assert len(tree) == 10  # the root, 3 layers, 6 leaves: not 60 lines of elements
    assert tree[0].startswith("grads  State  nnx.State · 6 arrays")
    assert re.fullmatch(r"└── \['l2'\]  dict  2 arrays · .* · NaN in \['kernel'\] \(3\)", tree[7])
    assert re.fullmatch(r"    └── \['kernel'\]  Param  nnx\.Param · float32\[16,2\] · 128 B · .* · NaN \(3\)", tree[9])
    full = t.answers("pp grads --full")[0]
    assert "State({" in full and full.count("\n") > 30 and "nan" in full
    folded = t.answers("tree model 1")[0].splitlines()
    assert [line.split("  ")[0] for line in folded] == ["model", "├── .bn", "├── .l1", "└── .l2"]
    assert folded[2].endswith("(… 2 more)")
    layer = t.answers("tree model.l1")[0].splitlines()
    assert layer[0].startswith("model.l1  Linear  nnx.Module · 2 arrays · 80 float32 · 320 B")
    assert layer[1].startswith("├── .bias  Param  nnx.Param · float32[16] · 64 B · ‖·‖ 0 · max 0")
    assert layer[2].startswith("└── .kernel  Param  nnx.Param · float32[4,16] · 256 B")
    assert len(layer) == 3  # in_features, use_bias, ... are no pytree children
    assert t.answers("tree model 0") == ["*** tree's depth is a positive number of levels, not 0"]
    assert t.answers("tree x")[0].startswith("*** x is not a pytree (")
    assert len(t.stops()) == 1  # bad input never ended the stop


def test_equinox_step_shows_its_module_with_static_fields_as_such():
    eqx = pytest.importorskip("equinox", reason="the test extra installs equinox")
    t = Transcript("locals", "whatis model", "tree model", "c")
    model = eqx.nn.MLP(2, 2, 4, 1, key=jax.random.key(0))

    @eqx.filter_jit
    def step(model, x):
        grads = eqx.filter_grad(lambda m: jnp.sum(m(x) ** 2))(model)
        jaxdbg.breakpoint(**t.options)
        return grads

    step(model, jnp.ones(2))
    table = t.answers("locals")[0]
    assert re.search(r"^model +MLP +eqx\.Module · 4 arrays · 22 float32 · 88 B · 2 other leaves · ‖·‖ ", table, re.M)
    # filter_grad leaves None where the functions were: no other leaves
    assert re.search(r"^grads +MLP +eqx\.Module · 4 arrays · 22 float32 · 88 B · ‖·‖ [\d.]+ · max [\d.]+$", table, re.M)
    whatis = t.answers("whatis model")[0]
    assert whatis.startswith("eqx.Module MLP: 2 submodules, 4 arrays (22 float32), 2 functions, ")
    assert "static fields (use_bias, use_final_bias, in_size, out_size, width_size, depth, ...)" in whatis
    tree = t.answers("tree model")[0]
    assert "├── .in_size  static  2" in tree and "├── .layers  tuple  2 arrays" not in tree
    assert re.search(r"├── \.layers  tuple  4 arrays · 22 float32", tree)
    assert re.search(r"│   ├── \[0\]  Linear  eqx\.Module · 2 arrays · 12 float32", tree)
    assert re.search(
        r"│   │   ├── \.weight  Array  float32\[4,2\] · min=\S+ max=\S+ mean=\S+ · \[\[-0\.3\d+, +0\.4\d+\], \[", tree
    )
    assert "├── .activation  custom_jvp  custom_jvp jax._src.nn.functions.relu" in tree


def test_tab_completes_the_keys_of_gradients_held_in_an_nnx_state():
    import sys

    from jaxdbg.engine.frames import live_frame

    model = MLP(nnx.Rngs(0))
    grads = nnx.state(model, nnx.Param)  # noqa: F841 (completed from the frame)
    session = jaxdbg.Session([live_frame(sys._getframe())])
    assert session.complete("p grads['l") == ["p grads['l1']", "p grads['l2']"]
    assert session.complete("p grads['l2'][") == ["p grads['l2']['bias']", "p grads['l2']['kernel']"]
    assert session.complete("p model.l") == ["p model.l1", "p model.l2"]
