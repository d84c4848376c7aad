"""Cost of ``%jaxdbg nans on``, as ratios against baselines measured in the same run.

1. A call that produces no NaN: a jitted step (a 256 x 256 matmul and tanh) called
   2,000 times with the watch on, against the same step with only JAX's
   ``jax_debug_nans`` on (the watch's detector, which it needs anyway). Goal: the watch
   within 5% of JAX's flag alone. The same for ``%jaxdbg infs on`` against
   ``jax_debug_infs`` alone, and for a train step (``value_and_grad`` of a relu MLP).
   Against no watch and no flag at all, the ratio is stated: what checking every call's
   outputs on the host costs (goal: within 1.5x for these small steps).
2. A call that produces a NaN (and one that produces an Inf) under ``shard_map`` over 8
   devices: JAX's own error (its flag on, no watch) against the watch's error, which
   also locates the primitive, line and devices (checkify's NaN checks, or those turned
   to Infs, compiled and run once more).
   Paid once per NaN; the goal only keeps it of the same order (<= 3x).

Run: ``.nox/tests/bin/python benchmarks/bench_nans.py [--quick] [--json PATH]``, or with
every other benchmark: ``python3 dev.py bench``.
"""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.capture import nan_watch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import Row, arguments, finish, interleave, ratio_row

# The watch needs JAX's flag anyway (it does the detecting): within 5% of it alone.
FINITE_GOAL = 1.05
# Checking each call's outputs on the host is what any watch pays: stated against no
# watch at all, for steps this small (the larger the step, the smaller its share).
NO_WATCH_GOAL = 1.5

WEIGHTS = jax.random.normal(jax.random.PRNGKey(0), (256, 256)) / 16


def _step(x):
    return jnp.tanh(WEIGHTS @ x)


def _calls(f, x, n: int) -> float:
    jax.block_until_ready(f(x))  # compiled
    start = time.perf_counter()
    for _ in range(n):
        x = f(x)
    jax.block_until_ready(x)
    return time.perf_counter() - start


def _train_step(params, x):
    def loss(p):
        h = jax.nn.relu(x @ p["w1"])  # a custom_jvp: its eager rules once turned JAX's checks off
        return jnp.mean((h @ p["w2"]) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree_util.tree_map(lambda w, g: w - 1e-3 * g, params, grads), value


def _train_calls(n: int) -> float:
    key = jax.random.PRNGKey(1)
    params = {"w1": jax.random.normal(key, (64, 128)) / 8, "w2": jax.random.normal(key, (128, 1)) / 8}
    x = jax.random.normal(key, (32, 64))
    step = jax.jit(_train_step)
    jax.block_until_ready(step(params, x))  # compiled
    start = time.perf_counter()
    for _ in range(n):
        params, value = step(params, x)
    jax.block_until_ready(value)
    return time.perf_counter() - start


def _finite_calls(repeats: int, n: int, infs: bool = False, train: bool = False) -> list[Row]:
    x = jnp.ones(256)
    flag = "jax_debug_infs" if infs else "jax_debug_nans"

    def variant(checks: bool, watch: bool):
        def run() -> float:
            jax.config.update(flag, checks)
            if watch:
                nan_watch.set_enabled(True, infs=infs)
            try:
                return _train_calls(n) if train else _calls(jax.jit(_step), x, n)
            finally:
                if watch:
                    nan_watch.set_enabled(False, infs=infs)
                jax.config.update(flag, False)

        return run

    samples = interleave(
        {"nothing": variant(False, False), flag: variant(True, False), "watch": variant(True, True)}, repeats
    )
    what = f"{'infs' if infs else 'nans'} on, {n} finite calls of a jitted {'train step' if train else 'step'}"
    return [
        ratio_row(
            what,
            samples["watch"],
            samples[flag],
            FINITE_GOAL,
            unit="ms",
            baseline_name=flag,
            note="the watch adds nothing to a finite call: JAX's flag checks the outputs",
        ),
        ratio_row(
            what + ", against no watch",
            samples["watch"],
            samples["nothing"],
            NO_WATCH_GOAL,
            unit="ms",
            baseline_name="no flag, no watch",
            note="every call's outputs are checked on the host, as JAX's flag does",
        ),
    ]


def _nan_under_shard_map(repeats: int, infs: bool = False) -> Row:
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map
    mesh = Mesh(np.array(jax.devices()[:8]), ("d",))

    def body(block):  # a NaN where block < 10; an Inf (log 0) where block == 10
        return jax.lax.psum(jnp.log(block - 10.0) if infs else jnp.sqrt(block - 10.0), "d")

    x = (jnp.arange(16.0) + 11).at[11].set(10.0 if infs else -1.0)
    flag = "jax_debug_infs" if infs else "jax_debug_nans"

    def failing_call() -> float:
        f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=P()))
        start = time.perf_counter()
        try:
            f(x)
        except FloatingPointError:
            pass
        return time.perf_counter() - start

    def jax_alone() -> float:
        jax.config.update(flag, True)
        try:
            return failing_call()
        finally:
            jax.config.update(flag, False)

    def with_watch() -> float:
        nan_watch.set_enabled(True, backend="cli", infs=infs, stdout=io.StringIO(), stdin=io.StringIO(""), commands="c")
        try:
            return failing_call()
        finally:
            nan_watch.set_enabled(False, infs=infs)

    jax_alone()  # warm: both then compile what the other's caches do not hold
    samples = interleave({"jax": jax_alone, "watch": with_watch}, repeats, warmup=0)
    # Paid once per NaN: reported with JAX's plain error as the baseline, no goal to meet
    # beyond staying of the same order (the located error compiles checkify's checks once).
    return ratio_row(
        f"{'an Inf' if infs else 'a NaN'} under shard_map over 8 devices, located (line, devices)",
        samples["watch"],
        samples["jax"],
        3.0,
        unit="ms",
        baseline_name="JAX's error",
        note="checkify's NaN checks are compiled and run once more to locate it",
    )


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    rows = _finite_calls(repeats=3 if args.quick else 7, n=50 if args.quick else 2000)
    rows += _finite_calls(repeats=3 if args.quick else 7, n=50 if args.quick else 2000, infs=True)
    rows += _finite_calls(repeats=3 if args.quick else 7, n=50 if args.quick else 1000, train=True)
    rows.append(_nan_under_shard_map(repeats=2 if args.quick else 5))
    rows.append(_nan_under_shard_map(repeats=2 if args.quick else 5, infs=True))
    finish(rows, args.json)


if __name__ == "__main__":
    main()
