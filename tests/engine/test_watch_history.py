"""A watch's values at the prompt (``watch N``), as numpy arrays (``jaxdbg.watch_history``),
and a pytree watch's leaf norms over the hits of a real Flax NNX train step
(``watch N leaves``, ``watch diff N HIT1 HIT2``), driven by scripted terminal commands."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, watches
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())  # each test's own watches
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


def _number(t: Transcript) -> int:
    return int(re.search(r"breakpoint (\d+), hit", t.stops()[0]).group(1))


def _scan(t: Transcript, steps: int):
    def body(carry, i):
        loss = carry * 0.5 + i
        grads = jnp.array([i, -i, 2 * i])  # noqa: F841 (a local to watch)
        jaxdbg.breakpoint(**t.options)
        return loss, loss

    return jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(float(steps)))[0])


def _rows(answer: str) -> list[list[str]]:
    """The table's rows under its header line (``hit ...``), split into cells."""
    lines = answer.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["hit"])
    return [line.split() for line in lines[start + 1 :] if line.strip() and not line.strip().startswith("(")]


def test_watch_n_lists_each_hit_and_its_value_and_watch_history_returns_them_as_arrays():
    t = Transcript("watch loss", "watch grads", "ignore 3", "c", "watch 1", "watch 2", "watch 3", "c")
    _scan(t, 5)()
    first = int(re.search(r"hit (\d+)", t.stops()[0]).group(1))
    losses = ["0.5", "1.25", "2.625", "4.3125", "6.15625"]
    assert _rows(t.answers("watch 1")[0]) == [[str(first + i), v] for i, v in enumerate(losses)]
    assert "first 0.5 · last 6.15625 · range 0.5 … 6.15625" in t.answers("watch 1")[0]
    # an array: its statistics per hit (min, max, mean, NaN, Inf)
    assert _rows(t.answers("watch 2")[0])[-1] == [str(first + 4), "-4", "8", "2.66667", "0", "0"]
    assert t.answers("watch 3")[0] == "*** no watch 3 at breakpoint 1 (watched: 1: loss, 2: grads)".replace(
        "breakpoint 1", f"breakpoint {_number(t)}"
    )

    history = jaxdbg.watch_history()
    assert list(history) == ["loss", "grads"]
    loss, grads = history["loss"], history["grads"]
    assert isinstance(loss, np.ndarray) and loss.dtype.names == ("hit", "value")
    assert loss["hit"].tolist() == list(range(first, first + 5))
    assert loss["value"].tolist() == [float(v) for v in losses]
    assert grads["max"].tolist() == [0.0, 2.0, 4.0, 6.0, 8.0] and grads["nan"].tolist() == [0] * 5
    assert jaxdbg.watch_history(breakpoint=_number(t))["loss"]["value"][-1] == 6.15625
    assert jaxdbg.watch_history(breakpoint=_number(t) + 100) == {}


def test_watch_n_shows_the_latest_fifty_and_all_shows_every_one():
    t = Transcript("watch loss", "ignore 58", "c", "watch 1", "watch 1 all", "c")
    _scan(t, 60)()
    latest, every = t.answers("watch 1")[0], t.answers("watch 1 all")[0]
    assert "60 values; the latest 50 (watch 1 all: every one)" in latest
    assert len(_rows(latest)) == 50 and len(_rows(every)) == 60
    assert _rows(every)[-10:] == _rows(latest)[-10:]


def test_an_expression_that_is_a_number_is_not_watched_and_diff_needs_its_hits():
    t = Transcript("watch diff 1 2", "watch 1 leaves", "watch loss", "watch 1 leaves", "watch 1 2", "c")
    _scan(t, 1)()
    assert t.answers("watch diff 1 2")[0] == "*** usage: watch diff N HIT1 HIT2 (N: the watch's number in 'watch')"
    assert t.answers("watch 1 leaves")[0].startswith("*** no watch 1 at breakpoint")
    assert t.answers("watch 1 leaves")[1] == "*** 'loss' has no per-leaf values (only a pytree watch keeps them)"
    assert t.answers("watch 1 2")[0] == "*** usage: watch N [all | leaves [HIT]] (N: the watch's number in 'watch')"


def _nnx_step(t: Transcript, poisoned_step: int, site: int = 0):
    """A Flax NNX MLP trained with optax: its gradients' last kernel gets NaNs at
    ``poisoned_step`` (0-based), and the breakpoint stops after the gradients. Hits
    count per line for the whole process, so each test takes its own ``site``."""
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(3, 4, rngs=rngs)
            self.l2 = nnx.Linear(4, 1, rngs=rngs)

        def __call__(self, x):
            return self.l2(jnp.tanh(self.l1(x)))

    model = MLP(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    x, y = jnp.ones((8, 3)), jnp.zeros((8, 1))

    @nnx.jit
    def step(model, opt, poison):
        loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...] * poison
        if site == 0:
            jaxdbg.breakpoint(**t.options)
        else:
            jaxdbg.breakpoint(**t.options)
        opt.update(model, grads)
        return loss

    def train(steps: int) -> None:
        for i in range(steps):
            step(model, opt, jnp.float32(np.nan if i == poisoned_step else 1.0))

    return train


