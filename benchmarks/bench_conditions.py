"""Cost per stop of a false ``condition`` against a disabled breakpoint, in the same run.

A ``jaxdbg.breakpoint()`` in every step of a ``lax.scan`` (12 locals, one of them a
4096-element array) runs the same compiled program four ways, interleaved:

- disabled (``disable N``): the host callback returns after one check;
- a false condition (``condition N i < 0``): the frames are built on the host and the
  condition evaluated in them, then the stop passes;
- the same with one watch (``watch loss``), which takes its value at every passed stop;
- and, for the baseline, the scan without a breakpoint.

It prints each one's time per stop beyond the scan without a breakpoint, and the ratio of
a false condition to a disabled breakpoint. The cost of a condition is the host work of a
stop's frames, so it grows with the number of locals, not with their size (the values are
not copied until read).

Run: ``.nox/tests/bin/python benchmarks/bench_conditions.py [--steps N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import jaxdbg
from jaxdbg.engine import breakpoint_state, watches


def step_plain(carry, i):
    activations = jnp.tanh(carry + i)
    return activations, activations.sum()


def step_with_breakpoint(carry, i):
    activations = jnp.tanh(carry + i)
    loss = activations.sum()
    a, b, c, d, e, f, g, h = (i * k for k in range(8))  # locals the frame carries
    step = i
    jaxdbg.breakpoint()
    return activations, loss + step * 0


def _scan(step):
    return jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(4096), xs)[1])


def _time(fn, xs) -> float:
    start = time.perf_counter()
    fn(xs).block_until_ready()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    xs = jnp.arange(float(args.steps))
    plain, stopping = _scan(step_plain), _scan(step_with_breakpoint)
    plain(xs).block_until_ready()
    stopping.lower(xs)  # traced: the breakpoint has its number
    number = next(r.number for r in breakpoint_state.rows() if r.function == "step_with_breakpoint")

    def disabled():
        breakpoint_state.set_condition(number, "")
        breakpoint_state.set_enabled(number, False)

    def false_condition():
        breakpoint_state.set_enabled(number, True)
        breakpoint_state.set_condition(number, "i < 0")

    def false_condition_and_watch():
        false_condition()
        if not watches.LIVE.has_watches(number):
            watches.LIVE.add(number, "loss")

    def unwatched():
        if watches.LIVE.has_watches(number):
            watches.LIVE.remove(number, "loss")

    ways = {"no breakpoint": (lambda: None, plain), "disabled": (disabled, stopping),
            "false condition": (false_condition, stopping),
            "false condition + 1 watch": (false_condition_and_watch, stopping)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for prepare, fn in ways.values():  # warm up: compile, first host callbacks
        unwatched()
        prepare()
        fn(xs).block_until_ready()
    for _ in range(args.repeats):
        for name, (prepare, fn) in ways.items():
            unwatched()
            prepare()
            times[name].append(_time(fn, xs))
    unwatched()
    breakpoint_state.set_condition(number, "")
    breakpoint_state.set_enabled(number, True)

    base = statistics.median(times["no breakpoint"])
    per_stop = {name: (statistics.median(t) - base) / args.steps for name, t in times.items()}
    print(f"{args.steps}-step scan, median of {args.repeats}; no breakpoint: {base * 1e3:.1f} ms")
    for name in ("disabled", "false condition", "false condition + 1 watch"):
        print(f"  {name:<27} {per_stop[name] * 1e6:8.1f} µs per stop beyond no breakpoint")
    ratio = per_stop["false condition"] / max(per_stop["disabled"], 1e-9)
    print(f"false condition / disabled, per stop: {ratio:.2f}x")


if __name__ == "__main__":
    main()
