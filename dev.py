#!/usr/bin/env python3
"""Set up the development environment and run things in it.

    python3 dev.py lab [jupyter lab args]   set up .venv, open notebooks/quickstart.ipynb
    python3 dev.py test [pytest args]       set up every test venv and Chromium, run pytest
    python3 dev.py setup                    only build the venvs `test` uses
    python3 dev.py docs [--no-serve] [mkdocs serve args]
                                            set up .venv, build the docs site strictly into
                                            site/, then serve it locally (mkdocs serve)

`test` builds the sdist and the wheel (python -m build, into dist/) and installs the wheel
into .venv-wheel, then runs the whole suite in .venv (browser tests only there) with the
kernel tests also run against the kernels of the matrix venvs (the installed wheel, from
outside the checkout; ipykernel 6.29; Colab's exact pins; the newest JAX on the newest
Python found; the oldest JAX the pins allow), then, with no pytest arguments, the core
tests under each matrix interpreter and the strict docs build.

Standard library only, so it runs with any Python >= 3.10 on a fresh machine.
Virtual environments are rebuilt only when pyproject.toml (or the set of packages in the
checkout, or the base Python) changed since the last install; a stamp file in each venv
records that. Installs go through pip's cache, so a rebuild downloads little.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
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
# The package as users get it: `python -m build` writes dist/, and .venv-wheel installs
# the wheel from there (not the checkout), so a file left out of the package fails tests.
VENV_WHEEL = ROOT / ".venv-wheel"
DIST = ROOT / "dist"
STAMP_NAME = ".jaxdbg-dev-stamp"
# Bump to force every checkout to reinstall after a change to how venvs are built.
STAMP_VERSION = "2"

MAIN_SPEC = [".[notebook,test,docs]"]
IPYKERNEL6_SPEC = [".", "ipykernel==6.29.*", "jupyter_client", "ipywidgets"]
# What the matrix interpreters need besides the project to run the core tests.
CORE_TEST_TOOLS = ["pytest", "pytest-timeout"]
COLAB_PINS = Path(".ci") / "colab-pins.txt"
COLAB_PYTHON = (3, 13)  # Colab's runtime
# jax 0.7.0 (the floor) needs Python >= 3.11; pair the oldest JAX with the oldest Python it takes.
OLDEST_JAX_MIN_PYTHON = (3, 11)
# The tests that run under every matrix interpreter (no kernel, no browser: the kernel
# tests already run each matrix kernel from .venv).
CORE_TEST_ARGS = ["-m", "not kernel and not browser", "--ignore=tests/browser", "-q", "-p", "no:cacheprovider"]

CHROMIUM = Path("/usr/bin/chromium")
DOCS_SITE = ROOT / "site"
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


def stamp_for(spec: list[str], base: str = sys.executable) -> str:
    h = hashlib.sha256()
    h.update(STAMP_VERSION.encode())
    h.update(repr(spec).encode())
    h.update(base.encode())
    h.update((ROOT / "pyproject.toml").read_bytes())
    if (ROOT / COLAB_PINS).is_file():
        h.update((ROOT / COLAB_PINS).read_bytes())
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


def ensure_venv(venv: Path, spec: list[str], base: str = sys.executable,
                steps: list[list[str]] | None = None) -> Path:
    """Create `venv` from the `base` Python if missing or broken and install into it.

    `steps` are pip-install argument lists run in order (default: `-e` plus `spec`);
    they are reinstalled only when they, pyproject.toml or the base Python changed.
    """
    steps = steps if steps is not None else [["-e", *spec]]
    stamp_file = venv / STAMP_NAME
    want = stamp_for([*spec, *map(repr, steps)], base)
    if stamp_file.is_file() and stamp_file.read_text().strip() == want and venv_works(venv):
        return venv_python(venv)

    started = time.monotonic()
    if venv.exists() and (not venv_works(venv) or not stamp_file.is_file()
                          or _venv_base(venv) != _python_version(base)):
        log(f"removing {venv.name} (broken, unfinished or made from another Python) ...")
        shutil.rmtree(venv)
    if not venv.exists():
        log(f"creating {venv.name} with {base} ({'.'.join(map(str, _python_version(base) or ()))}) ...")
        proc = subprocess.run(
            [base, "-m", "venv", str(venv)],
            stdin=subprocess.DEVNULL, env=quiet_env(), cwd=ROOT,
        )
        if proc.returncode != 0 or not venv_python(venv).exists():
            shutil.rmtree(venv, ignore_errors=True)
            sys.exit(
                f"[dev] could not create a virtual environment with {base}; on Debian/Ubuntu "
                "install the venv module first: apt-get install python3-venv"
            )
    else:
        log(f"{venv.name} is out of date (pyproject.toml or packages changed) ...")

    stamp_file.unlink(missing_ok=True)
    for step in steps:
        log(f"installing {' '.join(step)} into {venv.name} (pip, this can take a few minutes) ...")
        run_pip([
            str(venv_python(venv)), "-m", "pip", "install",
            "--disable-pip-version-check", "-q", *step,
        ])
    stamp_file.write_text(want + "\n")
    log(f"{venv.name} ready ({time.monotonic() - started:.0f}s)")
    return venv_python(venv)


# ------------------------------------------------------------------ finding Pythons


def _python_version(exe: str) -> tuple[int, int, int] | None:
    """(major, minor, micro) of a Python executable with a working venv module, else None."""
    try:
        out = subprocess.run(
            [exe, "-c", "import sys, venv, ensurepip; print(*sys.version_info[:3])"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        major, minor, micro = (int(p) for p in out.stdout.split())
    except ValueError:
        return None
    return major, minor, micro


def _venv_base(venv: Path) -> tuple[int, int, int] | None:
    return _python_version(str(venv_python(venv)))


@functools.lru_cache(maxsize=None)
def find_pythons() -> dict[tuple[int, int], str]:
    """(major, minor) -> an executable, for every CPython >= 3.10 on PATH or under pyenv."""
    candidates: list[str] = [sys.executable]
    for minor in range(10, 20):
        found = shutil.which(f"python3.{minor}")
        if found:
            candidates.append(found)
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv_root.is_dir():
        for version_dir in sorted(pyenv_root.iterdir()):
            candidates.extend(str(p) for p in sorted(version_dir.glob("bin/python3.*"))
                              if re.fullmatch(r"python3\.\d+", p.name))
    found: dict[tuple[int, int], tuple[tuple[int, int, int], str]] = {}
    for exe in candidates:
        version = _python_version(exe)
        if version is None or version[:2] < (3, 10):
            continue
        # pyenv shims on PATH forward to a real interpreter; keep the newest patch release.
        if version[:2] not in found or version > found[version[:2]][0]:
            found[version[:2]] = (version, exe)
    return {minor: exe for minor, (_, exe) in sorted(found.items())}


def _nearest(pythons: dict[tuple[int, int], str], want: tuple[int, int]) -> tuple[int, int] | None:
    if not pythons:
        return None
    return min(pythons, key=lambda v: (abs(v[1] - want[1]) if v[0] == want[0] else 99, -v[1]))


def _jax_floor() -> str:
    """The lowest jax version pyproject.toml allows, e.g. "0.7"."""
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'"jax>=([0-9.]+)', text)
    if not match:
        sys.exit("[dev] pyproject.toml has no jax floor (jax>=X) to build the oldest-JAX venv from")
    return match.group(1)


@dataclasses.dataclass
class MatrixVenv:
    """A venv of the test matrix: its kernel runs the kernel tests, its Python the core tests."""

    label: str       # what the README and the summary call it
    env_var: str     # tells tests/support/kernel_harness.py about its Python
    venv: Path
    base: tuple[int, int] | None
    spec: list[str]
    steps: list[list[str]]
    python: Path | None = None
    problem: str | None = None


def matrix_venvs() -> list[MatrixVenv]:
    pythons = find_pythons()
    log("Pythons found: " + (", ".join(f"{a}.{b}" for a, b in pythons) or "none"))
    pins = str(COLAB_PINS)
    colab_base = COLAB_PYTHON if COLAB_PYTHON in pythons else _nearest(pythons, COLAB_PYTHON)
    newest_base = max(pythons) if pythons else None
    oldest_candidates = [v for v in pythons if v >= OLDEST_JAX_MIN_PYTHON]
    oldest_base = min(oldest_candidates) if oldest_candidates else None
    floor = _jax_floor()
    return [
        MatrixVenv("colab pins", "JAXDBG_COLAB_PYTHON", ROOT / ".venv-colab", colab_base,
                   ["colab"], [["-r", pins], ["-c", pins, "-e", ".", *CORE_TEST_TOOLS]]),
        MatrixVenv("newest jax", "JAXDBG_NEWEST_JAX_PYTHON", ROOT / ".venv-newest-jax", newest_base,
                   ["newest"], [["--upgrade", "--upgrade-strategy", "eager", "-e", ".", *CORE_TEST_TOOLS]]),
        MatrixVenv("oldest jax", "JAXDBG_OLDEST_JAX_PYTHON", ROOT / ".venv-oldest-jax", oldest_base,
                   ["oldest"], [["-e", ".", f"jax=={floor}", f"jaxlib=={floor}", *CORE_TEST_TOOLS]]),
    ]


def ensure_matrix(entries: list[MatrixVenv]) -> None:
    pythons = find_pythons()
    for entry in entries:
        if entry.base is None:
            entry.problem = "no suitable Python on this machine"
            notice(f"{entry.label}: SKIPPED, {entry.problem} (looked on PATH and under ~/.pyenv)")
            continue
        base = pythons[entry.base]
        try:
            entry.python = ensure_venv(entry.venv, entry.spec, base, entry.steps)
        except SystemExit as exc:
            entry.problem = f"could not build {entry.venv.name}: {exc}"
            notice(f"{entry.label}: FAILED, {entry.problem}")


def describe_python(py: Path) -> str:
    code = ("import sys, jax, ipykernel, IPython, ipywidgets, jupyter_client; "
            "print(f'Python {sys.version.split()[0]}, jax {jax.__version__}, ipykernel {ipykernel.__version__}, "
            "IPython {IPython.__version__}, ipywidgets {ipywidgets.__version__}, "
            "jupyter_client {jupyter_client.__version__}')")
    out = subprocess.run([str(py), "-c", code], stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    return out.stdout.strip() or f"(could not import: {out.stderr.strip().splitlines()[-1:]})"


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


def source_files() -> list[str]:
    """The checkout's files as a clone has them: tracked plus untracked-but-not-ignored
    (without git: every file outside caches, venvs and build outputs)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        if out.returncode == 0 and out.stdout:
            return sorted({f for f in out.stdout.decode().split("\0") if f and (ROOT / f).is_file()})
    except OSError:
        pass
    skip = re.compile(r"(^|/)(\.git|\.venv[^/]*|__pycache__|build|dist|site|[^/]*\.egg-info|test-artifacts)(/|$)")
    return sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                  if p.is_file() and not skip.search(str(p.relative_to(ROOT))))


