#!/usr/bin/env python3
"""Set up the development environment and run things in it.

    python3 dev.py lab [jupyter lab args]   set up .venv, open notebooks/quickstart.ipynb
    python3 dev.py test [pytest args]       set up .venv, .venv-ipykernel6 and Chromium, run pytest

Standard library only, so it runs with any Python >= 3.10 on a fresh machine.
Virtual environments are rebuilt only when pyproject.toml (or the set of packages in the
checkout) changed since the last install; a stamp file in each venv records that.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if sys.version_info < (3, 10):
    sys.exit(f"[dev] Python >= 3.10 is required, this is {sys.version.split()[0]}")

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
VENV_IPYKERNEL6 = ROOT / ".venv-ipykernel6"
STAMP_NAME = ".jaxdbg-dev-stamp"
# Bump to force every checkout to reinstall after a change to how venvs are built.
STAMP_VERSION = "1"

MAIN_SPEC = [".[notebook,test]"]
IPYKERNEL6_SPEC = [".", "ipykernel==6.29.*", "jupyter_client", "ipywidgets"]

CHROMIUM = Path("/usr/bin/chromium")
QUICKSTART = Path("notebooks") / "quickstart.ipynb"
# The import packages that pyproject.toml's package finder looks for; an editable
# install made before one of them existed does not see it, so their presence is hashed.
PACKAGES = ("jaxdbg", "jaxdbg_widgets")


def log(msg: str) -> None:
    print(f"[dev] {msg}", flush=True)


def notice(msg: str) -> None:
    bar = "!" * 78
    print(f"\n{bar}\n[dev] {msg}\n{bar}\n", file=sys.stderr, flush=True)


def quiet_env() -> dict[str, str]:
    """Environment for child installers: never prompt, never nag."""
    env = dict(os.environ)
    env.update(
        PIP_NO_INPUT="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        DEBIAN_FRONTEND="noninteractive",
    )
    env.pop("PYTHONHOME", None)
    return env


# pip lines that say nothing about this project (e.g. a machine-wide pip.conf naming an
# extra index folder that does not exist); everything else pip prints is passed through.
PIP_NOISE = re.compile(r"^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$")


def run_pip(cmd: list[str]) -> None:
    """Run a pip command with no stdin, passing its output through minus known noise."""
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=quiet_env(), cwd=ROOT, text=True, errors="replace",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if not PIP_NOISE.match(line.rstrip("\n")):
            sys.stdout.write(line)
            sys.stdout.flush()
    if proc.wait() != 0:
        sys.exit(f"[dev] command failed ({proc.returncode}): {' '.join(map(str, cmd))}")


@contextlib.contextmanager
def checkout_lock():
    """Serialize venv set-up between concurrent dev.py runs in this checkout."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no locking
        yield
        return
    key = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"jaxdbg-dev-{key}.lock"
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("waiting for another dev.py run in this checkout to finish its set-up ...")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def stamp_for(spec: list[str]) -> str:
    h = hashlib.sha256()
    h.update(STAMP_VERSION.encode())
    h.update(repr(spec).encode())
    h.update((ROOT / "pyproject.toml").read_bytes())
    for pkg in PACKAGES:
        h.update(f"{pkg}:{(ROOT / pkg / '__init__.py').is_file()}".encode())
    return h.hexdigest()


