"""The debug host in a real ipykernel (jupyter_client), the job's other process a script:
the kernel's cell is process 0 of a 2-process job and serves process 1's stops."""

from __future__ import annotations

import re

import pytest

from support.job_launcher import PREAMBLE, PROGRAMS, Job, free_port
from support.kernel_harness import KernelHarness

pytestmark = [pytest.mark.distributed, pytest.mark.kernel]

PROGRAM = (PROGRAMS / "shard_map_stop.py").read_text()


def test_a_notebook_kernel_serves_the_stops_of_a_script_process():
    address = f"127.0.0.1:{free_port()}"
    secret = {"JAXDBG_DEBUG_SECRET": "shared by the kernel and the script"}
    env = {**secret, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "COORDINATOR": address,
           "NUM_PROCESSES": "2", "PROCESS_ID": "0", "JAXDBG_BACKEND": "cli",
           "JAXDBG_COMMANDS": "c; c; p y; c; p y; c"}
    with KernelHarness(env=env) as kernel:
        kernel.run("import os; os.chdir(os.environ.get('TMPDIR', '/tmp'))")
        joining = kernel.execute(PREAMBLE)
        with Job(PROGRAM, 2, env=secret, address=address, launch=[1]) as job:
            kernel.wait_reply(joining, timeout=120)
            cell = kernel.run(PROGRAM, timeout=120)
            # Every process of a job shuts down together (a barrier).
            done = kernel.run("jax.distributed.shutdown()", timeout=120)
            assert job.wait(120) == [0], job.outputs()
            assert not done.errors, done
            other = job.output(0)
    out = cell.stdout
    assert re.findall(r"process (\d)/2 · device (\d)", out) == [
        ("0", "0"), ("0", "1"), ("1", "2"), ("1", "3")], out
    assert "Array([ 8., 10.], dtype=float32)" in out and "Array([12., 14.], dtype=float32)" in out
    assert "Stopped at" not in other and "result 1 [24.0, 32.0]" in other
    assert "result 0 [24.0, 32.0]" in out
