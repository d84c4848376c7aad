"""Stops inside a Haiku train step: ``hk.transform``'s params, their gradients and
``hk.transform_with_state``'s state as the locals a Haiku user holds.

Haiku keeps a model's values in plain dicts of module names (``'mlp/~/linear_0'``) to
dicts of arrays (``'w'``, ``'b'``): the rows call them ``hk params / state`` where
Haiku is loaded, and every key path they print (``['mlp/~/linear_1']['w']``) is an
expression of the frame. Real Haiku and optax (the ``test`` extra).
"""

from __future__ import annotations

import re
import sys

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, saved_stops, watches
from jaxdbg.engine.values import local_rows, tree_outline, tree_summaries
from support.transcript import Transcript

hk = pytest.importorskip("haiku", reason="the test extra installs dm-haiku")
optax = pytest.importorskip("optax", reason="the test extra installs optax")


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


def _mlp(x):
    return hk.nets.MLP([16, 2])(x)


def _train_step(t: Transcript, plant_nan: bool = True) -> None:
    """One jitted optax step of a transformed MLP, stopped after the gradients (the
    last layer's weight gradient poisoned with 3 NaN)."""
    net = hk.transform(_mlp)
    x, y = jnp.ones((8, 4)), jnp.zeros((8, 2))
    params = net.init(jax.random.PRNGKey(0), x)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
    opt_state = opt.init(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((net.apply(p, None, x) - y) ** 2))(params)
        if plant_nan:
            grads["mlp/~/linear_1"]["w"] = grads["mlp/~/linear_1"]["w"].at[:3, 0].set(jnp.nan)
        jaxdbg.breakpoint(**t.options)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    train_step(params, opt_state, x, y)


def _row(table: str, name: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(name + " "))


def test_haiku_train_step_rows_whatis_and_a_nan_named_by_a_path_the_frame_evaluates():
    t = Transcript(
        "locals",
        "whatis params",
        "whatis grads['mlp/~/linear_1']",
        "p grads['mlp/~/linear_1']['w'][:4, 0]",
        "c",
    )
    _train_step(t)
    table = t.answers("locals")[0]
    # 4x16 + 16 and 16x2 + 2 weights: 114 float32
    assert re.fullmatch(
        r"params +dict +hk params / state · 4 arrays · 114 float32 · 456 B · ‖·‖ [\d.]+ · max [\d.]+",
        _row(table, "params"),
    )
    grads = _row(table, "grads")
    assert "hk params / state · 4 arrays · 114 float32 · 456 B · ‖·‖ " in grads
    assert grads.endswith("NaN in ['mlp/~/linear_1']['w'] (3)")
    # a chain of optax states (clip_by_global_norm's, adam's): 2 x 114 moments and a count
    assert "tuple        optax state · 9 arrays · 228 float32 + 1 int32 · 916 B" in _row(table, "opt_state")
    assert t.answers("whatis params") == [
        "hk params / state: 2 modules (mlp/~/linear_0, mlp/~/linear_1), 4 arrays (114 float32)"
    ]
    assert t.answers("whatis grads['mlp/~/linear_1']") == ["dict of 2: 'b': float32[2], 'w': float32[16,2]"]
    # the path the row names, as the user types it, reaches the NaN
    assert t.answers("p grads['mlp/~/linear_1']['w'][:4, 0]")[0].startswith("Array([nan, nan, nan, ")


