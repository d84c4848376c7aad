"""Trace + compile cost of recording the compiled sharding of a breakpoint's locals.

In a sharded jit over a 2 x 4 mesh of host devices, a breakpoint captures N traced
locals (8 x 512 arrays sharded over both axes). ``jaxdbg.breakpoint`` stages JAX's
``inspect_array_sharding`` for each of them so that ``sharding NAME`` can draw the
layout XLA chose; this prints trace + compile time with that recording against the
same breakpoint without it (and against no breakpoint), as ratios from one run.

Goal: within 5%. Run: ``python benchmarks/bench_compiled_sharding.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg
from jaxdbg.engine import program_shardings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import arguments, finish, interleave, ratio_row, timed


def _program(n_locals: int, with_breakpoint: bool):
    def f(x):
        values = [jnp.sin(x + i) for i in range(n_locals)]
        frame_locals = {f"v{i}": v for i, v in enumerate(values)}  # noqa: F841  (captured)
        if with_breakpoint:
            jaxdbg.breakpoint_if(jnp.isnan(values[0][0, 0]))  # never true: compile cost only
        return sum(values)

    return f


def _compile_time(n_locals: int, with_breakpoint: bool, x) -> float:
    fn = jax.jit(_program(n_locals, with_breakpoint))  # a fresh function: no cache
    return timed(lambda: fn.lower(x).compile())


def _without_recording(n_locals: int, x) -> float:
    stage = program_shardings.CompiledShardings.stage
    program_shardings.CompiledShardings.stage = lambda self, operands, shardings: None
    try:
        return _compile_time(n_locals, True, x)
    finally:
        program_shardings.CompiledShardings.stage = stage


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    repeats = 1 if args.quick else 9
    axis_type = getattr(jax.sharding, "AxisType", None)
    mesh = jax.make_mesh(
        (2, 4), ("data", "model"), **({} if axis_type is None else {"axis_types": (axis_type.Auto,) * 2})
    )
    x = jax.device_put(jnp.ones((8, 512)), NamedSharding(mesh, P("data", "model")))
    rows = []
    for n_locals in (4, 32):
        samples = interleave(
            {
                "none": lambda: _compile_time(n_locals, False, x),
                "unrecorded": lambda: _without_recording(n_locals, x),
                "recorded": lambda: _compile_time(n_locals, True, x),
            },
            repeats,
        )
        print(f"{n_locals:>2} traced locals: no breakpoint {statistics.median(samples['none']) * 1e3:.1f} ms")
        rows.append(
            ratio_row(
                f"trace + compile, compiled-sharding recording, {n_locals} locals",
                samples["recorded"],
                samples["unrecorded"],
                1.05,
                unit="ms",
                baseline_name="(the breakpoint without it)",
            )
        )
    finish(rows, args.json)


if __name__ == "__main__":
    main()
