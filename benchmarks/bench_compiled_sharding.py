"""Trace + compile cost of recording the compiled sharding of a breakpoint's locals.

In a sharded jit over a 2 x 4 mesh of host devices, a breakpoint captures N traced
locals (8 x 512 arrays sharded over both axes). ``jaxdbg.breakpoint`` stages JAX's
``inspect_array_sharding`` for each of them so that ``sharding NAME`` can draw the
layout XLA chose; this prints trace + compile time with that recording against the
same breakpoint without it (and against no breakpoint), as ratios from one run.

Run: ``.venv/bin/python benchmarks/bench_compiled_sharding.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxdbg
from jaxdbg.capture import program_shardings


def _program(n_locals: int, with_breakpoint: bool):
    def f(x):
        values = [jnp.sin(x + i) for i in range(n_locals)]
        frame_locals = {f"v{i}": v for i, v in enumerate(values)}  # noqa: F841  (captured)
        if with_breakpoint:
            jaxdbg.breakpoint_if(jnp.isnan(values[0][0, 0]))  # never true: compile cost only
        return sum(values)
    return f


def _median_compile(n_locals: int, with_breakpoint: bool, x, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        fn = jax.jit(_program(n_locals, with_breakpoint))  # a fresh function: no cache
        start = time.perf_counter()
        fn.lower(x).compile()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    axis_type = getattr(jax.sharding, "AxisType", None)
    mesh = jax.make_mesh((2, 4), ("data", "model"),
                         **({} if axis_type is None else {"axis_types": (axis_type.Auto,) * 2}))
    x = jax.device_put(jnp.ones((8, 512)), NamedSharding(mesh, P("data", "model")))
    stage = program_shardings.CompiledShardings.stage
    print(f"trace + compile of a sharded jit on a 2x4 mesh (median of {repeats}):")
    for n_locals in (4, 32):
        none = _median_compile(n_locals, False, x, repeats)
        recorded = _median_compile(n_locals, True, x, repeats)
        program_shardings.CompiledShardings.stage = lambda self, operands, shardings: None
        try:
            unrecorded = _median_compile(n_locals, True, x, repeats)
        finally:
            program_shardings.CompiledShardings.stage = stage
        print(f"  {n_locals:>2} traced locals: no breakpoint {none * 1e3:7.1f} ms; "
              f"breakpoint without recording {unrecorded * 1e3:7.1f} ms; "
              f"with recording {recorded * 1e3:7.1f} ms = {recorded / unrecorded:.3f}x")


if __name__ == "__main__":
    main()