def test_pp_of_haiku_gradients_is_a_tree_of_modules_and_tree_opens_one_module():
    t = Transcript("pp grads", "tree params 1", "tree params['mlp/~/linear_0']", "c")
    _train_step(t)
    tree = t.answers("pp grads")[0].splitlines()
    assert len(tree) == 7  # the root, 2 modules, 4 leaves
    assert tree[0].startswith("grads  dict  hk params / state · 4 arrays · 114 float32 · 456 B")
    assert re.fullmatch(r"├── \['mlp/~/linear_0'\]  dict  2 arrays · 80 float32 · 320 B · ‖·‖ \S+ · max \S+", tree[1])
    assert re.fullmatch(r"└── \['mlp/~/linear_1'\]  dict  2 arrays · 34 float32 · .* · NaN in \['w'\] \(3\)", tree[4])
    assert tree[6].startswith("    └── ['w']  Array  float32[16,2] · ") and "nan=3" in tree[6]
    folded = t.answers("tree params 1")[0].splitlines()
    assert [line.split("  ")[0] for line in folded] == ["params", "├── ['mlp/~/linear_0']", "└── ['mlp/~/linear_1']"]
    assert folded[1].endswith("(… 2 more)")
    layer = t.answers("tree params['mlp/~/linear_0']")[0].splitlines()
    assert layer[0].startswith("params['mlp/~/linear_0']  dict  2 arrays · 80 float32 · 320 B")
    assert layer[1].startswith("├── ['b']  Array  float32[16] · min=0 max=0 mean=0")
    assert layer[2].startswith("└── ['w']  Array  float32[4,16] · ")


def test_transform_with_state_state_holds_counters_and_an_inf_named_by_its_path():
    def forward(x, is_training):
        x = hk.Linear(16)(x)
        return hk.Linear(2)(hk.BatchNorm(True, True, 0.9)(x, is_training))

    net = hk.transform_with_state(forward)
    x = jnp.ones((8, 4))
    params, state = net.init(jax.random.PRNGKey(0), x, True)
    t = Transcript("locals", "whatis state", "whatis params", "p state['batch_norm/~/var_ema']['hidden'][0, 5]", "c")

    @jax.jit
    def step(params, state, x):
        out, state = net.apply(params, state, None, x, True)
        ema = state["batch_norm/~/var_ema"]
        ema["hidden"] = ema["hidden"].at[0, 5].set(jnp.inf)
        jaxdbg.breakpoint(**t.options)
        return out, state

    step(params, state, x)
    table = t.answers("locals")[0]
    # Linear 4x16+16, BatchNorm scale and offset 2x16, Linear 16x2+2
    assert "hk params / state · 6 arrays · 146 float32 · 584 B" in _row(table, "params")
    # two moving averages, each (average, hidden) 2x16 float32 and a counter
    state_row = _row(table, "state")
    assert "hk params / state · 6 arrays · 64 float32 + 2 int32 · 264 B · ‖·‖ " in state_row
    assert state_row.endswith("Inf in ['batch_norm/~/var_ema']['hidden'] (1)")
    assert t.answers("whatis state") == [
        "hk params / state: 2 modules (batch_norm/~/mean_ema, batch_norm/~/var_ema), 6 arrays (64 float32 + 2 int32)"
    ]
    assert t.answers("whatis params") == [
        "hk params / state: 3 modules (batch_norm, linear, linear_1), 6 arrays (146 float32)"
    ]
    assert t.answers("p state['batch_norm/~/var_ema']['hidden'][0, 5]") == ["Array(inf, dtype=float32)"]


def test_tab_completes_haiku_module_names_and_their_parameter_names():
    from jaxdbg.engine.frames import live_frame

    net = hk.transform(_mlp)
    params = net.init(jax.random.PRNGKey(0), jnp.ones((1, 4)))  # noqa: F841 (completed from the frame)
    session = jaxdbg.Session([live_frame(sys._getframe())])
    both = ["p params['mlp/~/linear_0']", "p params['mlp/~/linear_1']"]
    assert session.complete("p params['m") == both
    assert session.complete("p params['mlp/~/l") == both  # '/' and '~' inside the key
    assert session.complete("p params['mlp/~/linear_1'][") == [
        "p params['mlp/~/linear_1']['b']",
        "p params['mlp/~/linear_1']['w']",
    ]
    assert session.complete("p params['mlp/~/linear_1']['w") == ["p params['mlp/~/linear_1']['w']"]


