"""What a passed stop costs inside a sharded jit: a scan over a 1 x 8 mesh of host
devices whose step holds one float32 local, its carry, sharded over the devices, as ratios from one run.

1. ``jaxdbg.breakpoint()`` in the step, passed by ``continue all`` (answered at the first
   stop, which is not timed): the step with a 4096 x 1024 local (16 MB) against the
   same with a 64 x 16 one. Goal 1.2x: a passed stop gathers no local onto the host's
   device, so its cost does not grow with them.
2. The same passed stop against a no-op ``jax.debug.callback`` without operands in the
   same step, both with the big local. Goal 1.5x. Every device branches on the host's
   answer, which XLA broadcasts from the host's device: one all-reduce per step, which
   the callback (it answers nothing) does without.
3. The same passed stop against the least any stop decided on the host costs there, in
   plain JAX: an ``io_callback`` whose scalar answer every device uses (no operand, no
   ``lax.cond``), with the big local. Goal 1.2x. On host devices that share 2 cores, that
   answer alone grows with the step's work (its own big-vs-small row): each device
   waits at the all-reduce for the slowest, so their steps no longer overlap. jaxdbg
   can ask less of the devices only by asking each one (8 host calls per step, slower
   again: 1.3 ms against 0.8 ms in plain JAX).
4. An untriggered ``breakpoint_if`` on a scalar against no breakpoint, with the big
   local. Goal 1.05x.

Run: ``python benchmarks/bench_sharded_stops.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import arguments, finish, interleave, ratio_row, timed

import jaxdbg
from jaxdbg.engine import breakpoint_state


def _sharded_scan(stop, shape, steps: int):
    """A jitted scan over ``steps`` steps whose carry, a local of the step, is sharded over
    the mesh's 8 devices by rows; ``stop()`` runs in each step. (The step rebinds the
    carry: a stop that holds the old and the new carry both has XLA copy it at every
    step, since either may be shown; bench_breakpoint's loop-carry row.)"""
    mesh = jax.make_mesh((8,), ("d",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))

    def step(carry, x):
        carry = carry * 0.5 + x
        answer = stop(x)
        return (carry if answer is None else carry + answer), None

    f = jax.jit(lambda c, xs: jax.lax.scan(step, c, xs)[0])
    carry = jax.device_put(jnp.ones(shape), sharding)
    xs = jnp.arange(float(steps))
    return lambda: f(carry, xs).block_until_ready()


def _passed(x) -> None:
    jaxdbg.breakpoint(backend="cli", stdin=io.StringIO("continue all\n"), stdout=io.StringIO())


def _noop_callback(x) -> None:
    jax.debug.callback(lambda: None)


def _host_answer(x) -> Any:
    """Plain JAX: a host call's scalar answer, used on every device (added to the carry)."""
    return io_callback(lambda: np.int32(0), jax.ShapeDtypeStruct((), jnp.int32))


def _untriggered(x) -> None:
    jaxdbg.breakpoint_if(x < 0)


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    steps, repeats = (20, 3) if args.quick else (200, 15)
    big, small = ((512, 64), (64, 16)) if args.quick else ((4096, 1024), (64, 16))
    runs = {
        "passed, big": _sharded_scan(_passed, big, steps),
        "passed, small": _sharded_scan(_passed, small, steps),
        "callback, big": _sharded_scan(_noop_callback, big, steps),
        "host answer, big": _sharded_scan(_host_answer, big, steps),
        "host answer, small": _sharded_scan(_host_answer, small, steps),
        "breakpoint_if, big": _sharded_scan(_untriggered, big, steps),
        "none, big": _sharded_scan(lambda x: None, big, steps),
    }
    for run in runs.values():  # compile, and answer the first stop: continue all
        run()
    samples = interleave({name: lambda run=run: timed(run) / steps for name, run in runs.items()}, repeats)
    breakpoint_state.reset()
    mb = 4 * big[0] * big[1] / 2**20
    rows = [
        ratio_row(
            f"sharded jit (8 devices): passed stop (continue all), per step: a {big[0]}x{big[1]} sharded local vs {small[0]}x{small[1]}",
            samples["passed, big"],
            samples["passed, small"],
            1.2,
            unit="us",
            baseline_name=f"(the same, {small[0]}x{small[1]})",
            note=f"the big local is {mb:.0f} MB across the devices; a stop that opens gathers it, a passed one does not",
        ),
        ratio_row(
            "sharded jit (8 devices): passed stop (continue all) vs no-op callback, per step",
            samples["passed, big"],
            samples["callback, big"],
            1.5,
            unit="us",
            baseline_name="(no-op jax.debug.callback, no operands)",
            note="the host's answer reaches every device by one all-reduce per step; the callback answers nothing",
        ),
        ratio_row(
            "sharded jit (8 devices): passed stop (continue all) vs a host answer used on every device (plain JAX), per step",
            samples["passed, big"],
            samples["host answer, big"],
            1.2,
            unit="us",
            baseline_name="(io_callback's scalar answer added to the carry)",
            note="the least a stop decided on the host costs in a sharded jit: one host call and one all-reduce",
        ),
        ratio_row(
            f"sharded jit (8 devices), plain JAX: a host answer used on every device, a {big[0]}x{big[1]} sharded local vs {small[0]}x{small[1]}",
            samples["host answer, big"],
            samples["host answer, small"],
            1.2,
            unit="us",
            baseline_name=f"(the same, {small[0]}x{small[1]})",
            note="no jaxdbg: the platform's own growth, which the first row's ratio inherits on host devices",
        ),
        ratio_row(
            "sharded jit (8 devices): untriggered breakpoint_if vs no breakpoint, per step",
            samples["breakpoint_if, big"],
            samples["none, big"],
            1.05,
            unit="us",
            baseline_name="(no breakpoint)",
        ),
    ]
    print(
        "per step, median µs: " + ", ".join(f"{name} {statistics.median(v) * 1e6:.0f}" for name, v in samples.items()),
        flush=True,
    )
    finish(rows, args.json)


if __name__ == "__main__":
    main()
