"""Installing jaxdbg into Colab's runtime changes none of its packages.

Colab warns that upgrading ipykernel, IPython, tornado or pyzmq inside a live runtime
"can cause your runtime to repeatedly crash". ``.ci/colab-pins.txt`` holds Colab's
published pins; ``dev.py test`` builds ``.nox/colab_pins`` from them (JAXDBG_COLAB_PYTHON).
pip's ``--dry-run --report`` says what an install of this checkout would change there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PINS = ROOT / ".ci" / "colab-pins.txt"
# Release checks of the checkout: they read the main venv's tools, so run there only.
pytestmark = pytest.mark.main_venv


def colab_pins() -> dict[str, str]:
    pins = {}
    for line in PINS.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[_normal(name)] = version
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_floor_admits_colabs_version():
    """Works without the Colab venv: pyproject's requirements accept each pinned version."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    from packaging.requirements import Requirement

    pins = colab_pins()
    requirements = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    checked = 0
    for text in requirements:
        req = Requirement(text)
        if _normal(req.name) in pins:
            assert req.specifier.contains(pins[_normal(req.name)]), (text, pins[_normal(req.name)])
            checked += 1
    assert checked >= 8


@pytest.mark.timeout(600)
def test_installing_into_colabs_pins_changes_none_of_them(tmp_path):
    python = os.environ.get("JAXDBG_COLAB_PYTHON")
    if not python:
        pytest.skip("JAXDBG_COLAB_PYTHON is not set (dev.py test builds .nox/colab_pins and sets it)")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--report",
            str(report),
            "--quiet",
            "--disable-pip-version-check",
            "--no-input",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=540,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    would_install = {
        _normal(item["metadata"]["name"]): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    assert "jaxdbg" in would_install
    changed = {name: (version, would_install[name]) for name, version in colab_pins().items() if name in would_install}
    assert changed == {}, f"pip would change Colab's packages (pinned, new): {changed}"
    # and nothing else that Colab ships and warns about
    assert not {"tornado", "ipython", "pyzmq", "ipykernel"} & set(would_install), would_install
