"""A jax.distributed job's debugger, as ratios against baselines measured in the same run.

1. A command's round trip to another process: ``p y`` typed at the debug host for a
   stop of process 1, against the same command at a stop of the host's own devices,
   and against the bare store round trip (a set, and a blocking get answered by a
   thread of process 1), the floor any command through the store has.
   Each repeat is one execution of a ``shard_map`` with a breakpoint, which stops on
   the devices of both processes, so the two are measured alternately in the same job;
   a stop's sample is the median of its commands. Goals: at most 3x, and under 20 ms on
   localhost.
2. A passed stop in another process: a scan step with a 1 MB local in its frame (a
   weight matrix, of which each step reads a row) and ``jaxdbg.breakpoint()``, passed
   by ``continue all`` or by a false condition on ``x`` typed at the debug host at its
   first stop, per step in process 1 (which decides it on the host's answer, sending
   nothing, or only ``x``), against a no-op ``jax.debug.callback`` with no operands in
   the same step, interleaved in process 1. Goal 1.5x, as for one process.
3. Prints: P processes each printing N rows from a jitted ``lax.fori_loop``
   (``jaxdbg.print``), with the debug host collecting them, against the same job
   without the secret (each process prints to its own stdout): the job's wall time,
   the two jobs interleaved.

Local processes (``jaxdbg.distributed.start_local_processes``: gloo CPU collectives,
2 devices each) on 127.0.0.1; the debug host times the commands itself, through a
backend registered for the run.

Run: ``.nox/tests/bin/python benchmarks/bench_distributed.py [--quick] [--json PATH]``,
or with every other benchmark: ``python3 dev.py bench``.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from jaxdbg.distributed import start_local_processes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import Row, absolute_row, arguments, finish, interleave, ratio_row

# Two store round trips (the command, its output) against an in-process command.
ROUND_TRIP_GOAL = 3.0
ROUND_TRIP_ABSOLUTE_GOAL = 0.020  # s: what a typed command may take before it feels slow
# The store's own round trip (one set, one blocking get answered from another process) is
# the floor for any command sent through it; jaxdbg may add at most half of that again.
STORE_FLOOR_GOAL = 1.5
# A stop the host passes costs another process what it costs one process on its own.
PASSED_GOAL = 1.5
PASSED_BY = ("continue all", "false condition")
# Collecting every process's rows at one host may cost at most half as much again.
PRINTS_GOAL = 1.5

ROUND_TRIP = """
import itertools, statistics, threading, time
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg
from jaxdbg.internals import coordination

COMMANDS = int(os.environ["COMMANDS"])
RUNS = int(os.environ["RUNS"])
run = 0
store = coordination.store()
echoes = itertools.count()

def echo():  # process 1 answers the bare store round trips: the transport's floor
    for n in itertools.count():
        command = store.get(f"bench/echo/{n}/in", 600)
        if command == "end":
            return
        store.set(f"bench/echo/{n}/out", command)

echoing = threading.Thread(target=echo)
if PROCESS == 1:
    echoing.start()

def store_round_trip():
    n = next(echoes)
    start = time.perf_counter()
    store.set(f"bench/echo/{n}/in", "p y" * 40)  # about a signed command's size
    store.get(f"bench/echo/{n}/out", 60)
    return time.perf_counter() - start

served = threading.Semaphore(0)  # one release per stop the host has timed

def timing_backend(session):
    session.execute("p y")  # warm
    times = []
    for _ in range(COMMANDS):
        start = time.perf_counter()
        session.execute("p y")
        times.append(time.perf_counter() - start)
    where = "remote" if session.info.device >= jax.local_device_count() else "local"
    print(f"TIMING {run} {where} {statistics.median(times):.6f}", flush=True)
    if where == "remote":
        floor = statistics.median(store_round_trip() for _ in range(COMMANDS))
        print(f"TIMING {run} store {floor:.6f}", flush=True)
    session.execute("c")
    served.release()

