"""The package users install: what the wheel and the sdist hold and what they declare.

An editable install reads files straight from the checkout, so a file left out of the
package (the panel's ``panel.js`` once was) is invisible to every other test run from it.
These tests read the built artifacts themselves: the ones ``dev.py test`` built into
``$JAXDBG_DIST_DIR``, or, without it, a fresh ``python -m build`` into a temporary folder.
"""

from __future__ import annotations

import email.parser
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import jaxdbg

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("jaxdbg", "jaxdbg_widgets")
# Release checks of the checkout: they read the main venv's tools, so run there only.
pytestmark = pytest.mark.main_venv


def _build_dist(python: Path, out: Path) -> None:
    """devtools.build's recipe, the one the `dist` session uses (devtools/ sits beside dev.py)."""
    sys.path.insert(0, str(ROOT))
    try:
        from devtools.build import build_dist
    finally:
        sys.path.remove(str(ROOT))
    build_dist(python, out)


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory) -> Path:
    given = os.environ.get("JAXDBG_DIST_DIR")
    if given:
        return Path(given)
    if importlib.util.find_spec("build") is None:
        pytest.skip("the build package is not installed (python3 dev.py test installs it)")
    out = tmp_path_factory.mktemp("dist")
    _build_dist(Path(sys.executable), out)
    return out


def _one(dist_dir: Path, pattern: str) -> Path:
    found = sorted(dist_dir.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {dist_dir}, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def wheel(dist_dir) -> Path:
    return _one(dist_dir, "jaxdbg-*.whl")


@pytest.fixture(scope="module")
def sdist(dist_dir) -> Path:
    return _one(dist_dir, "jaxdbg-*.tar.gz")


def package_files() -> list[str]:
    """Every file of the two packages in the checkout (tracked by git when it can say)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--", *PACKAGES], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
        ).stdout
        files = [line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        files = []
    if not files:  # an sdist or an export without git: every file but caches
        files = [
            str(p.relative_to(ROOT))
            for pkg in PACKAGES
            for p in (ROOT / pkg).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        ]
    # A file deleted in the working tree but not yet in git's index is not shipped.
    return sorted(f for f in files if (ROOT / f).is_file())


def test_the_checkout_has_runtime_data_files():
    """The check below must have non-Python files to look for, or it proves nothing."""
    data = [f for f in package_files() if not f.endswith(".py")]
    assert "jaxdbg_widgets/static/panel.js" in data and "jaxdbg_widgets/static/panel.css" in data, data


def test_wheel_holds_every_package_file(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    missing = [f for f in package_files() if f not in names]
    assert not missing, f"{wheel.name} lacks {missing}: list them in pyproject.toml's package-data"


def test_sdist_holds_every_package_file(sdist):
    with tarfile.open(sdist) as tf:
        prefix = tf.getnames()[0].split("/")[0]
        names = {n[len(prefix) + 1 :] for n in tf.getnames()}
    missing = [f for f in package_files() if f not in names]
    assert not missing, f"{sdist.name} lacks {missing}: list them in pyproject.toml's package-data"
    for needed in ("LICENSE", "README.md", "pyproject.toml"):
        assert needed in names, f"{sdist.name} lacks {needed}"


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(zf.read(meta).decode())


def test_wheel_metadata_declares_license_urls_and_the_one_version(wheel):
    meta = wheel_metadata(wheel)
    assert meta["Version"] == jaxdbg.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    for label in ("Homepage", "Documentation", "Source", "Issues", "Changelog"):
        assert urls.get(label, "").startswith("https://"), (label, urls)
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "Typing :: Typed" in (meta.get_all("Classifier") or [])


def test_wheel_ships_license_typing_markers_and_the_backend_entry_point(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_text = zf.read(entry_points).decode()
    assert "jaxdbg/py.typed" in names and "jaxdbg_widgets/py.typed" in names
    assert any(re.search(r"\.dist-info/(licenses/)?LICENSE$", n) for n in names), sorted(names)
    assert re.search(r"^\[jaxdbg\.backends\]\s*\nwidgets\s*=\s*jaxdbg_widgets\s*$", entry_text, re.M), entry_text


def test_version_is_written_in_one_place():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic\s*=\s*\[\s*"version"\s*\]', pyproject, re.M), "pyproject.toml pins a version"
    assert not re.search(r'^version\s*=\s*"', pyproject, re.M)
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", jaxdbg.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {jaxdbg.__version__}" in changelog, "CHANGELOG.md has no entry for this version"


def test_twine_check_passes(dist_dir, wheel, sdist):
    proc = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0 and "No module named twine" in proc.stderr:
        pytest.skip("twine is not installed (python3 dev.py test installs it)")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_license_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
