"""A watch of a whole pytree local (``watch grads``) keeps each float leaf's norm and NaN /
Inf counts, a watch of an array its min / max / mean and NaN / Inf counts: at a passed
stop the program sends those statistics, computed where the values are, and not the
values. The watch's history is the same either way."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_checks, breakpoint_state, watches
from jaxdbg.engine.values import sent_stats
from support.checks_state import fresh_breakpoint_checks  # noqa: F401 (autouse)
from support.host_bytes import HostBytes
from support.jax_setups import automatic_axes
from support.transcript import Transcript

STEPS = 20
SIDE = 512  # grads["w"]: 512x512 float32, 1 MB
POISONED = 3  # the step whose w holds a NaN and a -Inf, and b an Inf
# What a passed step may send: the scalars c and x with the question, then the screening
# state with the statistics (2 leaves: 2 float32 and 2 int32 each); a device's index.
PER_STEP = 8 + 4 + 2 * 16 + 4


def _make_step(**options):
    """A scan step with ``grads``, a 2-leaf tree of 1 MB, and a breakpoint; a new function
    each time, so each program traces it anew (JAX keeps a traced scan body per function)."""

    def step(c, x):
        w = jnp.full((SIDE, SIDE), x) + c
        w = w.at[0, 0].set(jnp.where(x == POISONED, jnp.nan, w[0, 0]))
        w = w.at[0, 1].set(jnp.where(x == POISONED, -jnp.inf, w[0, 1]))
        half = w.astype(jnp.bfloat16)  # noqa: F841 (512 KB, watched)
        b = jnp.arange(float(SIDE)) * x
        b = b.at[1].set(jnp.where(x == POISONED, jnp.inf, b[1]))
        grads = {"w": w, "b": b}
        jaxdbg.breakpoint(**options)
        return c + grads["w"][1, 1] * 0.0, None

    return step


def _expected(x: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per leaf, in key order (b, w): the norm over the finite values, NaNs, Infs."""
    w = np.full((SIDE, SIDE), x, np.float32)
    b = np.arange(float(SIDE), dtype=np.float32) * np.float32(x)
    if x == POISONED:
        w[0, 0], w[0, 1], b[1] = np.nan, -np.inf, np.inf
    leaves = [b, w]
    norms = [np.sqrt(np.sum(np.square(v[np.isfinite(v)], dtype=np.float64))) for v in leaves]
    return np.array(norms), np.array([np.isnan(v).sum() for v in leaves]), np.array([np.isinf(v).sum() for v in leaves])


def _program(transform: str, **options):
    """A STEPS-step scan of the step under ``transform``, traced and compiled now: (run,
    devices)."""
    step = _make_step(**options)

    def loop(offset):
        return jax.lax.scan(step, offset * 0.0, jnp.arange(float(STEPS)) + offset)[0]

    if transform in ("jit", "grad"):
        function, args, devices = (loop if transform == "jit" else jax.grad(loop)), (0.0,), 1
    else:
        assert transform == "shard_map"
        mesh = jax.make_mesh((jax.device_count(),), ("d",), **automatic_axes(1))
        spec = jax.sharding.PartitionSpec("d")
        offsets = jax.device_put(jnp.zeros(jax.device_count()), jax.sharding.NamedSharding(mesh, spec))
        function = jax.shard_map(lambda o: loop(o[0])[None], mesh=mesh, in_specs=spec, out_specs=spec)
        args, devices = (offsets,), jax.device_count()
    compiled = jax.jit(function).lower(*args).compile()
    return (lambda: compiled(*args)), devices


def _number() -> int:
    line = _make_step.__code__.co_firstlineno + 12
    return next(r.number for r in breakpoint_state.rows() if (r.filename, r.lineno) == (__file__, line))


PASSED_BY = {
    "continue all": lambda n: breakpoint_state.continue_all(n),
    "disable": lambda n: breakpoint_state.set_enabled(n, False),
    "ignore": lambda n: breakpoint_state.set_ignore(n, 10**9),
    "false condition": lambda n: breakpoint_state.set_condition(n, "x < 0"),
}


def _watching(transform: str, watched: str, *, traced_after: bool, **options):
    """The program with ``watch {watched}`` set at its breakpoint: (run, devices, its
    number). ``traced_after``: the program is traced with the watch set (it then computes
    the statistics), else before."""
    run, devices = _program(transform, **options)  # traced: the breakpoint has its number
    n = _number()
    watches.LIVE.add(n, watched)
    if traced_after:  # a new program, as when the cell defining a jitted step runs again
        run, devices = _program(transform, **options)
    return run, devices, n


