"""A breakpoint the debug host passes (``continue all``, ``disable``) passes in every
process of the job without sending its values there, and counts at the host; its
condition and log template set at the host decide every process's stops, each process
sending only what they read; a change at the host (the ``continue all``'s run ends)
reaches the other processes' next call."""

from __future__ import annotations

import re

import pytest

from support.job_launcher import Job

pytestmark = pytest.mark.distributed

SECRET = {"JAXDBG_DEBUG_SECRET": "a secret only the launcher knows"}
STEPS = 100

# Each process runs a STEPS-step scan with a 1 MB local and a breakpoint in its step,
# and says how many of its stops sent their values to its host memory.
SCAN = f"""
import os, time
import jax.numpy as jnp
import jaxdbg
from jaxdbg.capture import breakpoints

sent = []
breakpoints.observe_host_arrivals(lambda: sent.append(1))

def step(c, x):
    big = jnp.full((512, 512), x) + c
    jaxdbg.breakpoint()
    return c + big[0, 0] * 0.0, None

f = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
if PROCESS == 0 and os.environ.get("HOST_LATE"):
    from jaxdbg.engine import breakpoint_state
    f.lower(jnp.arange({STEPS}.0))  # traced: the host serves the job
    deadline = time.monotonic() + 120
    while not any(row.hits for row in breakpoint_state.rows()) and time.monotonic() < deadline:
        time.sleep(0.05)  # until process 1's first stop has been served here
jax.block_until_ready(f(jnp.arange({STEPS}.0)))
jax.effects_barrier()
print("values sent", PROCESS, len(sent), flush=True)
"""


def _sent(text: str, process: int) -> int:
    return int(re.search(rf"^values sent {process} (\d+)$", text, re.M).group(1))


def test_the_other_processes_send_no_values_for_the_stops_the_host_passes():
    # (A disabled breakpoint's answer differs only in that its stops are not hits:
    # tests/engine/test_host_passes.py.)
    with Job(SCAN, 2, env=SECRET, per_process_env={0: {"JAXDBG_COMMANDS": "continue all"}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert len(re.findall(r"Stopped at", host)) == 1, host
    # Its first stop went to the host (before the host had said anything of it); the
    # other 99 passed in the process, and said so to the host, where they count.
    assert _sent(other, 1) == 1, job.outputs()
    assert _sent(host, 0) <= 1
    assert f"continued past {2 * STEPS - 1} more stops of breakpoint 1 in this script" in host, host


@pytest.mark.parametrize("typed_at", ["the host's stop", "process 1's stop"])
def test_a_condition_set_at_the_host_decides_every_processs_stops_on_what_it_reads(typed_at):
    commands = {"JAXDBG_COMMANDS": "condition 1 x == 42; c; p x; c; p x; c"}
    late = {"HOST_LATE": "1"} if typed_at == "process 1's stop" else {}
    with Job(SCAN, 2, env=SECRET, per_process_env={0: {**commands, **late}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    banners = re.findall(r"Stopped at .*", host)
    assert len(banners) == 3, host  # the first stop, then x == 42 in each process
    if late:
        assert "process 1/2" in banners[0], host
    assert sorted("process 1/2" in b for b in banners[1:]) == [False, True], host
    assert host.count("Array(42., dtype=float32)") == 2, host
    # Process 1 sent its values for its first stop (before the host had said anything
    # of it) and for the one that opened; every other stop was decided there, on x.
    assert _sent(other, 1) == 2, job.outputs()
    assert _sent(host, 0) <= 2


def test_a_logpoint_set_at_the_host_writes_every_processs_lines_there():
    commands = "log 1 'x={x:.0f}'; c"
    with Job(SCAN, 2, env=SECRET, per_process_env={0: {"JAXDBG_COMMANDS": commands}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert len(re.findall(r"Stopped at", host)) == 1, host
    theirs = re.findall(r"^process 1/2 \| x=(\d+)$", host, re.M)
    mine = re.findall(r"^x=(\d+)$", host, re.M)
    # Every stop logs but the one that opened (whichever process's it was): in order.
    assert sorted([len(theirs), len(mine)]) == [STEPS - 1, STEPS], host
    for lines in (theirs, mine):
        assert [int(x) for x in lines] == list(range(STEPS - len(lines), STEPS)), host
    assert _sent(other, 1) <= 1, job.outputs()


# The host's `continue all` ends with its run (here: end_run(), once process 1's first
# call is done), after which both call again: process 1's stops travel to the host
# again, and open there.
TWO_CALLS = """
import time
import jax.numpy as jnp
import jaxdbg
from jaxdbg.engine import breakpoint_state
from jaxdbg.job import membership

def step(c, x):
    jaxdbg.breakpoint()
    return c + x, None

f = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
job = membership.current()
jax.block_until_ready(f(jnp.arange(20.0)))
jax.effects_barrier()
if PROCESS == 0:
    job.read("test/first call done", 60)  # process 1's stops of it came in the run
    breakpoint_state.end_run()
    time.sleep(1.0)  # the version is published, and read by process 1
    job.write("test/second call", {"go": True})
else:
    job.write("test/first call done", {"done": True})
    job.read("test/second call", 60)
jax.block_until_ready(f(jnp.arange(1.0) + 100))
jax.effects_barrier()
print("done", PROCESS, flush=True)
"""


def test_after_the_hosts_continue_all_ends_the_other_processes_stops_open_again():
    commands = "continue all; p x; c; p x; c"
    with Job(TWO_CALLS, 2, env=SECRET, per_process_env={0: {"JAXDBG_COMMANDS": commands}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host = job.output(0)
    banners = re.findall(r"Stopped at .*", host)
    assert len(banners) == 3, host
    # 20 stops of each process in the first call, every one a hit at the host (those
    # process 1 passed itself are counted there as they come, perhaps after the report).
    assert "hit 41" in banners[1] and "hit 42" in banners[2], host
    assert sorted("process 1/2" in b for b in banners[1:]) == [False, True], host  # both processes' second call
    assert host.count("Array(100., dtype=float32)") == 2, host
