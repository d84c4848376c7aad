"""A jax.distributed job's debugger, as ratios against baselines measured in the same run.

1. A command's round trip to another process: ``p y`` typed at the debug host for a
   stop of process 1, against the same command at a stop of the host's own device.
   Goal: at most 3x, and under 20 ms on localhost.
2. Prints: P processes each printing N rows from a jitted ``lax.fori_loop``
   (``jaxdbg.print``), with the debug host collecting them, against the same job
   without the secret (each process prints to its own stdout): wall time of the job.

A 2-process job (gloo CPU collectives, 2 devices each) on 127.0.0.1; the debug host
times the commands itself, through a backend registered for the run.

Run: ``.nox/tests/bin/python benchmarks/bench_distributed.py [--commands 200]
[--processes 8] [--prints 1000]``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.job_launcher import Job  # noqa: E402

ROUND_TRIP = '''
import statistics, time
import jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg

REPEATS = int(os.environ["REPEATS"])

def timing_backend(session):
    session.execute("p y")  # warm
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        session.execute("p y")
        times.append(time.perf_counter() - start)
    where = "remote" if session.info.device >= 2 else "local"
    print(f"TIMING {where} {statistics.median(times) * 1e3:.3f}", flush=True)
    session.execute("c")

jaxdbg.register_debugger("timing", timing_backend, priority=0)
mesh = Mesh(np.array(jax.devices()), ("x",))

def body(x):
    y = x * 2
    jaxdbg.breakpoint(backend="timing")
    return jax.lax.psum(y, "x")

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))
x = jax.make_array_from_callback((8,), NamedSharding(mesh, P("x")), lambda i: np.arange(8.0)[i])
jax.block_until_ready(f(x))
'''

PRINTS = '''
import jax.numpy as jnp
import jaxdbg

N = int(os.environ["PRINTS"])

@jax.jit
def loop(x):
    def step(i, x):
        jaxdbg.print("row {i} {x}", i=i, x=x)
        return x + 1
    return jax.lax.fori_loop(0, N, step, x)

jax.block_until_ready(loop(jnp.float32(PROCESS)))
print("done", PROCESS, flush=True)
'''


def round_trip(repeats: int) -> tuple[float, float]:
    with Job(ROUND_TRIP, 2, env={"JAXDBG_DEBUG_SECRET": "bench", "REPEATS": str(repeats),
                                 "JAXDBG_BACKEND": "timing"}) as job:
        codes = job.wait(600)
        text = job.output(0)
        assert codes == [0, 0], job.outputs()
    timings: dict[str, list[float]] = {"local": [], "remote": []}
    for where, ms in re.findall(r"TIMING (local|remote) ([\d.]+)", text):
        timings[where].append(float(ms))
    return min(timings["local"]), min(timings["remote"])


def prints(processes: int, rows: int, secret: bool) -> float:
    env = {"PRINTS": str(rows)}
    if secret:
        env["JAXDBG_DEBUG_SECRET"] = "bench"
    start = time.perf_counter()
    with Job(PRINTS, processes, env=env) as job:
        codes = job.wait(900)
        host = job.output(0)
        assert codes == [0] * processes, job.outputs()
    elapsed = time.perf_counter() - start
    expected = rows * processes if secret else rows
    assert len(re.findall(r"row \d+", host)) == expected, host[-2000:]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--prints", type=int, default=1000)
    args = parser.parse_args()
    local, remote = round_trip(args.commands)
    print(f"round trip of 'p y' ({args.commands} commands, median, best stop): "
          f"in-process {local:.2f} ms, another process {remote:.2f} ms, "
          f"ratio {remote / local:.1f}x (goal <= 3x and < 20 ms)")
    plain = prints(args.processes, args.prints, secret=False)
    hosted = prints(args.processes, args.prints, secret=True)
    print(f"{args.processes} processes x {args.prints} prints: each on its own stdout {plain:.1f} s, "
          f"all at the debug host {hosted:.1f} s, ratio {hosted / plain:.2f}x")


if __name__ == "__main__":
    main()