def _watched_run(transform: str, how: str, monkeypatch, *, as_stats: bool, watched: str = "grads"):
    """The program run once with ``watch {watched}``, every stop passed ``how``: (bytes
    sent to the host, the watch's values, devices). ``as_stats=False``: traced before the
    watch was set, it sends the values."""
    host = HostBytes(monkeypatch)  # before the trace, which takes the host calls it counts
    run, devices, n = _watching(transform, watched, traced_after=as_stats)
    PASSED_BY[how](n)
    try:
        jax.block_until_ready(run())
        jax.effects_barrier()
    finally:
        breakpoint_state.set_condition(n, "")
        breakpoint_state.reset()
    (watch,) = watches.LIVE.watches(n)
    watches.LIVE.remove(n, watched)  # the next program is traced without it
    return host.total, watch.snapshot().values, devices


@pytest.mark.parametrize("how", list(PASSED_BY))
def test_a_passed_stop_sends_a_watched_trees_statistics_not_its_leaves(monkeypatch, how):
    sent, values, _ = _watched_run("jit", how, monkeypatch, as_stats=True)
    assert sent <= STEPS * PER_STEP, sent  # the leaves are 1 MB a step
    assert len(values) == STEPS
    for x, value in enumerate(values):
        norms, nans, infs = _expected(x)
        assert value.leaves.paths == ("['b']", "['w']")
        np.testing.assert_allclose(value.leaves.norms, norms, rtol=1e-5)
        assert value.leaves.nans.tolist() == nans.tolist() and value.leaves.infs.tolist() == infs.tolist()
        assert value.number == pytest.approx(np.sqrt((norms**2).sum()), rel=1e-5)
    assert "NaN in ['w']" in values[POISONED].text and "Inf in ['b']" in values[POISONED].text


# An array's statistics: 3 floats and 4 counts, and 32 places and values of NaN / Inf.
PER_ARRAY_STEP = 8 + 4 + 3 * 4 + 4 * 4 + 32 * 4 * 2 + 4


@pytest.mark.parametrize("watched", ["w", "half"])
@pytest.mark.parametrize("transform", ["jit", "shard_map"])
def test_an_arrays_watch_is_taken_from_the_statistics_sent_as_from_its_values(monkeypatch, transform, watched):
    sent, from_stats, devices = _watched_run(transform, "ignore", monkeypatch, as_stats=True, watched=watched)
    sent_values, from_values, _ = _watched_run(transform, "ignore", monkeypatch, as_stats=False, watched=watched)
    assert sent <= devices * STEPS * PER_ARRAY_STEP < devices * STEPS * SIDE * SIDE * 2 <= sent_values
    assert len(from_stats) == len(from_values) == devices * STEPS
    kept = lambda values: sorted(((v.text, v.stats, v.shape, v.dtype) for v in values), key=lambda k: k[0])
    assert kept(from_stats) == kept(from_values)
    poisoned = next(v for v in from_stats if v.stats.nan_count)
    assert poisoned.stats.nonfinite_places() == "nan at [0, 0], -inf at [0, 1]"
    assert (poisoned.stats.nan_count, poisoned.stats.inf_count, poisoned.stats.neg_inf_count) == (1, 1, 1)


@pytest.mark.parametrize("transform", ["jit", "grad", "shard_map"])
def test_a_watched_trees_history_is_the_same_as_from_its_leaves(monkeypatch, transform):
    sent, from_stats, devices = _watched_run(transform, "false condition", monkeypatch, as_stats=True)
    sent_leaves, from_leaves, _ = _watched_run(transform, "false condition", monkeypatch, as_stats=False)
    assert sent <= devices * STEPS * PER_STEP < devices * STEPS * SIDE * SIDE * 4 <= sent_leaves
    assert len(from_stats) == len(from_leaves) == devices * STEPS
    # (A shard_map's devices record their steps in any order: compared in one order.)
    in_order = lambda values: sorted(values, key=lambda v: (v.text, v.leaves.norms.tolist()))
    for ours, theirs in zip(in_order(from_stats), in_order(from_leaves)):
        assert ours.text == theirs.text
        assert ours.leaves.paths == theirs.leaves.paths
        np.testing.assert_allclose(ours.leaves.norms, theirs.leaves.norms, rtol=1e-5)
        for field in ("nans", "infs"):
            assert getattr(ours.leaves, field).tolist() == getattr(theirs.leaves, field).tolist()