def build_dist(py: Path, outdir: Path = DIST) -> Path:
    """Build the sdist and the wheel with `python -m build` into `outdir`; the wheel's path.

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


def ensure_wheel_venv(wheel: Path) -> Path:
    """.venv-wheel with `wheel` installed as a user would (dependencies from its metadata);
    the wheel itself is reinstalled on every run, since its contents follow the checkout."""
    py = ensure_venv(VENV_WHEEL, ["wheel"], steps=[[str(wheel)]])
    run_pip([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
             "--no-deps", "--force-reinstall", str(wheel)])
    return py


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


SUMMARY = re.compile(r"^=+ (.*\d+ (passed|failed|skipped|error|errors|deselected).*) in [\d.]+s")
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def run_pytest(py: Path, args: list[str], env: dict[str, str], label: str) -> tuple[int, dict[str, int]]:
    """Run pytest under `py`, passing its output through; (exit code, counts by outcome)."""
    log(f"[{label}] {py} -m pytest {' '.join(args)}")
    proc = subprocess.Popen([str(py), "-m", "pytest", *args], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    assert proc.stdout is not None
    counts: dict[str, int] = {}
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        match = SUMMARY.match(line.strip())
        if match:
            counts = {}
            for n, what in COUNTS.findall(match.group(1)):
                key = "failed" if what.startswith("error") else what
                counts[key] = counts.get(key, 0) + int(n)
    return proc.wait(), counts


def cmd_test(args: list[str]) -> None:
    env = dict(os.environ)
    started = time.monotonic()
    with checkout_lock():
        py = ensure_venv(VENV, MAIN_SPEC)
        wheel = build_dist(py)
        py_wheel = ensure_wheel_venv(wheel)
        py6 = None
        try:
            py6 = ensure_venv(VENV_IPYKERNEL6, IPYKERNEL6_SPEC)
        except SystemExit as exc:
            notice(f"ipykernel 6.29: FAILED, could not build {VENV_IPYKERNEL6.name}: {exc}")
        matrix = matrix_venvs()
        ensure_matrix(matrix)
        chromium = ensure_chromium()
    log(f"set-up took {time.monotonic() - started:.0f}s")
    env["JAXDBG_DIST_DIR"] = str(DIST)
    env["JAXDBG_WHEEL_PYTHON"] = str(py_wheel.absolute())
    if py6 is not None:
        env["JAXDBG_IPYKERNEL6_PYTHON"] = str(py6.absolute())
    for entry in matrix:
        if entry.python is not None:
            env[entry.env_var] = str(entry.python.absolute())
    if chromium is not None:
        env["JAXDBG_CHROMIUM"] = str(chromium)
    env.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")

    results: list[tuple[str, str, int, dict[str, int]]] = []
    rc, counts = run_pytest(py, args, env, "main")
    results.append(("main (+ kernel tests on every matrix kernel)", describe_python(py), rc, counts))
    if not args:  # the full run: the core tests under every matrix interpreter too
        for entry in matrix:
            if entry.python is None:
                continue
            rc_core, counts_core = run_pytest(entry.python, CORE_TEST_ARGS, env, entry.label)
            if rc_core == 5:  # no tests collected is not a failure of the matrix
                rc_core = 0
            results.append((f"{entry.label} (core)", describe_python(entry.python), rc_core, counts_core))
        rc_docs = build_docs(py)
        results.append(("docs (mkdocs build --strict)", f"site/ from {py}", rc_docs,
                        {"passed" if rc_docs == 0 else "failed": 1}))
    else:
        log("core tests under the matrix interpreters and the docs build run only without pytest arguments")

    print("\n[dev] test matrix:", flush=True)
    for label, versions, code, _ in results:
        state = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"[dev]   {label}: {state}; {versions}", flush=True)
    if py6 is not None:
        print(f"[dev]   ipykernel 6.29 kernel: {describe_python(py6)}", flush=True)
    print(f"[dev]   installed-wheel kernel ({wheel.name}): {describe_python(py_wheel)}", flush=True)
    problems = [e for e in matrix if e.problem] + ([] if py6 else ["ipykernel6"])
    for entry in problems:
        if isinstance(entry, MatrixVenv):
            print(f"[dev]   {entry.label}: NOT RUN, {entry.problem}", flush=True)
        else:
            print("[dev]   ipykernel 6.29: NOT RUN, its venv could not be built", flush=True)
    total = {k: sum(r[3].get(k, 0) for r in results) for k in ("passed", "failed", "skipped")}
    log(f"total time {time.monotonic() - started:.0f}s")
    print(f"matrix: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped",
          flush=True)
    built_badly = any(isinstance(e, MatrixVenv) and e.problem and e.base is not None for e in problems) \
        or py6 is None
    failed = any(r[2] not in (0,) for r in results)
    sys.exit(1 if failed or built_badly else 0)


def docs_env() -> dict[str, str]:
    """The docs build executes the notebooks in kernels that inherit this environment."""
    env = dict(os.environ)
    env.update(JAX_PLATFORMS="cpu", NO_MKDOCS_2_WARNING="1")
    # The notebooks' python3 kernel is .venv's, not one in the user's home.
    env.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    return env


def build_docs(py: Path) -> int:
    """Build the docs site into site/ with warnings as errors; mkdocs' exit code."""
    started = time.monotonic()
    log(f"[docs] {py} -m mkdocs build --strict --site-dir {DOCS_SITE.name} (executes the notebooks)")
    rc = subprocess.run([str(py), "-m", "mkdocs", "build", "--strict", "--site-dir", str(DOCS_SITE)],
                        cwd=ROOT, env=docs_env(), stdin=subprocess.DEVNULL).returncode
    log(f"[docs] {'built' if rc == 0 else f'FAILED (exit {rc})'} in {time.monotonic() - started:.0f}s")
    return rc


