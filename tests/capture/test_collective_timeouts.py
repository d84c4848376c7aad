"""A stop in a program on several CPU devices may stay open: XLA would end the process
once the other devices had waited about a minute for it at their next collective."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import jaxlib
import pytest

from jaxdbg.runtime import collective_timeouts
from support.hang_guard import Script, wait_or_dump

LIFTED = collective_timeouts._jaxlib_reads_the_flags()

SHARDED_SCAN = """
import os, jax, jax.numpy as jnp, jaxdbg
print("XLA_FLAGS", os.environ.get("XLA_FLAGS"), flush=True)
from jax.sharding import NamedSharding, PartitionSpec as P
kind = getattr(getattr(jax.sharding, "AxisType", None), "Auto", None)
mesh = jax.make_mesh((8,), ("d",), **({"axis_types": (kind,)} if kind else {}))

def step(c, x):
    big = c * 0.5 + x
    jaxdbg.breakpoint(backend="cli")
    return big + jnp.sum(big) * 0, None  # a collective after the stop: the devices wait there

f = jax.jit(lambda c, xs: jax.lax.scan(step, c, xs)[0])
f(jax.device_put(jnp.ones((64, 16)), NamedSharding(mesh, P("d"))), jnp.arange(3.0)).block_until_ready()
print("done", flush=True)
"""


@pytest.mark.skipif(not LIFTED, reason="this jaxlib has no flags for its CPU collective timeouts")
def test_a_stop_in_a_program_on_several_cpu_devices_stays_open_past_xlas_timeouts():
    with Script(SHARDED_SCAN) as run:
        wait_or_dump(lambda: "Stopped at" in run.output, 120, "the stop")
        # XLA's own timeouts: 20 s to a warning ("... waiting for ..."), 40 s more to an
        # abort. Past the first, which the same XLA_FLAGS lift as the second: a wait of
        # 25 s shows the warning where the flags are XLA's defaults (checked by hand).
        time.sleep(26)
        run.send("continue all\n")
        code = run.wait(120)
        out = run.output
    assert code == 0 and "done" in out, out
    assert "waiting for" not in out  # no warning that the devices may be stuck
    flags = next(line for line in out.splitlines() if line.startswith("XLA_FLAGS"))
    for name in (collective_timeouts.WARN_FLAG, collective_timeouts.TERMINATE_FLAG):
        assert f"--{name}={collective_timeouts.SECONDS}" in flags, flags


@pytest.mark.skipif(LIFTED, reason="this jaxlib lifts the timeouts")
def test_where_the_timeouts_hold_a_stop_in_such_a_program_says_so():
    with Script(SHARDED_SCAN) as run:
        wait_or_dump(lambda: "(jaxdbg)" in run.output, 120, "the stop")
        run.send("continue all\n")
        code = run.wait(120)
        out = run.output
    assert code == 0 and "done" in out, out
    assert "XLA ends the process if they wait about a minute" in out, out


def _flags_after_import(xla_flags: str, before: str = "") -> str:
    code = f"{before}\nimport os, jaxdbg\nprint(os.environ['XLA_FLAGS'])"
    env = {**os.environ, "XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu"}
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_importing_jaxdbg_adds_the_timeouts_this_jaxlib_reads_and_keeps_the_users():
    day = collective_timeouts.SECONDS
    flags = _flags_after_import("--xla_force_host_platform_device_count=8")
    lifted = f"--{collective_timeouts.WARN_FLAG}={day} --{collective_timeouts.TERMINATE_FLAG}={day}"
    assert flags == "--xla_force_host_platform_device_count=8" + (f" {lifted}" if LIFTED else "")
    if LIFTED:  # the user's own choice stays
        mine = f"--{collective_timeouts.WARN_FLAG}=5"
        assert _flags_after_import(mine).split() == [mine, f"--{collective_timeouts.TERMINATE_FLAG}={day}"]


@pytest.mark.skipif(not LIFTED, reason="this jaxlib has no flags for its CPU collective timeouts")
def test_the_flags_are_found_in_this_jaxlibs_binary():
    # jaxlib 0.8 to 0.10.1 are searched so: an unknown flag in XLA_FLAGS aborts JAX.
    folder = Path(jaxlib.__file__).parent
    assert collective_timeouts._named_in_binaries(folder, collective_timeouts.WARN_FLAG.encode())
    assert not collective_timeouts._named_in_binaries(folder, b"xla_cpu_no_such_flag_for_jaxdbg_tests")


def test_both_warnings_go_to_stderr_not_into_the_programs_printed_lines(monkeypatch, capsys):
    from jaxdbg.runtime import notices

    monkeypatch.setattr(notices, "_said", set())
    monkeypatch.setattr(collective_timeouts, "_lifted", False)
    monkeypatch.setattr(collective_timeouts, "_in_a_gloo_job", lambda: False)
    collective_timeouts.note_at_stop(8, "cpu")
    monkeypatch.setattr(collective_timeouts, "_in_a_gloo_job", lambda: True)
    collective_timeouts.note_as_a_stop_opens()
    printed = capsys.readouterr()
    assert printed.out == ""
    assert "XLA ends the process" in printed.err and "Gloo sets up their connections" in printed.err