jaxdbg.register_debugger("timing", timing_backend, priority=0)
mesh = Mesh(np.array(jax.devices()), ("x",))

def body(x):
    y = x * 2
    jaxdbg.breakpoint(backend="timing")
    return jax.lax.psum(y, "x")

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))
x = jax.make_array_from_callback((8,), NamedSharding(mesh, P("x")), lambda i: np.arange(8.0)[i])
for run in range(RUNS):
    jax.block_until_ready(f(x))
if PROCESS == 0:
    # Another process's last stop may still be queued at the host after this process's
    # own run returned: the echo it needs must outlive it.
    for _ in range(RUNS * jax.device_count()):
        assert served.acquire(timeout=600)
    store.set(f"bench/echo/{next(echoes)}/in", "end")
else:
    echoing.join()  # not left blocked in the store's client at exit
"""

PRINTS = """
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
"""

SECRET = {"JAXDBG_DEBUG_SECRET": "bench", "JAXDBG_BACKEND": "cli"}


PASSED = """
import time
import jax.numpy as jnp
import jaxdbg
from jaxdbg.job import membership

STEPS, RUNS = int(os.environ["STEPS"]), int(os.environ["RUNS"])

def scan_of(step):
    def program(xs, w):  # w: a 1 MB weight matrix in the outer frame, a row read per step
        return jax.lax.scan(lambda c, x: step(c, x, w), jnp.float32(0.0), xs)[0]
    compiled = jax.jit(program)
    return lambda xs: compiled(xs, weights)

def continued(c, x, w):
    row = w[0] * x
    jaxdbg.breakpoint()  # breakpoint 1
    return c + row[-1], None

def conditioned(c, x, w):
    row = w[0] * x
    jaxdbg.breakpoint()  # breakpoint 2
    return c + row[-1], None

def noop(c, x, w):
    row = w[0] * x
    jax.debug.callback(lambda: None)
    return c + row[-1], None

weights = jnp.ones((512, 512))
scans = {"continue all": scan_of(continued), "false condition": scan_of(conditioned), "noop": scan_of(noop)}
xs = jnp.arange(float(STEPS))
for f in scans.values():  # compile; each breakpoint stops once, and the host decides the rest
    jax.block_until_ready(f(xs))
job = membership.current()
if PROCESS == 0:  # its stops are served: both commands were typed
    job.write("bench/typed", {"typed": True})
else:
    job.read("bench/typed", 300)
    for f in scans.values():  # each breakpoint's next stop takes the host's last answer
        jax.block_until_ready(f(xs))
names = list(scans)
for run in range(RUNS):
    for name in names[run % 3 :] + names[: run % 3]:
        start = time.perf_counter()
        jax.block_until_ready(scans[name](xs))
        print("PASSED", PROCESS, run, name.replace(" ", "-"), (time.perf_counter() - start) / STEPS, flush=True)
