"""The one recipe that builds the sdist and the wheel (the `dist` session and
tests/release/test_packaging.py use it)."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from devtools.common import DIST, ROOT, log, run_pip


def source_files() -> list[str]:
    """The checkout's files as a clone has them: tracked plus untracked-but-not-ignored
    (without git: every file outside caches, venvs and build outputs)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        if out.returncode == 0 and out.stdout:
            return sorted({f for f in out.stdout.decode().split("\0") if f and (ROOT / f).is_file()})
    except OSError:
        pass
    skip = re.compile(
        r"(^|/)(\.git|\.nox|\.venv[^/]*|__pycache__|build|dist|site|[^/]*\.egg-info"
        r"|test-artifacts)(/|$)"
    )
    return sorted(
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not skip.search(str(p.relative_to(ROOT)))
    )


def sources_digest(*extra: str) -> str:
    """A digest of every source file (its path and its bytes) and of ``extra``: the same
    digest, the same sdist and wheel."""
    digest = hashlib.sha256()
    for text in extra:
        digest.update(text.encode() + b"\0")
    for rel in source_files():
        digest.update(rel.encode() + b"\0")
        try:
            digest.update((ROOT / rel).read_bytes())
        except OSError:  # removed meanwhile
            pass
        digest.update(b"\0")
    return digest.hexdigest()


def build_dist(py: Path, outdir: Path = DIST) -> Path:
    """Build the sdist and the wheel with `py -m build` into `outdir`; the wheel's path.

    The build runs on a copy of the source files, as a fresh clone would have them: an
    editable install's `jaxdbg.egg-info/` in the checkout lists every file and would hide
    one missing from package-data.
    """
    shutil.rmtree(outdir, ignore_errors=True)
    log(f"building the sdist and the wheel (python -m build) into {outdir} ...")
    with tempfile.TemporaryDirectory(prefix="jaxdbg-build-") as tmp:
        staged = Path(tmp) / "src"
        for rel in source_files():
            target = staged / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, target)
        run_pip([str(py), "-m", "build", "--outdir", str(outdir), str(staged)])
    wheels = sorted(outdir.glob("jaxdbg-*.whl"))
    if len(wheels) != 1 or len(list(outdir.glob("jaxdbg-*.tar.gz"))) != 1:
        sys.exit(f"[dev] python -m build did not leave one wheel and one sdist in {outdir}")
    return wheels[0]