def test_a_sharded_locals_statistics_are_computed_where_its_shards_are(monkeypatch):
    # A sharded jit: each device reduces its shard; only the statistics reach the host.
    mesh = jax.make_mesh((jax.device_count(),), ("d",), **automatic_axes(1))
    rows = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))

    def program():
        def step(c, x):
            w = jax.lax.with_sharding_constraint(jnp.full((SIDE, SIDE), x) + c, rows)
            w = w.at[5, 0].set(jnp.where(x == POISONED, jnp.nan, w[5, 0]))
            grads = {"w": w}
            jaxdbg.breakpoint()
            return c + jnp.sum(jnp.nan_to_num(grads["w"])) * 0.0, None

        return jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0]), step

    host = HostBytes(monkeypatch)
    xs = jnp.arange(float(STEPS))
    f, step = program()
    f.lower(xs)
    line = step.__code__.co_firstlineno + 4
    n = next(r.number for r in breakpoint_state.rows() if (r.filename, r.lineno) == (__file__, line))
    watches.LIVE.add(n, "grads")
    watches.LIVE.add(n, "w")
    breakpoint_state.set_condition(n, "x < 0")
    f, _ = program()  # traced with the watches set
    jax.block_until_ready(f(xs))
    assert host.total <= STEPS * (PER_STEP + PER_ARRAY_STEP), host.total
    tree, array = (watch.snapshot().values for watch in watches.LIVE.watches(n))
    finite = [x * SIDE if x != POISONED else x * np.sqrt(SIDE * SIDE - 1) for x in range(STEPS)]
    assert [v.number for v in tree] == pytest.approx(finite, rel=1e-5)
    assert [v.stats.mean for v in array] == pytest.approx([float(x) for x in range(STEPS)])
    assert array[POISONED].stats.nonfinite_places() == "nan at [5, 0]"


def _host_calls_compiled(**options) -> int:
    step = _make_step(**options)
    lowered = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0]).lower(jnp.arange(3.0))
    return sum("custom_call" in line for line in lowered.as_text().splitlines())


def test_only_a_watch_set_when_the_breakpoint_is_traced_adds_a_statistics_form(monkeypatch):
    # A statistics form costs compile time: a program traced with no watch has none.
    host = HostBytes(monkeypatch)
    unwatched = _host_calls_compiled()
    run, _, n = _watching("jit", "grads", traced_after=False)
    assert _host_calls_compiled() == unwatched + 1  # traced again, the watch set: its form's host call
    breakpoint_state.set_enabled(n, False)
    jax.block_until_ready(run())  # traced before the watch: the leaves are sent, 1 MB a step
    assert host.total >= STEPS * SIDE * SIDE * 4
    (watch,) = watches.LIVE.watches(n)
    assert len(watch.snapshot().values) == STEPS


def test_a_local_whose_statistics_cannot_be_staged_is_watched_from_its_values(monkeypatch, capsys):
    def fails(value):
        raise TypeError("not here")

    monkeypatch.setattr(sent_stats, "array_stats_in_program", fails)
    run, _, n = _watching("jit", "w", traced_after=True)
    breakpoint_state.set_enabled(n, False)
    jax.block_until_ready(run())  # the program runs
    (watch,) = watches.LIVE.watches(n)
    assert [v.stats.mean for v in watch.snapshot().values] == pytest.approx(
        [float(x) for x in range(STEPS)], rel=1e-3, nan_ok=True
    )
    assert "its values are sent instead" in capsys.readouterr().out


def test_a_tree_another_check_reads_is_sent_whole_and_its_stop_opens_with_every_value(monkeypatch):
    t = Transcript("p float(grads['w'][2, 2])", "p x", "c")
    host = HostBytes(monkeypatch)
    run, _, n = _watching("jit", "grads", traced_after=True, **t.options)
    breakpoint_state.set_condition(n, "float(grads['b'][2]) == 10")  # reads grads: its leaves are sent
    assert breakpoint_checks.watched_whole(n) == frozenset()
    jax.block_until_ready(run())
    assert host.total >= STEPS * SIDE * SIDE * 4
    assert t.answers("p x") == ["Array(5., dtype=float32)"], t.text
    assert t.answers("p float(grads['w'][2, 2])") == ["5.0"]
    (watch,) = watches.LIVE.watches(n)
    hits = [v.hit for v in watch.snapshot().values]
    assert hits == list(range(hits[0], hits[0] + STEPS))  # every step's, the opened one's too