def test_a_pytree_watch_keeps_each_leafs_norm_and_nans_per_hit_over_20_steps():
    t = Transcript(
        "watch grads",
        "ignore 18",
        "c",
        "watch 1",
        "watch 1 leaves 5",
        "watch 1 leaves",
        "watch diff 1 5 6",
        "watch diff 1 12 13",
        "watch diff 1 3 99",
        "c",
    )
    _nnx_step(t, poisoned_step=12)(20)
    table = _rows(t.answers("watch 1")[0])
    assert [row[0] for row in table] == [str(h) for h in range(1, 21)]
    # hits 1-12 are finite; hit 13 holds the poisoned kernel's 4 NaNs, named by path
    assert [row[2] for row in table[:12]] == ["0"] * 12
    assert table[12][2:] == ["4", "0", "NaN", "in", "['l2']['kernel']"]
    assert table[13][2] == "21"  # the NaN spread to every parameter, so to every gradient

    history = jaxdbg.watch_history()["grads"]
    paths = ["['l1']['bias']", "['l1']['kernel']", "['l2']['bias']", "['l2']['kernel']"]
    assert list(history.dtype.names) == ["hit", "value", "nan", "inf", *paths]
    assert history["hit"].tolist() == list(range(1, 21))
    # the global norm is the leaves' norms together
    norms = np.stack([history[p] for p in paths], axis=1)
    assert np.allclose(np.sqrt((norms[:12] ** 2).sum(axis=1)), history["value"][:12])
    assert history["nan"][12] == 4 and history["nan"][:12].sum() == 0

    at5 = t.answers("watch 1 leaves 5")[0]
    assert at5.startswith(f"Watch 1 at breakpoint {_number(t)}: grads at hit 5, 4 float leaves")
    leaf_rows = {line.split()[0]: line.split() for line in at5.splitlines()[2:]}
    assert list(leaf_rows) == paths
    assert float(leaf_rows["['l2']['kernel']"][1]) == pytest.approx(history["['l2']['kernel']"][4], rel=1e-5)
    assert "at hit 20" in t.answers("watch 1 leaves")[0]

    # from 5 to 6 every leaf shrinks (the loss falls); the largest change comes first
    changed = t.answers("watch diff 1 5 6")[0].splitlines()
    assert "4 of 4 leaves changed" in changed[0]
    firsts = [line.split()[0] for line in changed[2:]]
    drops = {p: history[p][4] - history[p][5] for p in paths}
    assert firsts == sorted(paths, key=lambda p: -abs(drops[p]))
    # from 12 to 13 the NaN leaf comes first, its counts said
    nan_diff = t.answers("watch diff 1 12 13")[0].splitlines()
    assert nan_diff[2].split()[0] == "['l2']['kernel']" and "NaN 0 → 4, Inf 0 → 0" in nan_diff[2]
    assert t.answers("watch diff 1 3 99")[0] == "*** no per-leaf values of 'grads' at hit 99 (kept: hits 1 to 20)"


def test_a_big_trees_leaf_norms_are_kept_for_its_latest_hits_only(monkeypatch):
    monkeypatch.setattr(watches, "LEAF_VALUES", 8)  # a 4-leaf tree: the last 2 hits
    t = Transcript("watch grads", "ignore 3", "c", "watch diff 1 1 5", "watch diff 1 4 5", "c")
    _nnx_step(t, poisoned_step=-1, site=1)(5)
    assert t.answers("watch diff 1 1 5")[0] == "*** no per-leaf values of 'grads' at hit 1 (kept: hits 4 to 5)"
    assert "4 of 4 leaves changed" in t.answers("watch diff 1 4 5")[0]
    history = jaxdbg.watch_history()["grads"]
    assert np.isnan(history["['l1']['bias']"][:3]).all() and not np.isnan(history["['l1']['bias']"][3:]).any()
    assert not np.isnan(history["value"]).any()  # every hit keeps its global norm


def test_an_equinox_models_gradients_are_watched_leaf_by_leaf_by_attribute_path():
    eqx = pytest.importorskip("equinox")
    optax = pytest.importorskip("optax")
    model = eqx.nn.MLP(3, 1, width_size=4, depth=1, key=jax.random.PRNGKey(0))
    opt = optax.adam(0.05)
    state = opt.init(eqx.filter(model, eqx.is_array))
    x, y = jnp.ones((8, 3)), jnp.zeros((8, 1))
    t = Transcript("watch grads", "ignore 3", "c", "watch 1 leaves", "watch diff 1 1 5", "c")

    @eqx.filter_jit
    def step(model, state):
        grads = eqx.filter_grad(lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(model)
        jaxdbg.breakpoint(**t.options)
        updates, state = opt.update(grads, state)
        return eqx.apply_updates(model, updates), state

    for _ in range(5):
        model, state = step(model, state)
    paths = [".layers[0].weight", ".layers[0].bias", ".layers[1].weight", ".layers[1].bias"]
    leaves = t.answers("watch 1 leaves")[0].splitlines()
    assert [line.split()[0] for line in leaves[2:]] == paths, leaves  # no static field, no activation
    history = jaxdbg.watch_history()["grads"]
    assert list(history.dtype.names)[4:] == paths and len(history) == 5
    assert "4 of 4 leaves changed" in t.answers("watch diff 1 1 5")[0]
