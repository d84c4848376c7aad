"""Watches in the debug host's panel (a real ipykernel, process 0 of a 2-process job) at
the script process's stops: their values are taken in that process."""

from __future__ import annotations

import pytest

from support.job_launcher import PREAMBLE, PROGRAMS, Job, free_port
from support import panel_driver
from support.kernel_harness import KernelHarness

pytestmark = [pytest.mark.distributed, pytest.mark.kernel]

PROGRAM = (PROGRAMS / "shard_map_stop.py").read_text()


def _live_panel_at(kernel, place: str) -> str:
    def look():
        for cid, st in panel_driver.panels(kernel).items():
            status = st.get("status", {})
            if not status.get("finished") and place in status.get("banner", ""):
                return cid
        return None
    return kernel.wait_for(look, 120, f"a panel at {place}")


def _watch_numbers(kernel, cid: str) -> list[float | None]:
    rows = panel_driver.state(kernel, cid)["watches"]["watches"]
    return [v["number"] for v in rows[0]["values"]] if rows else []


def test_the_hosts_panel_watches_another_processs_stops():
    address = f"127.0.0.1:{free_port()}"
    secret = {"JAXDBG_DEBUG_SECRET": "shared by the kernel and the script"}
    env = {**secret, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "COORDINATOR": address,
           "NUM_PROCESSES": "2", "PROCESS_ID": "0", "JAXDBG_BACKEND": "widgets"}
    with KernelHarness(env=env) as kernel:
        kernel.run("import os; os.chdir(os.environ.get('TMPDIR', '/tmp')); import jaxdbg_widgets")
        joining = kernel.execute(PREAMBLE)
        with Job(PROGRAM, 2, env=secret, address=address, launch=[1]) as job:
            kernel.wait_reply(joining, timeout=120)
            cell = kernel.execute(PROGRAM)
            for device in ("0", "1"):  # the kernel's own stops first
                panel_driver.press(kernel, "continue", _live_panel_at(kernel, f"process 0/2 · device {device}"))
            remote = _live_panel_at(kernel, "process 1/2 · device 2")
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
        check = kernel.run("from jaxdbg.engine import watches\n"
                           f"print([v.number for w in watches.LIVE.watches({number}) for v in w.values])")
    assert check.stdout.strip() == "[18.0, 26.0]", check
