"""The debug host in a real ipykernel (jupyter_client), the job's other process a script:
the kernel's cell is process 0 of a 2-process job and serves process 1's stops."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

from support import panel_driver
from support.job_launcher import PREAMBLE, PROGRAMS, Job, free_port
from support.kernel_harness import KernelHarness

pytestmark = [pytest.mark.distributed, pytest.mark.kernel]

PROGRAM = (PROGRAMS / "shard_map_stop.py").read_text()
SECRET = {"JAXDBG_DEBUG_SECRET": "shared by the kernel and the scripts"}


@contextlib.contextmanager
def host_kernel(program: str, processes: int, backend: str, **env: str):
    """A kernel that has joined a job as its process 0, the others scripts running
    ``program``: yields (kernel, job)."""
    address = f"127.0.0.1:{free_port()}"
    env = {
        **SECRET,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "COORDINATOR": address,
        "NUM_PROCESSES": str(processes),
        "PROCESS_ID": "0",
        "JAXDBG_BACKEND": backend,
        **env,
    }
    with KernelHarness(env=env) as kernel:
        kernel.run("import os; os.chdir(os.environ.get('TMPDIR', '/tmp')); import jaxdbg_widgets")
        joining = kernel.execute(PREAMBLE)
        with Job(program, processes, env=SECRET, address=address, launch=list(range(1, processes))) as job:
            kernel.wait_reply(joining, timeout=120)
            yield kernel, job


def test_a_notebook_kernel_serves_the_stops_of_a_script_process():
    with host_kernel(PROGRAM, 2, "cli", JAXDBG_COMMANDS="c; c; p y; c; p y; c") as (kernel, job):
        cell = kernel.run(PROGRAM, timeout=120)
        # Every process of a job shuts down together (a barrier).
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [0], job.outputs()
        assert not done.errors, done
        other = job.output(0)
    # The breakpoint is unordered with the psum, so the kernel's cell can end before
    # process 1's stops reach it; those served after it ended print under the next cell.
    out = cell.stdout + done.stdout
    assert re.findall(r"process (\d)/2 · device (\d)", out) == [("0", "0"), ("0", "1"), ("1", "2"), ("1", "3")], (
        f"{out}\nstderr:\n{cell.stderr}\nprocess 1:\n{other}"
    )
    assert "Array([ 8., 10.], dtype=float32)" in out and "Array([12., 14.], dtype=float32)" in out
    assert "Stopped at" not in other and "result 1 [24.0, 32.0]" in other
    assert "result 0 [24.0, 32.0]" in cell.stdout


def _stop_panel(kernel, place: str) -> str:
    """The live panel whose banner names ``place`` (the one before may still be live)."""

    def look():
        for cid, st in panel_driver.panels(kernel).items():
            status = st.get("status", {})
            if not status.get("finished") and place in status.get("banner", ""):
                return cid
        return None

    try:
        return kernel.wait_for(look, 120, f"a panel at {place}")
    except TimeoutError:
        # What the kernel showed instead: each panel's banner, and what it printed.
        banners = [
            (st.get("status", {}).get("banner", "")[:200], st.get("status", {}).get("finished"))
            for st in panel_driver.panels(kernel).values()
        ]
        printed = "".join(m["content"].get("text", "") for m in kernel.messages() if m["msg_type"] == "stream")
        raise AssertionError(
            f"no live panel at {place}; panels (banner, finished): {banners}; "
            f"the kernel printed:\n{printed[-4000:]}\nits log:\n{kernel.kernel_log()[-4000:]}"
        ) from None


def _rows(kernel, cid: str) -> dict[str, dict]:
    return {row["name"]: row for row in panel_driver.state(kernel, cid)["locals_page"]["rows"]}


def _at_process_1s_first_stop(kernel):
    """Run PROGRAM in the kernel, continue its own two stops in their panels, and return
    the cell and the panel of process 1's first stop (device 2)."""
    cell = kernel.execute(PROGRAM)
    for device in ("0", "1"):
        panel_driver.press(kernel, "continue", _stop_panel(kernel, f"process 0/2 · device {device}"))
    return cell, _stop_panel(kernel, "process 1/2 · device 2")


