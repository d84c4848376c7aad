"""``python -m jaxdbg.demo`` stops in the terminal debugger and finishes after ``c``."""

import os
import subprocess
import sys


def _run_demo(commands: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JAXDBG_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "jaxdbg.demo"], input=commands, text=True,
                          capture_output=True, timeout=180, env=env)


def test_demo_stops_and_continues():
    done = _run_demo("p hidden.shape\nlocals\nup\nwhere\nc\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Stopped at" in out and "in mlp" in out
    assert "(16, 8)" in out
    assert "hidden" in out and "float32[16,8]" in out
    assert "loss_fn" in out and "train_step" in out
    assert "loss after the step:" in out


def test_demo_quit_is_one_line():
    done = _run_demo("q\n")
    assert done.returncode != 0
    assert "jaxdbg.DebuggerQuit" in done.stderr
    assert "CpuCallback" not in done.stderr and "Traceback" not in done.stderr
