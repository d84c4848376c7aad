"""Cost of ``%jaxdbg nans on``, as ratios against baselines measured in the same run.

1. A call that produces no NaN: a jitted step (a 256 x 256 matmul and tanh) called
   2,000 times with the watch on, against the same step with only JAX's
   ``jax_debug_nans`` on (the watch's detector, which it needs anyway) and with no
   checks at all. Target: the watch within 5% of JAX's flag alone.
2. A call that produces a NaN under ``shard_map`` over 8 devices: JAX's own error
   (its flag on, no watch) against the watch's error, which also locates the NaN's
   primitive, line and devices (checkify's NaN checks compiled and run once more).
   Paid once per NaN, so reported, not targeted.

Run: ``.venv/bin/python benchmarks/bench_nans.py [--quick]``.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.capture import nan_watch

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


def _finite_calls(repeats: int, n: int) -> None:
    x = jnp.ones(256)
    times: dict[str, list[float]] = {"no checks": [], "jax_debug_nans": [], "nans on (watch)": []}
    for _ in range(repeats):  # interleaved, so drift hits every variant alike
        jax.config.update("jax_debug_nans", False)
        times["no checks"].append(_calls(jax.jit(_step), x, n))
        jax.config.update("jax_debug_nans", True)
        times["jax_debug_nans"].append(_calls(jax.jit(_step), x, n))
        nan_watch.set_enabled(True)
        times["nans on (watch)"].append(_calls(jax.jit(_step), x, n))
        nan_watch.set_enabled(False)
    base = statistics.median(times["jax_debug_nans"])
    print(f"1. {n} finite calls of a jitted step (median of {repeats})")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"   {name:<18} {median * 1e3:8.1f} ms   {median / base:5.2f}x jax_debug_nans")


def _nan_under_shard_map(repeats: int) -> None:
    from jax.sharding import Mesh, PartitionSpec as P

    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map
    mesh = Mesh(np.array(jax.devices()[:8]), ("d",))

    def body(block):
        return jax.lax.psum(jnp.sqrt(block - 10.0), "d")

    x = (jnp.arange(16.0) + 10).at[11].set(-1.0)

    def failing_call() -> float:
        f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=P()))
        start = time.perf_counter()
        try:
            f(x)
        except FloatingPointError:
            pass
        return time.perf_counter() - start

    def jax_alone() -> float:
        jax.config.update("jax_debug_nans", True)
        try:
            return failing_call()
        finally:
            jax.config.update("jax_debug_nans", False)

    def with_watch() -> float:
        nan_watch.set_enabled(True, backend="cli", stdout=io.StringIO(), stdin=io.StringIO(""),
                              commands="c")
        try:
            return failing_call()
        finally:
            nan_watch.set_enabled(False)

    jax_alone()  # warm: both then compile what the other's caches do not hold
    own, watched = [], []
    for i in range(repeats):  # alternating which goes first
        if i % 2:
            own.append(jax_alone())
            watched.append(with_watch())
        else:
            watched.append(with_watch())
            own.append(jax_alone())
    a, b = statistics.median(own), statistics.median(watched)
    print(f"2. a NaN under shard_map over 8 devices, first call (median of {repeats})")
    print(f"   JAX's error alone          {a * 1e3:8.1f} ms")
    print(f"   located (line, devices)    {b * 1e3:8.1f} ms   {b / a:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    _finite_calls(repeats=3 if args.quick else 7, n=500 if args.quick else 2000)
    _nan_under_shard_map(repeats=2 if args.quick else 5)


if __name__ == "__main__":
    main()