def test_the_debug_hosts_panel_serves_another_processs_stop():
    with host_kernel(PROGRAM, 2, "widgets") as (kernel, job):
        cell, cid = _at_process_1s_first_stop(kernel)
        assert "Stopped at" in panel_driver.state(kernel, cid)["status"]["banner"]
        # The locals table of the other process's stop: its values summarised there.
        rows = kernel.wait_for(lambda: (r := _rows(kernel, cid)) and "y" in r and r, 60, "locals rows")
        assert rows["x"]["array"] == "float32[2]" and rows["y"]["array"] == "float32[2]", rows
        assert "min=8" in rows["y"]["summary"] and "max=10" in rows["y"]["summary"], rows
        assert not rows["y"]["expandable"] and rows["y"]["picture"]  # an array: pictured by its owner
        panel_driver.submit(kernel, "p y", cid=cid)
        panel_driver.wait_log(kernel, r"Array\(\[ 8\., 10\.\], dtype=float32\)", cid)
        panel_driver.submit(kernel, "y", pretty=True, cid=cid)
        panel_driver.wait_log(kernel, r"pp y\n.*8\., 10\.", cid)
        heading = panel_driver.state(kernel, cid)["source"]["heading"]
        panel_driver.press(kernel, "up", cid)
        kernel.wait_for(lambda: panel_driver.state(kernel, cid).get("selected") == 1, 60, "frame 1")
        assert panel_driver.state(kernel, cid)["source"]["heading"] != heading
        # The outer frame's table comes from the owner too (its frame, not the body's).
        kernel.wait_for(lambda: panel_driver.state(kernel, cid)["locals_page"]["frame"] == 1, 60, "frame 1's locals")
        up_rows = _rows(kernel, cid)
        assert "y" not in up_rows and "mesh" in up_rows, up_rows
        # The job's global input: its statistics would need every process, so none.
        assert up_rows["x"]["summary"].startswith("shards on several processes"), up_rows
        panel_driver.press(kernel, "down", cid)
        kernel.wait_for(
            lambda: panel_driver.state(kernel, cid)["locals_page"]["frame"] == 0 and "y" in _rows(kernel, cid),
            60,
            "frame 0's locals again",
        )
        panel_driver.press(kernel, "continue", cid)
        last = _stop_panel(kernel, "process 1/2 · device 3")
        rows = kernel.wait_for(lambda: (r := _rows(kernel, last)) and "y" in r and r, 60, "device 3's locals")
        assert "min=12" in rows["y"]["summary"], rows
        panel_driver.press(kernel, "continue", last)
        kernel.wait_reply(cell, timeout=120)
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [0], job.outputs()
        assert not done.errors, done
        other = job.output(0)
    assert "Stopped at" not in other and "result 1 [24.0, 32.0]" in other
    assert "result 0 [24.0, 32.0]" in kernel.result(cell).stdout


# Each script process waits until the kernel serves the job, then stops on both of its
# devices in a pmap of its own (no collective with the kernel's process).
LOCAL_PMAP_STOP = """
import jax.numpy as jnp
import jaxdbg
from jax._src import distributed
distributed.global_state.client.blocking_key_value_get("test/served", 60000)

def g(x):
    y = x + 1
    jaxdbg.breakpoint()
    return y * 2

out = jax.pmap(g, devices=jax.local_devices())(jnp.arange(2.0) + 10 * PROCESS)
print("result", PROCESS, out.tolist(), flush=True)
"""

SERVE_HERE_AND_SAY_SO = """
import jaxdbg.distributed, jaxdbg_widgets
from jax._src import distributed
jaxdbg.distributed.serve_here()
distributed.global_state.client.key_value_set("test/served", "yes")
"""


