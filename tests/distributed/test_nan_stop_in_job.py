"""%jaxdbg infs on in a jax.distributed job: real local processes on CPU (gloo
collectives, 2 devices each); an Inf made on one device of a shard_map, or of a sharded
jit, over the whole job stops once, in the process that holds that device, named in the banner and served at
the debug host (process 0) by scripted commands (JAXDBG_COMMANDS)."""

from __future__ import annotations

import re

import pytest

from support.job_launcher import PROGRAMS, Job

pytestmark = [pytest.mark.distributed, pytest.mark.matrix]  # JAX's NaN checks, per version

SECRET = {"JAXDBG_DEBUG_SECRET": "a secret only the launcher knows"}

PROGRAM = (PROGRAMS / "shard_map_inf.py").read_text()


def test_an_inf_on_another_processs_device_stops_at_the_debug_host_naming_that_process():
    commands = "where; up; p x.shape; c"
    with Job(PROGRAM, 2, env=SECRET, per_process_env={0: {"JAXDBG_COMMANDS": commands}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    banners = re.findall(r"Stopped at .*", host)
    assert len(banners) == 1, host
    assert re.fullmatch(
        r"Stopped at \S+program\.py:\d+ in body "
        r"\(process 1/2 · device 2; Inf made by log\)",
        banners[0],
    ), banners
    assert "(8,)" in host  # up: process 1's module frame, asked from the host
    assert "Stopped at" not in other  # served at the host, not in process 1 itself
    for i, text in ((0, host), (1, other)):  # JAX's error is raised in every process, after the stop
        assert f"raised {i} FloatingPointError" in text, text


def test_an_inf_on_one_device_of_a_sharded_jit_stops_once_in_the_process_holding_it():
    program = (PROGRAMS / "sharded_jit_inf.py").read_text()
    with Job(program, 2, env=SECRET, per_process_env={0: {"JAXDBG_COMMANDS": "where; c"}}) as job:
        assert job.wait(180) == [0, 0], job.outputs()
        host, other = job.output(0), job.output(1)
    banners = re.findall(r"Stopped at .*", host)
    assert len(banners) == 1, host  # not once more for process 0, which holds no Inf
    # Named by its JAX id, as a sharded jit's print rows are: process 1's first device.
    device = re.search(r"first device (\d+)", other).group(1)
    assert re.fullmatch(
        r"Stopped at \S+program\.py:\d+ in body "
        rf"\(process 1/2 · device {device}; Inf made by log\)",
        banners[0],
    ), banners
    assert "Stopped at" not in other
    for i, text in ((0, host), (1, other)):
        assert f"raised {i} FloatingPointError" in text, text