"""


def _passed_in_another_process(repeats: int, steps: int) -> list[Row]:
    commands = "continue all; condition 2 x < 0; c"  # at the first stop of each breakpoint
    env = {**SECRET, "JAXDBG_COMMANDS": commands, "STEPS": str(steps), "RUNS": str(repeats)}
    with start_local_processes(PASSED, 2, env=env) as job:
        codes = job.wait(600)
        text = job.output(1)
        if set(codes.values()) != {0}:
            raise SystemExit(f"the passed-stops job failed: {codes}\n{_job_outputs(job)}")
    per_step = {name: [0.0] * repeats for name in (*PASSED_BY, "noop")}
    for run, name, seconds in re.findall(r"PASSED 1 (\d+) ([a-z-]+) ([\d.e-]+)", text):
        per_step[name.replace("-", " ")][int(run)] = float(seconds)
    return [
        ratio_row(
            f"passed stop ({how} at the debug host), per step of a {steps:,}-step scan in process 1",
            per_step[how],
            per_step["noop"],
            PASSED_GOAL,
            unit="us",
            baseline_name="(no-op jax.debug.callback, no operands)",
            note="its 1 MB local stays put: the host's answer lets process 1 decide the stop itself"
            + (", on x" if how != "continue all" else ""),
        )
        for how in PASSED_BY
    ]


def _job_outputs(job) -> str:
    return "\n".join(f"----- process {i} -----\n{job.output(i)}" for i in job.launched)


def _round_trip(repeats: int, commands: int) -> list[Row]:
    runs = repeats + 1  # the first run compiles: thrown away
    with start_local_processes(
        ROUND_TRIP, 2, env={**SECRET, "JAXDBG_BACKEND": "timing", "COMMANDS": str(commands), "RUNS": str(runs)}
    ) as job:
        codes = job.wait(600)
        text = job.output(0)
        if set(codes.values()) != {0}:
            raise SystemExit(f"the round-trip job failed: {codes}\n{_job_outputs(job)}")
    best: dict[tuple[int, str], float] = {}
    for run, where, seconds in re.findall(r"TIMING (\d+) (local|remote|store) ([\d.]+)", text):
        key = (int(run), where)
        best[key] = min(best.get(key, float("inf")), float(seconds))  # the run's best stop
    local = [best[(run, "local")] for run in range(1, runs)]
    remote = [best[(run, "remote")] for run in range(1, runs)]
    store = [best[(run, "store")] for run in range(1, runs)]
    measure = f"'p y' at another process's stop ({commands} commands, median)"
    return [
        ratio_row(
            measure,
            remote,
            local,
            ROUND_TRIP_GOAL,
            unit="ms",
            baseline_name="in-process",
            note="a command and its output each cross the store once; the store's own "
            "round trip alone is most of it (next row)",
        ),
        ratio_row(
            f"{measure}, over the bare store round trip",
            remote,
            store,
            STORE_FLOOR_GOAL,
            unit="ms",
            baseline_name="set + blocking get, echoed by process 1",
            note="what jaxdbg adds to the transport: signing, the command, its output",
        ),
        absolute_row(
            f"{measure}, absolute", remote, local, ROUND_TRIP_ABSOLUTE_GOAL, unit="ms", baseline_name="in-process"
        ),
    ]


def _prints(repeats: int, processes: int, rows: int) -> Row:
    def job(secret: bool):
        def run() -> float:
            env = {"PRINTS": str(rows), **(SECRET if secret else {"JAXDBG_BACKEND": "cli"})}
            start = time.perf_counter()
            with start_local_processes(PRINTS, processes, env=env) as job:
                codes = job.wait(900)
                host = job.output(0)
                if set(codes.values()) != {0}:
                    raise SystemExit(f"the prints job failed: {codes}\n{_job_outputs(job)}")
            elapsed = time.perf_counter() - start
            expected = rows * processes if secret else rows  # the host has every process's rows
            printed = len(re.findall(r"row \d+", host))
            if printed != expected:
                raise SystemExit(f"process 0 printed {printed} rows, not {expected}:\n{host[-2000:]}")
            return elapsed

        return run

    samples = interleave({"own stdout": job(False), "debug host": job(True)}, repeats, warmup=0)
    return ratio_row(
        f"{processes} processes x {rows} prints, job wall time",
        samples["debug host"],
        samples["own stdout"],
        PRINTS_GOAL,
        baseline_name="each on its own stdout",
        note="every row travels through the coordination service's store",
    )


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    if args.quick:
        rows = _round_trip(repeats=1, commands=10)
        rows += _passed_in_another_process(repeats=2, steps=50)
        rows.append(_prints(repeats=1, processes=2, rows=20))
    else:
        rows = _round_trip(repeats=7, commands=100)
        rows += _passed_in_another_process(repeats=9, steps=2000)
        rows.append(_prints(repeats=3, processes=8, rows=1000))
    finish(rows, args.json)


if __name__ == "__main__":
    main()