def test_interrupting_an_idle_debug_host_kernel_ends_the_remote_stop_and_releases_the_others():
    with host_kernel(LOCAL_PMAP_STOP, 3, "widgets") as (kernel, job):
        served = kernel.run(SERVE_HERE_AND_SAY_SO, timeout=120)
        assert not served.errors, served

        # The kernel is idle now; the scripts' four stops come to its panel, one shown
        # and three waiting behind it (process 1's other device, process 2's two).
        def shown_with_the_rest_waiting():
            for cid, st in panel_driver.panels(kernel).items():
                banner = st.get("status", {}).get("banner", "")
                if (
                    not st["status"].get("finished")
                    and "/3 · device" in banner
                    and "3 more breakpoints waiting" in banner
                ):
                    return cid
            return None

        cid = kernel.wait_for(shown_with_the_rest_waiting, 120, "a remote stop with 3 waiting")
        kernel.interrupt()  # the notebook's stop button
        for i in (0, 1):  # the scripts started here, processes 1 and 2
            job.wait_for(i, "jaxdbg.DebuggerQuit: the debugger quit", 120)
        kernel.wait_for(lambda: panel_driver.closed(kernel, cid), 60, "the interrupted panel to end")
        after = kernel.run("print('next cell', 1 + 1)", timeout=120)
        assert "next cell 2" in after.stdout and not after.errors, after
        assert not [c for c, st in panel_driver.panels(kernel).items() if not st.get("status", {}).get("finished")], (
            "another stop is shown"
        )
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [1, 1], job.outputs()
        assert not done.errors, done
        outputs = [job.output(0), job.output(1)]
    for i, text in zip((1, 2), outputs):
        assert (
            text.count(
                f"process {i}/3: the debug host (process 0) was interrupted; this stop ends with jaxdbg.DebuggerQuit"
            )
            == 1
        ), text
        assert text.count("jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped") == 1, text
        assert "Stopped at" not in text and f"result {i}" not in text, text


def test_interrupting_the_debug_hosts_running_cell_at_a_remote_stop_ends_it_there_too():
    # The kernel's cell runs its part of the job (waiting in the psum) while its panel
    # shows process 1's stop: the interrupt ends that stop, not the kernel's cell.
    with host_kernel(PROGRAM, 2, "widgets") as (kernel, job):
        cell, cid = _at_process_1s_first_stop(kernel)
        kernel.interrupt()
        job.wait_for(0, "jaxdbg.DebuggerQuit: the debugger quit", 120)
        kernel.wait_for(lambda: panel_driver.closed(kernel, cid), 60, "the interrupted panel to end")
        kernel.wait_reply(cell, timeout=120)  # the cell ends (its result is the job's business)
        after = kernel.run("print('next cell', 1 + 1)", timeout=120)
        assert "next cell 2" in after.stdout and not after.errors, after
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [1], job.outputs()
        assert not done.errors, done
        other = job.output(0)
    assert other.count("process 1/2: the debug host (process 0) was interrupted") == 1, other
    assert "result 1" not in other, other


# Process 1's stop, whose locals the kernel's panel opens: a pytree and arrays.
ARRAYS_STOP = """
import jax.numpy as jnp
import jaxdbg
from jax._src import distributed
distributed.global_state.client.blocking_key_value_get("test/served", 60000)

@jax.jit
def activations(x):
    act = jnp.log(x)                      # NaN where x < 0, -inf at 0
    cube = jnp.arange(2 * 3 * 4.0).reshape(2, 3, 4) + PROCESS
    params = {"w": x.astype(jnp.bfloat16), "on": x > 0}
    jaxdbg.breakpoint()
    return act

x = jnp.linspace(-1.0, 1.0, 64).reshape(8, 8).at[4, 4].set(0.0)
print("done", PROCESS, activations(x).shape, flush=True)
"""


