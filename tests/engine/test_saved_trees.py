"""Saved stops keep the trees a JAX user holds: a Flax NNX model, its gradients and the
optimizer state, an Equinox model, saved as arrays with their key paths (no pickle) and
reopened as JAX arrays in the same shape of tree, where the classes need not exist."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, saved_stops, watches
from jaxdbg.engine.values import saved_values
from support.transcript import Transcript

nnx = pytest.importorskip("flax.nnx", reason="the test extra installs flax")
optax = pytest.importorskip("optax", reason="the test extra installs optax")


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 16, rngs=rngs)
        self.l2 = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.l1(x)))


def _nnx_stop_saved(path) -> Transcript:
    model = MLP(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    t = Transcript("locals", f"save {path}", "c")
    on_device_3 = jax.device_put(jnp.arange(3.0), jax.devices()[min(3, jax.device_count() - 1)])

    @nnx.jit
    def train_step(model, opt, x):
        grads = nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model)
        grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...].at[:3, 0].set(jnp.nan)
        placed = on_device_3  # noqa: F841 (an untraced array local, on another device)
        jaxdbg.breakpoint(**t.options)
        opt.update(model, grads)

    train_step(model, opt, jnp.ones((8, 4)))
    return t


def test_a_saved_module_gradients_and_optimizer_reopen_as_trees_of_jax_arrays(tmp_path):
    path = tmp_path / "step.npz"
    before = _nnx_stop_saved(path).answers("locals")[0]
    with zipfile.ZipFile(path) as z:  # arrays as raw bytes and the metadata: no pickle anywhere
        assert all(name.endswith(".npy") for name in z.namelist())
    saved = saved_stops.load(str(path))
    values = saved.frames[0].locals
    model, grads, opt = values["model"], values["grads"], values["opt"]
    assert type(model).__name__ == "MLP" and isinstance(model, saved_values.SavedTree)
    assert isinstance(model.l1.kernel, jax.Array) and model.l1.kernel.shape == (4, 16)
    assert bool(jnp.isnan(grads["l2"]["kernel"][0, 0]))
    # the same key paths as at the stop, so the same rows and statistics
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(model)[0]]
    assert paths == [".l1.bias", ".l1.kernel", ".l2.bias", ".l2.kernel"]
    assert "Optimizer" == type(opt).__name__ and opt.opt_state[0].mu["l1"]["kernel"].shape == (4, 16)

    session = saved.session()  # a reopened tree completes as it did at the stop
    assert session.complete("p grads['l") == ["p grads['l1']", "p grads['l2']"]
    assert session.complete("p model.l2.k") == ["p model.l2.kernel"]

    t = Transcript(
        "locals",
        "whatis model",
        "p model.l1.kernel.sharding",
        "p grads['l2']['kernel'][0, 0]",
        "pp grads",
        "p model.nothing",
        "c",
    )
    jaxdbg.open_stop(str(path), **t.options)
    table = t.answers("locals")[0]

    def row(text, name):
        return next(line for line in text.splitlines() if line.startswith(name + " "))

    for name in ("model", "grads", "opt"):  # the one-line summaries are those of the stop
        assert row(table, name).split(maxsplit=1)[1] == row(before, name).split(maxsplit=1)[1], name
    assert row(table, "grads").endswith("NaN in ['l2']['kernel'] (3)")
    device = min(3, jax.device_count() - 1)
    assert f"[cpu:{device}]" in row(table, "placed")  # where it was, not where it is now
    assert t.answers("whatis model") == ["nnx.Module MLP: 2 submodules, 4 arrays (114 float32)"]
    assert t.answers("p model.l1.kernel.sharding")[0].startswith("SingleDeviceSharding(")
    assert t.answers("p grads['l2']['kernel'][0, 0]") == ["Array(nan, dtype=float32)"]
    tree = t.answers("pp grads")[0].splitlines()
    assert tree[0].startswith("grads  State  nnx.State · 4 arrays · 114 float32")
    assert any(line.startswith("└── ['l2']  dict  2 arrays · 34 float32 · 136 B") for line in tree)
    assert tree[-1].startswith("    └── ['kernel']  Array  float32[16,2] ") and "nan=3" in tree[-1]
    assert t.answers("p model.nothing")[0].startswith(
        "*** AttributeError: MLP (reopened from a saved stop) has no field 'nothing'"
    )


def test_an_equinox_model_reopens_with_its_layers_and_static_fields(tmp_path):
    eqx = pytest.importorskip("equinox", reason="the test extra installs equinox")
    path = tmp_path / "eqx.npz"
    t = Transcript(f"save {path}", "c")
    model = eqx.nn.MLP(2, 2, 4, 1, key=jax.random.key(0))

    @eqx.filter_jit
    def step(model, x):
        jaxdbg.breakpoint(**t.options)
        return model(x)

    step(model, jnp.ones(2))
    reopened = saved_stops.load(str(path)).frames[0].locals["model"]
    assert type(reopened).__name__ == "MLP"
    assert isinstance(reopened.layers[0].weight, jax.Array)
    assert reopened.layers[0].weight.tolist() == model.layers[0].weight.tolist()
    assert reopened.in_size == 2 and reopened.width_size == 4  # static fields, as such
    assert "static" not in str(jax.tree_util.tree_structure(reopened))  # not leaves
    assert len(jax.tree_util.tree_leaves(reopened)) == 4 + 2  # 4 arrays, 2 functions' reprs


def test_a_reopened_model_needs_no_flax_in_the_process_that_opens_it(tmp_path):
    path = tmp_path / "step.npz"
    _nnx_stop_saved(path)
    script = (
        "import sys, jaxdbg; jaxdbg.open_stop(%r, backend='cli'); print('flax loaded:', 'flax' in sys.modules)"
        % str(path)
    )
    import os

    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(jaxdbg.__file__)), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        input="p model.l2.kernel.shape\nwhatis grads\nc\n",
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "(16, 2)" in done.stdout and "nnx.State: 4 arrays (114 float32)" in done.stdout
    assert "flax loaded: False" in done.stdout


def _watched_training_saved(path, steps: int = 6, poisoned_step: int = 3) -> Transcript:
    """A Flax NNX MLP trained with optax for ``steps`` steps, its gradients watched at
    every hit (the last kernel's gradient poisoned with NaN at ``poisoned_step``), the
    last stop saved to ``path``."""
    model = MLP(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    x = jnp.ones((8, 4))
    t = Transcript("watch grads", f"ignore {steps - 2}", "c", "watch 1", "watch 1 leaves", f"save {path}", "c")

    @nnx.jit
    def step(model, opt, poison):
        grads = nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model)
        grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...] * poison
        jaxdbg.breakpoint(**t.options)
        opt.update(model, grads)

    for i in range(steps):
        step(model, opt, jnp.float32(jnp.nan if i == poisoned_step else 1.0))
    return t


def test_a_saved_stop_keeps_a_pytree_watchs_leaf_norms_for_leaves_diff_and_watch_history(tmp_path):
    path = tmp_path / "watched.npz"
    t = _watched_training_saved(path)
    live = jaxdbg.watch_history()["grads"]
    first = int(live["hit"][0])
    (saved,) = saved_stops.load(str(path)).watches
    assert all(v.leaves is not None for v in saved.values)
    assert saved.values[3].leaves.at("['l2']['kernel']")[1] == 32  # the poisoned hit's NaNs, by leaf

    # watch_history of the file: the same per-leaf fields and numbers as where it was saved
    reopened = jaxdbg.watch_history(stop=str(path))["grads"]
    assert reopened.dtype == live.dtype and "['l2']['kernel']" in reopened.dtype.names
    for name in live.dtype.names:
        assert np.array_equal(reopened[name], live[name], equal_nan=True), name

    hit = first + 3
    t2 = Transcript("watch 1 leaves", f"watch 1 leaves {hit}", f"watch diff 1 {hit - 1} {hit}", "c")
    jaxdbg.open_stop(str(path), **t2.options)
    assert t2.answers("watch 1 leaves") == t.answers("watch 1 leaves")  # the same table, every leaf
    at_nan = t2.answers(f"watch 1 leaves {hit}")[0]
    assert f"grads at hit {hit}, 4 float leaves" in at_nan
    kernel = next(line.split() for line in at_nan.splitlines() if line.split()[0] == "['l2']['kernel']")
    assert kernel[2:4] == ["32", "0"]
    diff = t2.answers(f"watch diff 1 {hit - 1} {hit}")[0].splitlines()
    assert diff[2].split()[0] == "['l2']['kernel']" and "NaN 0 → 32, Inf 0 → 0" in diff[2]


def test_a_saved_stop_without_leaf_norms_still_opens_and_says_so(tmp_path):
    """A file written before leaf norms were kept (no ``leaves`` in its watches) opens,
    and ``watch N leaves`` says there are none."""
    path = tmp_path / "watched.npz"
    _watched_training_saved(path, steps=3, poisoned_step=-1)
    older = tmp_path / "older.npz"
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["metadata"].tobytes())
    for w in meta["watches"]:
        w.pop("leaves")
    arrays["metadata"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(older, **arrays)
    history = jaxdbg.watch_history(stop=str(older))["grads"]
    assert history.dtype.names == ("hit", "value") and not np.isnan(history["value"]).any()
    t = Transcript("watch 1 leaves", "c")
    jaxdbg.open_stop(str(older), **t.options)
    assert t.answers("watch 1 leaves") == ["*** 'grads' has no per-leaf values (only a pytree watch keeps them)"]


def test_leaves_inside_a_reopened_tree_keep_where_they_were_as_top_level_arrays_do(tmp_path):
    """A Module's kernel on cpu:3 and a params dict's leaf sharded over 8 devices keep
    their sharding text in the reopened stop: in the tree's rows and in ``whatis``."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    assert jax.device_count() == 8  # tests/conftest.py: XLA_FLAGS gives 8 CPU devices
    path = tmp_path / "placed.npz"
    with jax.default_device(jax.devices()[3]):
        model = MLP(nnx.Rngs(0))  # noqa: F841 (the stop's locals)
    mesh = Mesh(np.array(jax.devices()), ("x",))
    sharded = jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, PartitionSpec("x")))
    params = {"w": sharded, "b": jnp.zeros(2)}  # noqa: F841
    top = sharded  # noqa: F841 (a top-level array: its sharding column was kept already)
    asked = ("whatis model.l1.kernel", "whatis params['w']", "whatis top")
    t = Transcript(*asked, f"save {path}", "c")
    jaxdbg.breakpoint(**t.options)
    live = {line: t.answers(line)[0] for line in asked}
    assert live["whatis model.l1.kernel"] == "nnx.Param float32[4,16]"
    assert live["whatis params['w']"] == "Array float32[8,2] sharding=P('x',) on mesh x=8"

    session = saved_stops.load(str(path)).session()
    rows, _ = session.row_children(["params"], 10)
    assert {r["name"]: r["sharding"] for r in rows} == {"'w'": "P('x',) on mesh x=8", "'b'": "cpu:0"}
    for layer in (0, 1):  # .l1 and .l2: each one's bias and kernel
        assert [(r["name"], r["sharding"]) for r in session.row_children(["model", layer], 10)[0]] == [
            ("bias", "cpu:3"),
            ("kernel", "cpu:3"),
        ]

    t2 = Transcript(*asked, "c")
    jaxdbg.open_stop(str(path), **t2.options)
    assert t2.answers("whatis params['w']") == [live["whatis params['w']"]]  # as the stop said it
    assert t2.answers("whatis top") == [live["whatis top"]]
    # the Param reopens as its array, with where it was
    assert t2.answers("whatis model.l1.kernel") == ["Array float32[4,16] sharding=cpu:3"]


def test_leaf_norms_that_do_not_match_their_values_are_refused(tmp_path):
    path = tmp_path / "watched.npz"
    _watched_training_saved(path, steps=3, poisoned_step=-1)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["metadata"].tobytes())
    (watch,) = meta["watches"]
    watch["leaves"]["hits"].append([0, 0])  # one hit more than the numbers hold
    arrays["metadata"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **arrays)
    with pytest.raises(saved_values.SavedStopError, match="leaf norms do not match its values"):
        saved_stops.load(str(bad))
