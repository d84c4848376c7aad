"""replay in a real ipykernel: the panel's Replay, Next and Continue buttons on a stop in
the 437th iteration of a jitted scan, driven with the comm messages a browser sends."""

from __future__ import annotations

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, live_panel, log_text, press, state, submit, wait_log, wait_panel, wait_source

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli'] devices 8")

SCAN_CELL = """
def body(carry, x):
    total, i = carry
    print("body runs", i)
    total = total + x * i
    jaxdbg.breakpoint_if(i == 437)
    return (total, i + 1), total

@jax.jit
def run(xs):
    return jax.lax.scan(body, (jnp.float32(0), jnp.int32(0)), xs)

(final, _), _ = run(jnp.ones(1000))
print("final", float(final))
"""


@pytest.mark.timeout(300)
def test_replay_of_a_scan_iteration_from_the_panel(kernel):
    mid = kernel.execute(SCAN_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    wait_source(kernel, r"in body$")
    press(kernel, "replay")
    src = wait_source(kernel, r"in body  \[replay\]$")
    assert src["current"] == 2  # the body's first line, run again eagerly
    frames = state(kernel, cid)["frames"]
    assert frames[0]["replay"] and frames[0]["function"] == "body"
    assert frames[1]["function"] == "body" and not frames[1]["replay"]
    assert state(kernel, cid)["status"]["replaying"]
    wait_log(kernel, r"This runs your Python again")

    press(kernel, "next")
    press(kernel, "next")  # the print runs again: its text is the command's
    wait_log(kernel, r"body runs 437")
    submit(kernel, "p i")
    wait_log(kernel, r"\(jaxdbg\) p i\nArray\(437, dtype=int32\)")
    press(kernel, "continue")  # on to the stop's own line, in the replay
    src = wait_source(kernel, r"in body  \[replay\]$")
    submit(kernel, "p total")
    wait_log(kernel, r"\(jaxdbg\) p total\nArray\(95703\., dtype=float32\)")
    press(kernel, "continue")  # to the end of the body: back at the stop
    wait_log(kernel, r"The replay of body returned .*Back at the stop")
    wait_source(kernel, r"in body$")
    assert not state(kernel, cid)["status"]["replaying"]
    submit(kernel, "p total")
    kernel.wait_for(
        lambda: log_text(state(kernel, cid)).count("(jaxdbg) p total\nArray(95703., dtype=float32)") == 2,
        60,
        "the stop's own total",
    )

    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "final 499500.0" in done.stdout, done
    assert done.stdout.count("body runs") == 1  # traced once; the replay's print went to its log entry


HANG_CELL = """
import pathlib, time

@jax.jit
def f(x):
    jaxdbg.breakpoint()
    if not isinstance(x, jax.core.Tracer):  # only in the replay: never ends by itself
        pathlib.Path(MARKER).touch()
        while True:
            time.sleep(0.01)
    return x * 2

print("result", float(f(jnp.float32(21))))
"""


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_the_kernels_interrupt_ends_a_hanging_replay_and_the_stop_goes_on(kernel, tmp_path):
    marker = tmp_path / "replay-hangs"
    mid = kernel.execute(f"MARKER = {str(marker)!r}\n" + HANG_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    wait_source(kernel, r"in f$")
    press(kernel, "replay")
    wait_source(kernel, r"in f  \[replay\]$")
    assert state(kernel, cid)["status"]["replaying"]
    press(kernel, "continue")  # into the endless loop
    kernel.wait_for(marker.exists, 60, "the replay's endless loop")
    kernel.interrupt()
    wait_log(kernel, r"The replay was interrupted\. Back at the stop")
    wait_source(kernel, r"in f$")
    submit(kernel, "p x * 3")
    wait_log(kernel, r"\(jaxdbg\) p x \* 3\nArray\(63\., dtype=float32\)")
    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "result 42.0" in done.stdout, done


SHARD_CELL = """
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P
shard_map = getattr(jax, "shard_map", None) or __import__(
    "jax.experimental.shard_map", fromlist=["shard_map"]).shard_map

def normalise(v):
    mid = v - v.mean()
    return mid / 2

def shard_fn(block):
    scaled = normalise(block) + 1
    jaxdbg.breakpoint_if(block[0] == 6)
    return scaled

mesh = Mesh(np.array(jax.devices()[:4]), ("d",))
f = jax.jit(shard_map(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P("d")))
print("result", f(jnp.arange(8.0)).tolist())
"""


@pytest.mark.timeout(300)
def test_replay_of_a_shard_map_shard_steps_into_a_helper_from_the_panel(kernel):
    mid = kernel.execute(SHARD_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    wait_source(kernel, r"in shard_fn$")
    assert "device 3" in state(kernel, cid)["status"]["banner"]
    press(kernel, "replay")
    wait_log(kernel, r"\(device 3\), on \S*3\. This runs your Python again")  # and runs there
    press(kernel, "step")
    wait_source(kernel, r"in normalise  \[replay\]$")
    press(kernel, "next")
    submit(kernel, "p mid")  # exists only while normalise runs
    wait_log(kernel, r"\(jaxdbg\) p mid\nArray\(\[-0\.5,  0\.5\], dtype=float32\)")
    press(kernel, "continue")
    wait_source(kernel, r"in shard_fn  \[replay\]$")
    press(kernel, "continue")
    wait_log(kernel, r"The replay of shard_fn returned Array\(\[0\.75, 1\.25\], dtype=float32\)")
    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "result [0.75, 1.25, 0.75, 1.25, 0.75, 1.25, 0.75, 1.25]" in done.stdout, done