def venv_works(venv: Path) -> bool:
    py = venv_python(venv)
    if not py.exists():
        return False
    try:
        out = subprocess.run(
            [str(py), "-c", "import sys; print(sys.prefix)"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and Path(out.stdout.strip()).resolve() == venv.resolve()


def ensure_venv(venv: Path, spec: list[str]) -> Path:
    """Create `venv` if missing or broken and pip-install `spec` if it changed."""
    stamp_file = venv / STAMP_NAME
    want = stamp_for(spec)
    if stamp_file.is_file() and stamp_file.read_text().strip() == want and venv_works(venv):
        return venv_python(venv)

    started = time.monotonic()
    if not venv_works(venv):
        if venv.exists():
            log(f"removing broken {venv.name} ...")
            shutil.rmtree(venv)
        log(f"creating {venv.name} with {sys.executable} ({sys.version.split()[0]}) ...")
        proc = subprocess.run(
            [sys.executable, "-m", "venv", str(venv)],
            stdin=subprocess.DEVNULL, env=quiet_env(), cwd=ROOT,
        )
        if proc.returncode != 0 or not venv_python(venv).exists():
            shutil.rmtree(venv, ignore_errors=True)
            sys.exit(
                "[dev] could not create a virtual environment; on Debian/Ubuntu install "
                "the venv module first: apt-get install python3-venv"
            )
    else:
        log(f"{venv.name} is out of date (pyproject.toml or packages changed) ...")

    stamp_file.unlink(missing_ok=True)
    log(f"installing {' '.join(spec)} into {venv.name} (pip, this can take a few minutes) ...")
    run_pip([
        str(venv_python(venv)), "-m", "pip", "install",
        "--disable-pip-version-check", "-q", "-e", *spec,
    ])
    stamp_file.write_text(want + "\n")
    log(f"{venv.name} ready ({time.monotonic() - started:.0f}s)")
    return venv_python(venv)


def chromium_works(path: Path) -> bool:
    if not (path.is_file() and os.access(path, os.X_OK)):
        return False
    try:
        out = subprocess.run(
            [str(path), "--version"], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "chrom" in out.stdout.lower()


def ensure_chromium() -> Path | None:
    """Return a usable Chromium, installing Debian's package when we can; else None."""
    override = os.environ.get("JAXDBG_CHROMIUM")
    if override and Path(override).is_file():
        return Path(override)
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM

    reason = None
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        reason = f"{CHROMIUM} is missing and we are not root (install it: apt-get install chromium)"
    elif not shutil.which("apt-get"):
        reason = f"{CHROMIUM} is missing and apt-get is not available"
    else:
        log("installing chromium with apt-get (needed by the browser tests) ...")
        started = time.monotonic()
        env = quiet_env()
        ok = True
        for cmd in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
        ):
            if subprocess.run(cmd, stdin=subprocess.DEVNULL, env=env).returncode != 0:
                ok = False
                break
        if not ok:
            reason = "`apt-get install chromium` failed"
        elif not chromium_works(CHROMIUM):
            reason = f"{CHROMIUM} is missing or does not run after `apt-get install chromium` (a snap stub?)"
    if reason:
        notice(f"browser tests will be SKIPPED: {reason}")
        return None
    log(f"chromium ready at {CHROMIUM} ({time.monotonic() - started:.0f}s)")
    return CHROMIUM


def cmd_lab(args: list[str]) -> None:
    with checkout_lock():
        ensure_venv(VENV, MAIN_SPEC)
    jupyter = VENV / "bin" / "jupyter"
    argv = [str(jupyter), "lab"]
    if (ROOT / QUICKSTART).is_file():
        argv.append(str(QUICKSTART))
    else:
        log(f"{QUICKSTART} does not exist yet; opening JupyterLab without it")
    argv += args
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in args:
        argv.append("--allow-root")
    env = dict(os.environ)
    # Prefer the venv's kernelspecs (its python3 kernel) over any in the user's home.
    env.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    log("starting " + " ".join(argv[1:]))
    os.chdir(ROOT)
    os.execve(str(jupyter), argv, env)


def cmd_test(args: list[str]) -> None:
    env = dict(os.environ)
    with checkout_lock():
        py = ensure_venv(VENV, MAIN_SPEC)
        py6 = None
        try:
            py6 = ensure_venv(VENV_IPYKERNEL6, IPYKERNEL6_SPEC)
        except SystemExit as exc:  # the main suite can still run; say so loudly
            notice(f"ipykernel 6.29 tests will be SKIPPED: could not build "
                   f"{VENV_IPYKERNEL6.name}: {exc}")
        chromium = ensure_chromium()
    if py6 is not None:
        env["JAXDBG_IPYKERNEL6_PYTHON"] = str(py6.absolute())
    if chromium is not None:
        env["JAXDBG_CHROMIUM"] = str(chromium)
    env.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    argv = [str(py), "-m", "pytest", *args]
    log("running pytest " + " ".join(args))
    os.chdir(ROOT)
    os.execve(str(py), argv, env)


def main(argv: list[str]) -> None:
    commands = {"lab": cmd_lab, "test": cmd_test}
    if not argv or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    commands[argv[0]](argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
