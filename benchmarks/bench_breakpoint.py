"""Cost of jaxdbg breakpoints, as ratios against baselines measured in the same run.

1. Runtime: an untriggered ``breakpoint_if`` inside a 10,000-step ``lax.scan``,
   against the same scan without it and against the ``lax.cond`` +
   ``jax.debug.breakpoint`` recipe. Target: within 5% of no breakpoint.
2. Trace + compile time of a function 10 frames deep with 30 locals each,
   ``jaxdbg.breakpoint`` against ``jax.debug.breakpoint``. Target: no slower.

Run: ``.venv/bin/python benchmarks/bench_breakpoint.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import jaxdbg

STEPS = 10_000
WIDTH = 512  # a recurrent cell: one WIDTH x WIDTH matvec per step
WEIGHTS = jax.random.normal(jax.random.PRNGKey(0), (WIDTH, WIDTH)) / WIDTH**0.5


def _step(carry, x):
    return jnp.tanh(WEIGHTS @ carry + x), None


def scan_plain(xs):
    return jax.lax.scan(_step, jnp.zeros(WIDTH), xs)[0]


def scan_with_jaxdbg(xs):
    def step(carry, x):
        carry, _ = _step(carry, x)
        jaxdbg.breakpoint_if(jnp.any(jnp.isnan(carry)))
        return carry, None
    return jax.lax.scan(step, jnp.zeros(WIDTH), xs)[0]


def scan_with_jax_recipe(xs):
    def step(carry, x):
        carry, _ = _step(carry, x)
        jax.lax.cond(jnp.any(jnp.isnan(carry)), lambda: jax.debug.breakpoint(), lambda: None)
        return carry, None
    return jax.lax.scan(step, jnp.zeros(WIDTH), xs)[0]


def _median_runtime(fn, xs, repeats: int) -> float:
    compiled = jax.jit(fn)
    compiled(xs).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        compiled(xs).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _deep_function(breakpoint_fn, depth: int = 10, n_locals: int = 30):
    """A chain of ``depth`` nested calls, each frame holding ``n_locals`` traced locals."""
    def level(x, d):
        names = {f"v{i}": x + i for i in range(n_locals)}
        locals().update(names)  # keep them visible as frame locals
        frame_locals = names
        if d == 0:
            breakpoint_fn()
            return sum(names.values())
        return level(x * 1.0, d - 1) + names["v0"]
    return lambda x: level(x, depth - 1)


def _median_compile(breakpoint_fn, repeats: int) -> float:
    times = []
    for i in range(repeats):
        fn = jax.jit(_deep_function(breakpoint_fn))
        x = jnp.ones((8,)) * (i + 1)
        start = time.perf_counter()
        fn.lower(x).compile()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    args = parser.parse_args()
    repeats = 5 if args.quick else 30
    xs = jnp.linspace(0.0, 1.0, STEPS)

    plain = _median_runtime(scan_plain, xs, repeats)
    ours = _median_runtime(scan_with_jaxdbg, xs, repeats)
    recipe = _median_runtime(scan_with_jax_recipe, xs, repeats)
    print(f"untriggered breakpoint_if in a {STEPS:,}-step scan (median of {repeats}):")
    print(f"  no breakpoint            {plain * 1e3:8.2f} ms   1.000x")
    print(f"  jaxdbg.breakpoint_if     {ours * 1e3:8.2f} ms   {ours / plain:.3f}x  (target <= 1.05x)")
    print(f"  lax.cond + jax.debug.bp  {recipe * 1e3:8.2f} ms   {recipe / plain:.3f}x")

    jax_bp = _median_compile(jax.debug.breakpoint, max(3, repeats // 5))
    our_bp = _median_compile(jaxdbg.breakpoint, max(3, repeats // 5))
    print("trace + compile, 10 frames x 30 locals:")
    print(f"  jax.debug.breakpoint     {jax_bp * 1e3:8.1f} ms   1.000x")
    print(f"  jaxdbg.breakpoint        {our_bp * 1e3:8.1f} ms   {our_bp / jax_bp:.3f}x  (target <= 1.0x)")


if __name__ == "__main__":
    main()