def cmd_docs(args: list[str]) -> None:
    """Build the site strictly; then, unless --no-serve, serve it with live reload."""
    serve = "--no-serve" not in args
    serve_args = [a for a in args if a not in ("--serve", "--no-serve")]
    with checkout_lock():
        py = ensure_venv(VENV, MAIN_SPEC)
    if build_docs(py) != 0:
        sys.exit(1)
    log(f"site built in {DOCS_SITE}")
    if serve:
        log("serving with mkdocs serve (it builds once more, then rebuilds on changes) ...")
        os.chdir(ROOT)
        os.execve(str(py), [str(py), "-m", "mkdocs", "serve", *serve_args], docs_env())


def cmd_setup(args: list[str]) -> None:
    """Build every venv `test` uses, without running anything."""
    with checkout_lock():
        py = ensure_venv(VENV, MAIN_SPEC)
        ensure_wheel_venv(build_dist(py))
        ensure_venv(VENV_IPYKERNEL6, IPYKERNEL6_SPEC)
        matrix = matrix_venvs()
        ensure_matrix(matrix)
    for entry in matrix:
        if entry.python is not None:
            log(f"{entry.label}: {describe_python(entry.python)}")
    if any(e.problem for e in matrix):
        sys.exit(1)


def main(argv: list[str]) -> None:
    commands = {"lab": cmd_lab, "test": cmd_test, "setup": cmd_setup, "docs": cmd_docs}
    if not argv or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    commands[argv[0]](argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