def test_the_panels_rows_of_haiku_gradients_open_module_by_module_with_their_nan_marked():
    net = hk.transform(_mlp)
    params = net.init(jax.random.PRNGKey(0), jnp.ones((1, 4)))
    grads = jax.tree.map(jnp.zeros_like, params)
    grads["mlp/~/linear_1"]["w"] = grads["mlp/~/linear_1"]["w"].at[2, 1].set(jnp.nan)
    row = local_rows.local_row("grads", grads, lazy=True)
    assert row["nonfinite"] and row["expandable"] and row["type"] == "dict"
    assert row["summary"].startswith("hk params / state · 4 arrays") and row["summary"].endswith("(1)")
    modules, total = local_rows.child_rows(grads, 50)
    assert total == 2 and [(r["name"], r["nonfinite"]) for r in modules] == [
        ("'mlp/~/linear_0'", False),
        ("'mlp/~/linear_1'", True),  # the mark leads down to the leaf
    ]
    leaves, _ = local_rows.child_rows(grads["mlp/~/linear_1"], 50)
    assert [(r["name"], r["nonfinite"], r["array"]) for r in leaves] == [
        ("'b'", False, "float32[2]"),
        ("'w'", True, "float32[16,2]"),
    ]


def test_haiku_kind_needs_haiku_loaded_and_exactly_its_two_levels(monkeypatch):
    params = {"linear": {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}}
    assert tree_summaries.library_kind(params) == "hk params / state"
    linen = {"params": params}  # Flax Linen's variables: one level deeper
    assert tree_summaries.library_kind(linen) == ""
    assert tree_summaries.library_kind({"linear": jnp.ones(3)}) == ""  # one level
    assert tree_summaries.library_kind({"linear": {"w": jnp.ones(3), "act": "relu"}}) == ""  # not all arrays
    assert tree_summaries.library_kind({"linear": {}}) == ""
    assert tree_outline.structure(linen) == "dict: 1 entry, 2 arrays (9 float32)"
    monkeypatch.delitem(sys.modules, "haiku")  # the same dict in a program without Haiku
    assert tree_summaries.library_kind(params) == ""
    assert tree_summaries.summarize("params", params).preview.startswith("2 arrays · 9 float32 · 36 B")


def test_a_saved_haiku_stop_reopens_with_its_kinds_nan_paths_and_completion(tmp_path):
    path = tmp_path / "haiku.npz"
    before = Transcript("locals", f"save {path}", "c")
    _train_step(before)
    saved = saved_stops.load(str(path))
    grads = saved.frames[0].locals["grads"]
    assert type(grads) is dict and bool(jnp.isnan(grads["mlp/~/linear_1"]["w"][0, 0]))

    t = Transcript("locals", "whatis params", "p grads['mlp/~/linear_1']['w'][2, 0]", "pp grads", "c")
    jaxdbg.open_stop(str(path), **t.options)
    table, live = t.answers("locals")[0], before.answers("locals")[0]
    for name in ("params", "grads", "opt_state"):  # the rows of the stop, optax's kind included
        assert _row(table, name).split(maxsplit=1)[1] == _row(live, name).split(maxsplit=1)[1], name
    assert "optax state · " in _row(table, "opt_state")
    assert _row(table, "grads").endswith("NaN in ['mlp/~/linear_1']['w'] (3)")
    assert t.answers("whatis params") == [
        "hk params / state: 2 modules (mlp/~/linear_0, mlp/~/linear_1), 4 arrays (114 float32)"
    ]
    assert t.answers("p grads['mlp/~/linear_1']['w'][2, 0]") == ["Array(nan, dtype=float32)"]
    assert t.answers("pp grads")[0].splitlines()[0].startswith("grads  dict  hk params / state · 4 arrays")
    session = saved.session()
    assert session.complete("p grads['mlp/~/linear_1'][") == [
        "p grads['mlp/~/linear_1']['b']",
        "p grads['mlp/~/linear_1']['w']",
    ]