def test_under_vmap_each_elements_tree_is_watched_from_its_leaves():
    # vmap's stops are screened on whole batches: the leaves are sent, and each element's
    # tree is watched on its own.
    def batched_program():
        step = _make_step()
        loop = lambda offset: jax.lax.scan(step, offset * 0.0, jnp.arange(4.0) + offset)[0]
        return jax.jit(jax.vmap(loop))

    offsets = jnp.array([0.0, 100.0])
    jax.eval_shape(batched_program(), offsets)
    n = _number()
    watches.LIVE.add(n, "grads")
    breakpoint_state.set_enabled(n, False)
    jax.block_until_ready(batched_program()(offsets))  # traced with the watch set
    (watch,) = watches.LIVE.watches(n)
    got = [v.number for v in watch.snapshot().values]
    steps = [o + x for x in range(4) for o in (0.0, 100.0)]  # step by step, each element in order
    want = [np.sqrt(((SIDE * SIDE) * x * x) + x * x * np.sum(np.arange(SIDE) ** 2.0)) for x in steps]
    assert got == pytest.approx(want, rel=1e-5)


def test_only_whole_watches_nothing_else_reads_are_sent_as_statistics():
    number = breakpoint_state.register("<cell>", 1, "step")
    watches.LIVE.add(number, "grads")
    watches.LIVE.add(number, "params")
    assert breakpoint_checks.watched_whole(number) == {"grads", "params"}
    watches.LIVE.add(number, "params['w'].sum()")
    assert breakpoint_checks.watched_whole(number) == {"grads"}
    breakpoint_state.set_condition(number, "grads is None")
    assert breakpoint_checks.watched_whole(number) == frozenset()
    breakpoint_state.set_condition(number, "")
    breakpoint_state.set_log_template(number, "{loss}")
    assert breakpoint_checks.watched_whole(number) == {"grads"}
    watches.LIVE.add(number, "locals()")  # reads every local
    assert breakpoint_checks.watched_whole(number) == frozenset()


def _jitted_step(**options):
    @jax.jit
    def step(x):
        grads = {"w": jnp.full((SIDE, SIDE), x), "b": jnp.arange(8.0) * x}  # 1 MB
        small = x * 2
        jaxdbg.breakpoint(**options)
        return grads["w"].sum() + small

    return step


def test_watching_a_big_local_says_it_crosses_whole_until_the_program_is_traced_again(monkeypatch):
    """`watch grads` typed at a stop of a program traced before: the watch table says that
    this program sends grads whole at every stop, and how to have it send statistics."""
    t = Transcript("watch grads", "watch small", "c", "unwatch grads", "watch grads", "continue all")
    host = HostBytes(monkeypatch)
    step = _jitted_step(**t.options)
    step(1.0)
    jax.clear_caches()  # as the note says: the same function is traced again
    step(2.0)
    sent = host.total
    step(3.0)  # passed (continue all): the statistics cross, not the 1 MB
    sent = host.total - sent

    first, again = t.answers("watch grads")
    assert "note: grads (1 MB) crosses to the host whole at every later stop" in first
    assert "jax.clear_caches()" in first
    assert "note:" not in t.answers("watch small")[0]  # a small local: nothing to say
    assert "note:" not in again  # the program traced with the watch sends its statistics
    assert sent < 1024, sent


def test_no_note_where_a_check_reads_part_of_the_local():
    """Read in part (by a watch or a condition), grads is sent whole in any program."""
    t = Transcript("watch grads['w'].sum()", "watch grads", "c")
    _jitted_step(**t.options)(1.0)
    assert "note:" not in t.answers("watch grads['w'].sum()")[0]
    assert "note:" not in t.answers("watch grads")[0]


def test_no_note_at_a_batched_stop():
    t = Transcript("watch grads", "c", "c")
    jax.vmap(_jitted_step(**t.options))(jnp.arange(2.0))
    assert "note:" not in t.answers("watch grads")[0]  # vmap's stops send values
