"""One debugger for a whole jax.distributed job: real local processes on CPU (gloo
collectives, 2 devices each), their stops served at the debug host (process 0) by
scripted commands (JAXDBG_COMMANDS)."""

from __future__ import annotations

import re

import pytest

from support.job_launcher import PROGRAMS, Job

pytestmark = pytest.mark.distributed

SECRET = {"JAXDBG_DEBUG_SECRET": "a secret only the launcher knows"}

SHARD_MAP = (PROGRAMS / "shard_map_stop.py").read_text()


def host_commands(commands: str) -> dict[int, dict[str, str]]:
    return {0: {"JAXDBG_COMMANDS": commands}}


@pytest.mark.matrix
def test_every_processs_stops_are_served_at_the_debug_host():
    commands = "p y; c; p y; c; p y; locals; args; up; p x.shape; c; whatis y; c"
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    banners = re.findall(r"Stopped at .*", host)
    places = [re.search(r"process \d/2 · device \d", b).group(0) for b in banners]
    assert places == [
        "process 0/2 · device 0",
        "process 0/2 · device 1",
        "process 1/2 · device 2",
        "process 1/2 · device 3",
    ], host
    # p, locals and up ran in process 1, where device 2's shard is.
    assert "Array([ 8., 10.], dtype=float32)" in host
    assert re.search(r"y\s+Array\s.*process 1/2 · device 2", host), host
    # args there: the function's one argument, so x twice (locals, args) and y once
    assert len(re.findall(r"^x\s+Array\s.*process 1/2 · device 2", host, re.M)) == 2, host
    assert len(re.findall(r"^y\s+Array\s.*process 1/2 · device 2", host, re.M)) == 1, host
    assert re.search(r"->\s+out = f\(x\)", host) and "(8,)" in host  # up: the module frame's x
    assert "float32[2]" in host  # whatis at device 3
    assert "Stopped at" not in other  # nothing was served in process 1 itself
    # Process 0's computation can end while process 1's stops are still served (its
    # psum does not wait for the breakpoints): its line comes out whole among them.
    assert re.search(r"^result 0 \[24\.0, 32\.0\]$", host, re.M), host
    assert "result 1 [24.0, 32.0]" in other


@pytest.mark.matrix
def test_quit_at_the_host_ends_the_computation_in_every_process():
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands("q")) as job:
        assert job.wait(120) == [1, 1], job.outputs()
        outputs = [job.output(0), job.output(1)]
    for text in outputs:  # one line each, as a quit in one process says it
        assert text.count("jaxdbg.DebuggerQuit: the debugger quit") == 1, outputs
        assert "result" not in text and "Traceback" not in text, outputs
    assert len(re.findall(r"Stopped at", outputs[0])) == 1


def test_continue_all_at_the_host_passes_the_breakpoint_on_every_process():
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands("continue all")) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert len(re.findall(r"Stopped at", host)) == 1, host
    assert "continued past 3 more stops of breakpoint 1" in host
    assert "result 0 [24.0, 32.0]" in host and "result 1 [24.0, 32.0]" in other


def test_a_stop_in_a_cpu_job_tells_of_gloos_deadline_not_xlas():
    # The job's devices meet in Gloo: XLA's rendezvous timeouts do not apply, but Gloo
    # fails the job when the first collective among the devices waits over 30 s.
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands("continue all")) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host = job.output(0)
    assert host.count("Gloo sets up their connections, and fails the whole job if that takes over 30 s") == 1, host
    assert "XLA ends the process" not in host


def test_a_watch_takes_its_values_at_every_processs_stops():
    # y is x * 2 on each device's shard of arange(8): its sum is 2, 10, 18 and 26.
    commands = "watch y.sum(); c; c; watch y[0] * 1j; c; watch; c"
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host = job.output(0)
    table = host[host.rindex("Watches at breakpoint") :]
    assert "1: y.sum() = 26.0  (hit 4; 4 values)" in table, host  # the last two in process 1
    assert "min 2  max 26" in table, host
    # Set at process 1's first stop: its value there and at the next, complex.
    assert re.search(r"2: y\[0\] \* 1j = 12j\s+\(hit 4; 2 values\)", table), host