def test_the_hosts_panel_opens_the_rows_of_another_processs_stop():
    with host_kernel(ARRAYS_STOP, 2, "widgets") as (kernel, job):
        assert not kernel.run(SERVE_HERE_AND_SAY_SO, timeout=120).errors
        cid = _stop_panel(kernel, "process 1/2")
        rows = kernel.wait_for(lambda: (r := _rows(kernel, cid)) and "params" in r and r, 60, "locals rows")
        # Rows open as a stop of the kernel's own would: the owner makes what they show.
        assert rows["act"]["picture"] and rows["cube"]["picture"] and rows["params"]["expandable"], rows
        frame = panel_driver.state(kernel, cid)["locals_page"]["frame"]

        kernel.send_custom(cid, {"type": "picture", "frame": frame, "path": ["act"]})
        msg, buffers = panel_driver.answer(kernel, cid, "picture", 0)
        assert msg["picture"]["rows"] == 8 and len(buffers) == 1, msg
        codes = np.frombuffer(buffers[0], np.uint8).reshape(8, 8)
        assert codes[0, 0] == 252 and codes[4, 4] == 254 and codes[7, 7] == 255  # NaN, -inf, log(1)

        kernel.send_custom(cid, {"type": "view", "frame": frame, "path": ["cube"], "axes": None, "indices": {"0": 1}})
        msg, buffers = panel_driver.answer(kernel, cid, "view", 0)
        # Process 1's cube (its values are 1 .. 24), drawn from there.
        assert msg["picture"]["index"] == [1, None, None] and "min=1 max=24" in msg["stats"], msg
        values = np.frombuffer(buffers[1], msg["picture"]["values"]).reshape(3, 4)
        assert values.tolist() == (np.arange(24.0).reshape(2, 3, 4)[1] + 1).tolist()

        kernel.send_custom(cid, {"type": "expand", "frame": frame, "path": ["params"]})
        children, _ = panel_driver.answer(kernel, cid, "children", 0)
        assert children["total"] == 2 and sorted(r["array"] for r in children["rows"]) == [
            "bfloat16[8,8]",
            "bool[8,8]",
        ], children
        w = [r["name"] for r in children["rows"]].index("'w'")
        kernel.send_custom(cid, {"type": "view", "frame": frame, "path": ["params", w], "axes": None, "indices": None})
        msg, _ = panel_driver.answer(kernel, cid, "view", 1)
        assert msg["name"] == "'w'" and msg["picture"]["dtype"] == "bfloat16", msg
        assert msg["picture"]["classes"]["zero"] == 1

        kernel.send_custom(cid, {"type": "view", "frame": frame, "path": ["cube"], "axes": [1, 1], "indices": None})
        msg, _ = panel_driver.answer(kernel, cid, "view", 2)
        assert "two different axes" in msg["error"] and msg["picture"] is None
        kernel.send_custom(cid, {"type": "expand", "frame": frame, "path": ["nope"]})
        panel_driver.wait_log(kernel, r"no local named 'nope'", cid)

        panel_driver.press(kernel, "continue", cid)
        job.wait_for(0, "done 1 (8, 8)", 120)
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [0], job.outputs()
        assert not done.errors, done


def _watch_numbers(kernel, cid: str) -> list[float | None]:
    rows = panel_driver.state(kernel, cid)["watches"]["watches"]
    return [v["number"] for v in rows[0]["values"]] if rows else []


def test_the_hosts_panel_watches_another_processs_stops():
    with host_kernel(PROGRAM, 2, "widgets") as (kernel, job):
        cell, remote = _at_process_1s_first_stop(kernel)
        panel_driver.submit(kernel, "watch y.sum()", cid=remote)  # the panel's Watch box
        # y is x * 2 on device 2's shard [4, 5]; its value was taken in process 1.
        kernel.wait_for(lambda: _watch_numbers(kernel, remote) == [18.0], 60, "device 2's value")
        number = panel_driver.state(kernel, remote)["watches"]["breakpoint"]
        panel_driver.press(kernel, "continue all", remote)
        kernel.wait_reply(cell, timeout=120)
        done = kernel.run("jax.distributed.shutdown()", timeout=120)
        assert job.wait(120) == [0], job.outputs()
        assert not done.errors, done
        # Device 3's stop was passed by continue all, its value taken in process 1 all the same.
        check = kernel.run(
            "from jaxdbg.engine import watches\n"
            f"print([v.number for w in watches.LIVE.watches({number}) for v in w.values])"
        )
    assert check.stdout.strip() == "[18.0, 26.0]", check
