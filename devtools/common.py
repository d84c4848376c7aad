"""Paths, the session lists and how child installers run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / ".nox" / "results"
REPORT = RESULTS / "nox-report.json"
DIST = ROOT / "dist"

# What `dev.py test` runs, in this order (noxfile.py's default sessions).
DEFAULT_SESSIONS = [
    "lint", "dist", "installed_wheel", "ipykernel6", "colab_pins", "newest_jax", "oldest_jax", "tests", "types",
]  # fmt: skip
# What `dev.py test --quick` runs.
QUICK_SESSIONS = ["lint", "quick", "types"]
# The venvs `test` and `setup` build before anything runs, several at a time: building is
# mostly downloading and unpacking wheels, which overlap well, while the tests then run in
# order. `types` installs after `tests` (it reads that venv's packages); `installed_wheel`
# needs dist/'s wheel first.
PARALLEL_VENVS = ["tests", "colab_pins", "newest_jax", "oldest_jax", "ipykernel6", "lint"]


def log(msg: str) -> None:
    print(f"[dev] {msg}", flush=True)


def quiet_env() -> dict[str, str]:
    """Environment for child installers: never prompt, never nag."""
    env = dict(os.environ)
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", DEBIAN_FRONTEND="noninteractive")
    env.pop("PYTHONHOME", None)
    return env


# pip lines that say nothing about this project (e.g. a machine-wide pip.conf naming an
# extra index folder that does not exist); everything else pip prints is passed through.
PIP_NOISE = re.compile(r"^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$")


def run_pip(cmd: list[str]) -> None:
    """Run a pip (or build) command with no stdin, passing its output through minus known noise."""
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=quiet_env(),
        cwd=ROOT,
        text=True,
        errors="replace",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if not PIP_NOISE.match(line.rstrip("\n")):
            sys.stdout.write(line)
            sys.stdout.flush()
    if proc.wait() != 0:
        sys.exit(f"[dev] command failed ({proc.returncode}): {' '.join(map(str, cmd))}")