def test_a_pytree_watchs_leaf_norms_come_from_every_processs_stops():
    # y on devices 0..3: [0, 2], [4, 6], [8, 10], [12, 14]; the last two stops in process 1.
    commands = "watch {'y': y, 'twice': y * 2}; c; c; c; watch 1; watch 1 leaves; c"
    with Job(SHARD_MAP, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host = job.output(0)
    leaves = host[host.index("float leaves (norms over finite values)") :]
    assert re.search(r"\['twice'\]\s+36\.8782\s+0\s+0", leaves), host  # |[24, 28]|
    assert re.search(r"\['y'\]\s+18\.4391\s+0\s+0", leaves), host  # |[12, 14]|
    rows = re.findall(r"^\s+(\d)\s+([\d.]+)\s+0\s+0$", host, re.M)  # watch 1: hit, global norm
    assert [(h, round(float(n), 3)) for h, n in rows] == [("1", 4.472), ("2", 16.125), ("3", 28.636), ("4", 41.231)]


# Once its callbacks are done (the result can come first: nothing waits on a breakpoint's
# callback), each process lists what is left in the store of its own stops: a stop's
# keys are deleted together when it ends, before the owner resumes.
LEFT_IN_THE_STORE = """
import re
from jax._src import distributed
jax.effects_barrier()
left = [k for k, _ in distributed.global_state.client.key_value_dir_get("jaxdbg/")
        if re.search(rf"p{PROCESS}-\\d+-[0-9a-f]{{8}}", k)]
print("left in the store:", left, flush=True)
"""


def test_a_stops_keys_are_deleted_from_the_store_when_it_ends():
    commands = "p y; p y + 1; c; p y; c; p y; p y * 2; c; c"
    program = SHARD_MAP + LEFT_IN_THE_STORE
    with Job(program, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert "Array([16., 20.]" in host, host  # p y * 2 ran at process 1's stop
    assert "result 1 [24.0, 32.0]" in other and "left in the store: []" in other, other


# Only process 0 stops; process 1's devices pass their callbacks and wait in the psum
# for process 0's, which end their programs when the quit raises in their callbacks.
QUIT_WHILE_OTHERS_WAIT_IN_A_COLLECTIVE = """
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg

mesh = Mesh(np.array(jax.devices()), ("x",))

def body(x):
    def step(i, x):
        jaxdbg.breakpoint(processes=[0])
        return jax.lax.psum(x, "x") / 4 + x
    return jax.lax.fori_loop(0, 3, step, x)

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
x = jax.make_array_from_callback((8,), NamedSharding(mesh, P("x")), lambda i: np.arange(8.0)[i])
print("result", PROCESS, np.asarray(f(x).addressable_data(0)).tolist(), flush=True)
"""


@pytest.mark.matrix
def test_a_quit_ends_a_process_that_waits_in_a_collective_without_a_stop_of_its_own():
    with Job(QUIT_WHILE_OTHERS_WAIT_IN_A_COLLECTIVE, 2, env=SECRET, per_process_env=host_commands("q")) as job:
        assert job.wait(120) == [1, 1], job.outputs()  # neither hangs
        host, other = job.output(0), job.output(1)
    assert host.count("jaxdbg.DebuggerQuit: the debugger quit") == 1, host
    assert "Stopped at" not in other and "result" not in other + host and "Traceback" not in other
    # Gloo's own lines, which its threads may write into one another ("[Gloo] Rank [Gloo] Rank 3 ...").
    lines = [line for line in other.splitlines() if line and "[Gloo]" not in line and "peer ranks" not in line]
    assert lines == [
        "jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped at the "
        "debug host (process 0); process 1/2 waited in it for the devices that quit, "
        "and ends here"
    ], other


# Process 0 also plays an attacker who can reach the coordinator's port: as soon as
# process 1 publishes device 2's stop (messages are signed, not encrypted: it reads
# which stop is whose), it writes a command for that stop straight into the store,
# unsigned; once that is refused (deleted), one signed with the wrong secret; and it
# announces a stop of its own. The host's first stop sleeps meanwhile.
FORGER = """
import json, threading, time
from jax._src import distributed
from jaxdbg.job import message_signing

def forge():
    client = distributed.global_state.client
    deadline = time.time() + 60
    def wait_until_gone(key):
        while time.time() < deadline and any(k == key for k, _ in client.key_value_dir_get(key.rsplit("/", 1)[0] + "/")):
            time.sleep(0.005)
    while time.time() < deadline:
        for key, value in client.key_value_dir_get("jaxdbg/"):
            if "/stops/p1-" in key and json.loads(json.loads(value)["body"])["info"]["device"] == 2:
                space, stop = key.split("/stops/")
                at = f"{space}/{stop}/in/0"
                unsigned = json.dumps({"op": "execute", "line": "print('FORGED unsigned')"})
                client.key_value_set(at, unsigned, allow_overwrite=True)
                wait_until_gone(at)
                wrong = message_signing.sign(b"not the secret", at,
                                             {"op": "execute", "line": "print('FORGED wrong')"})
                client.key_value_set(at, wrong, allow_overwrite=True)
                wait_until_gone(at)
                client.key_value_set(f"{space}/stops/p1-0-forged", json.dumps({"body": "{}", "mac": "0"}),
                                     allow_overwrite=True)
                print("forger done", flush=True)
                return
        time.sleep(0.005)

if PROCESS == 0:
    threading.Thread(target=forge, daemon=True).start()
"""


def test_commands_forged_into_the_store_are_refused_and_reported_once():
    commands = "__import__('time').sleep(3); c; c; p y; p y + 1; p y + 2; c; c"
    with Job(FORGER + SHARD_MAP, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert "forger done" in host
    assert "FORGED" not in host + other  # neither forged command ran
    assert other.count("refused a message in the job's store") == 1, other
    assert "refused a message in the job's store" in host  # the forged stop
    assert len(re.findall(r"Stopped at", host)) == 4, host
    for value in ("Array([ 8., 10.]", "Array([ 9., 11.]", "Array([10., 12.]"):
        assert value in host, host  # the host's own commands all ran, in order


# No collective: each process runs its own single-device jit, and only process 1 stops.
LOCAL_STEP = """
import jax.numpy as jnp
import jaxdbg

@jax.jit
def step(x):
    y = x + PROCESS
    jaxdbg.breakpoint(processes=[1])
    return y * 2

print("result", PROCESS, step(jnp.arange(3.0)).tolist(), flush=True)
"""


def test_a_breakpoint_for_some_processes_stops_only_there():
    with Job(LOCAL_STEP, 2, env=SECRET, per_process_env=host_commands("p y; c")) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert len(re.findall(r"Stopped at .*process 1/2\)", host)) == 1, host
    assert "Array([1., 2., 3.], dtype=float32)" in host
    assert "result 0 [0.0, 2.0, 4.0]" in host and "result 1 [2.0, 4.0, 6.0]" in other


def test_a_process_killed_while_its_stop_is_served_is_reported_by_the_host():
    commands = "__import__('time').sleep(300); c"
    with Job(LOCAL_STEP, 2, env={**SECRET, "HEARTBEAT_TIMEOUT": "20"}, per_process_env=host_commands(commands)) as job:
        job.wait_for(0, "(jaxdbg) __import__('time')")
        job.kill(1)
        job.wait(120)  # the host ends, it does not hang
        host = job.output(0)
    assert "process 1/2 is gone" in host, host
    assert host.count("process 1/2 is gone") <= 2  # the command's error (and its notice)


# Process 1 is the debug host: it traces the breakpoint (so it serves the job), ends
# its program and leaves the job (process 0 has not shown itself to jaxdbg yet). Only
# then does process 0 reach the breakpoint.
AFTER_THE_HOST_LEFT = """
import time
import jax.numpy as jnp
import jaxdbg

@jax.jit
def step(x):
    y = x + 1
    jaxdbg.breakpoint(processes=[0])
    return y * 2

if PROCESS == 1:
    print("host", step(jnp.arange(3.0)).tolist(), flush=True)
else:
    while "which has left the job" not in jaxdbg.distributed.status():
        time.sleep(0.1)
    print("status", jaxdbg.distributed.status(), flush=True)
    print("result", step(jnp.arange(3.0)).tolist(), flush=True)
"""


def test_a_stop_after_the_debug_host_left_ends_at_once_with_one_line():
    with Job(AFTER_THE_HOST_LEFT, 2, env={**SECRET, "JAXDBG_DEBUG_PROCESS": "1"}) as job:
        assert job.wait(120) == [1, 0], job.outputs()
        late, host = job.output(0), job.output(1)
    assert "host [2.0, 4.0, 6.0]" in host
    assert "status process 0 of 2, debug host: process 1, which has left the job; running: 0" in late
    lines = [line for line in late.splitlines() if line and not line.startswith("status ")]
    assert len(lines) == 1, late  # no traceback, no notice besides
    assert re.fullmatch(
        r"jaxdbg\.DebuggerQuit: the debug host \(process 1\) has left the job, so the "
        r"stop of process 0/2 at \S+program\.py:9 was not served and its computation "
        r"was stopped",
        lines[0],
    ), late


PRINTS = """
import jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg

mesh = Mesh(np.array(jax.devices()), ("x",))

def body(x):
    for step in range(3):
        jaxdbg.print("step {s} shard {x}", s=step, x=x, ordered=False)
        x = x + 1
    return jax.lax.psum(x, "x")

f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))
x = jax.make_array_from_callback((4,), NamedSharding(mesh, P("x")), lambda i: np.arange(4.0)[i])
jax.block_until_ready(f(x))
for i in range(5):
    jaxdbg.print("eager {i} from {p}", i=i, p=PROCESS)
from jaxdbg.ipython import magics
print(magics.status_table(), flush=True)
print("finished", PROCESS, flush=True)
"""


def test_prints_of_every_process_land_at_the_debug_host_in_order():
    with Job(PRINTS, 2, env=SECRET) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    # Process 1 printed none of its rows itself (its status table may use the words).
    assert not re.search(r"^(process \d/\d \| )?(step \d|eager \d)", other, re.M), other
    # Gloo's own log lines go to the same file from C++ and may come mid-line, before a
    # row ("[Gloo] Rank 1process 1/2 | step 1 ..."): a row is found wherever its line ends.
    # In the order process 1 printed them (eager prints, one after the other).
    assert re.findall(r"process 1/2 \| eager (\d) from 1$", host, re.M) == list("01234"), host
    assert re.findall(r"^eager (\d) from 0$", host, re.M) == list("01234"), host
    # Under shard_map each device's rows, once each (XLA orders unordered prints as it likes).
    rows = sorted(
        (int(step), int(value))
        for step, value in re.findall(r"process 1/2 \| step (\d) shard \[(\d+)\.?\]$", host, re.M)
    )
    assert rows == sorted((step, device + step) for device in (2, 3) for step in range(3)), host
    # %jaxdbg's status names the job and this process's part in it.
    assert re.search(r"job\s+process 0 of 2, debug host\s+running: 0", host), host
    assert re.search(r"job\s+process 1 of 2, debug host: process 0", other), other
    own = re.findall(r"^step \d shard .*$", host, re.M)
    assert len(own) == 6, host  # process 0's own rows, without a prefix


def test_without_the_secret_each_process_serves_its_own_stops_and_says_so_once():
    commands = {0: {"JAXDBG_COMMANDS": "c; c"}, 1: {"JAXDBG_COMMANDS": "p y; c; c"}}
    with Job(SHARD_MAP, 2, per_process_env=commands) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert re.findall(r"process (\d)/2 · device (\d)", host) == [("0", "0"), ("0", "1")], host
    assert re.findall(r"process (\d)/2 · device (\d)", other) == [("1", "2"), ("1", "3")], other
    assert "Array([ 8., 10.], dtype=float32)" in other
    for text in (host, other):
        assert text.count("is not set; set it to the same secret in every process") == 1, text


PMAP_AND_SHARDED_JIT = """
import jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg

def g(x):
    y = x + 1
    jaxdbg.breakpoint()
    return jax.lax.psum(y, "i")

out = jax.pmap(g, axis_name="i")(jnp.arange(2.0) + 10 * PROCESS)
print("pmap result", PROCESS, out.tolist(), flush=True)

mesh = Mesh(np.array(jax.devices()), ("x",))

@jax.jit
def h(x):
    z = x.sum()
    jaxdbg.breakpoint()
    return z * 2

x = jax.make_array_from_callback((8,), NamedSharding(mesh, P("x")), lambda i: np.arange(8.0)[i])
print("jit result", PROCESS, float(np.asarray(h(x).addressable_data(0))), flush=True)
"""


@pytest.mark.matrix
def test_pmap_stops_of_every_process_and_a_sharded_jit_stop_at_the_host():
    commands = "p y; c; p y; c; p y; c; p y; c; p z; c"
    with Job(PMAP_AND_SHARDED_JIT, 2, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    assert re.findall(r"process (\d)/2 · device (\d)", host) == [("0", "0"), ("0", "1"), ("1", "2"), ("1", "3")], host
    values = re.findall(r"Array\((\d+)\., dtype=float32\)", host)
    assert values == ["1", "2", "11", "12", "28"], host  # y on each device, then z
    # Under a sharded jit the callback runs once, in process 0, with the gathered value.
    assert re.search(r"in h \(breakpoint 2, hit 1; process 0/2; mesh x=4\)", host), host
    assert "pmap result 1 [26.0, 26.0]" in other and "jit result 1 56.0" in other


SHARDED_SCAN = """
import jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jaxdbg
from jaxdbg.runtime import quit_reporting

mesh = Mesh(np.array(jax.devices()), ("x",))

def step(c, x):
    c = c * 0.5 + x
    jaxdbg.breakpoint()
    return c + jnp.sum(c) * 0, None  # the next step's collective: every device waits there

f = jax.jit(lambda c, xs: jax.lax.scan(step, c, xs)[0])
start = jax.make_array_from_callback((8, 4), NamedSharding(mesh, P("x")), lambda i: np.ones((8, 4))[i])
for run in range(2):
    try:
        out = f(start, np.arange(3.0))
        print("result", run, PROCESS, float(np.asarray(out.addressable_data(0))[0, 0]), flush=True)
    except BaseException as exc:
        print("ended", run, PROCESS, quit_reporting.line_to_show(exc) or repr(exc), flush=True)
"""


def test_a_quit_at_a_sharded_jit_stop_ends_every_processs_call_and_the_next_call_runs():
    # The stop runs in process 0, on the program's first device; the devices of both
    # processes wait at the next step's sum, and all of them end at the stop.
    with Job(SHARDED_SCAN, 2, env=SECRET, per_process_env=host_commands("q; continue all")) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    for process, text in enumerate((host, other)):
        assert f"ended 0 {process} jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped" in text
        assert f"result 1 {process} 2.625" in text, text
        assert "Traceback" not in text, text
    assert host.count("Stopped at") == 2, host  # the quit stop, then the next call's first


def test_four_processes_are_served_in_process_and_device_order():
    commands = "; ".join(["c"] * 8)
    with Job(SHARD_MAP, 4, env=SECRET, per_process_env=host_commands(commands)) as job:
        assert job.wait(180) == [0, 0, 0, 0], job.outputs()
        host = job.output(0)
    places = re.findall(r"process (\d)/4 · device (\d)", host)
    assert places == [(str(d // 2), str(d)) for d in range(8)], host


def test_another_process_can_be_the_debug_host():
    env = {**SECRET, "JAXDBG_DEBUG_PROCESS": "1"}
    with Job(SHARD_MAP, 2, env=env, per_process_env={1: {"JAXDBG_COMMANDS": "p y; c; c; c; c"}}) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(1), job.output(0)
    assert re.findall(r"process (\d)/2 · device (\d)", host) == [("0", "0"), ("0", "1"), ("1", "2"), ("1", "3")], host
    assert "Array([0., 2.], dtype=float32)" in host  # process 0's shard, shown at process 1
    assert "Stopped at" not in other


SERVE_HERE = (
    """
import jaxdbg
from jax._src import distributed
client = distributed.global_state.client
if PROCESS == 1:
    jaxdbg.distributed.serve_here()
    client.key_value_set("test/served", "yes")
else:
    client.blocking_key_value_get("test/served", 60000)
print("status", PROCESS, jaxdbg.distributed.status(), flush=True)
"""
    + SHARD_MAP
)


def test_serve_here_makes_the_calling_process_the_debug_host():
    with Job(SERVE_HERE, 2, env=SECRET, per_process_env={1: {"JAXDBG_COMMANDS": "c; c; p y; c; c"}}) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host, other = job.output(1), job.output(0)
    assert "status 1 process 1 of 2, debug host; running: 0, 1" in host, host
    assert "status 0 process 0 of 2, debug host: process 1" in other, other
    assert len(re.findall(r"Stopped at", host)) == 4 and "Stopped at" not in other
    assert "Array([ 8., 10.], dtype=float32)" in host


# A backend of the host's own, driving the Session it is given as a view would.
COMPLETING_BACKEND = """
import jaxdbg

def completing(session):
    print("session", type(session).__name__, session.info.place_label(), flush=True)
    print("completions", session.complete("p y.sha"), session.complete("p zz"), flush=True)
    print("frame", session.current.function, session.current.line().strip(), flush=True)
    session.execute("up")
    print("after up", session.index, session.current.function, flush=True)
    session.execute("c")

jaxdbg.register_debugger("completing", completing, priority=0)
"""


def test_completion_and_frames_of_a_remote_stop_come_from_its_process():
    with Job(
        COMPLETING_BACKEND + SHARD_MAP, 2, env=SECRET, per_process_env={0: {"JAXDBG_BACKEND": "completing"}}
    ) as job:
        assert job.wait(120) == [0, 0], job.outputs()
        host = job.output(0)
    assert "session RemoteSession process 1/2 · device 2" in host, host
    remote = host[host.index("session RemoteSession process 1/2 · device 2") :]
    assert "completions ['p y.shape', 'p y.sharding'] []" in remote
    assert "frame body jaxdbg.breakpoint()" in remote
    assert "after up 1 <module>" in remote


def test_the_hosts_terminal_prompt_serves_a_remote_stop_and_its_end_of_input_quits_it():
    # The scripted commands answer the host's own devices; process 1's first stop goes to
    # the host's prompt (JAXDBG_BACKEND=cli), whose stdin is empty: it quits, as pdb does
    # (outside CI: under CI=true a prompt nothing can answer continues instead).
    with Job(SHARD_MAP, 2, env={**SECRET, "CI": ""}, per_process_env=host_commands("c; c")) as job:
        assert job.wait(120) == [0, 1], job.outputs()
        host, other = job.output(0), job.output(1)
    remote = host[host.index("process 1/2 · device 2") :]
    assert re.search(r"\d+ ->\s+jaxdbg.breakpoint\(\)", remote), host  # the source, drawn at the host
    assert "Quitting: the computation stops with jaxdbg.DebuggerQuit." in remote
    assert other.count("jaxdbg.DebuggerQuit: the debugger quit") == 1, other
