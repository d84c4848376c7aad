"""The development environments and the test matrix, as nox sessions.

``python3 dev.py test`` runs the default sessions below in order (``nox`` from a tools
venv); ``nox -s NAME`` runs one. Each session's venv lives in ``.nox/NAME`` and is reused:
its packages are reinstalled only when what it installs, pyproject.toml, Colab's pins or
the set of packages in the checkout changed (a stamp in the venv records that).

- ``lint``: ruff (the rules in pyproject.toml); ``types`` (last): mypy over jaxdbg/ and
  jaxdbg_widgets/, reading the dependencies from the main venv;
- ``dist``: the sdist and the wheel (``python -m build``) into dist/, from a copy of the
  files a clone has (``devtools.build``); ``installed_wheel``: a venv with that wheel installed as users get it;
- ``ipykernel6``: a kernel with ipykernel 6.29;
- ``colab_pins``, ``newest_jax``, ``oldest_jax``: the matrix venvs (Colab's exact pins on
  Colab's Python, the newest JAX on the newest Python found, the oldest JAX the pins
  allow); each runs the core tests (no kernel, no browser) under its own Python;
- ``tests``: in the main venv, the kernel tests (also against the kernel of every venv
  above), the browser tests (only there) and the jobs of processes; the core tests too
  unless ``newest_jax`` ran them first in the same run (as under ``dev.py test``); then
  the strict docs build. Under
  ``dev.py test`` (JAXDBG_DOCS_ASIDE=1) the docs build starts with the first core run
  instead, in its own process beside the sessions, and ``tests`` awaits it.

Pytest arguments after ``--`` go to ``tests``; with them, the matrix venvs are only built
and the docs are not built. Every pytest run and check writes its result under
``.nox/results/`` (JUnit XML and the versions it ran; ``devtools.summary``), which ``dev.py`` sums up.

Not in the matrix: ``lab`` (JupyterLab on notebooks/quickstart.ipynb), ``bench`` (every
benchmark, one table; on the packages ``lab`` installs, without the test suite's) and
``docs`` (build the site strictly, then serve it; ``-- --no-serve`` only builds).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent))  # devtools/, beside this file
from devtools.build import build_dist, sources_digest
from devtools.common import DEFAULT_SESSIONS, DIST, RESULTS, ROOT
from devtools.summary import describe, record

DOCS_SITE = ROOT / "site"
QUICKSTART = Path("notebooks") / "quickstart.ipynb"
COLAB_PINS = ".ci/colab-pins.txt"
COLAB_PYTHON = (3, 13)  # Colab's runtime
# jax 0.7.0 (the floor) needs Python >= 3.11; pair the oldest JAX with the oldest Python it takes.
OLDEST_JAX_MIN_PYTHON = (3, 11)
CHROMIUM = Path("/usr/bin/chromium")
# The import packages pyproject.toml's finder looks for: an editable install made before
# one of them existed does not see it, so their presence is part of the stamp.
PACKAGES = ("jaxdbg", "jaxdbg_widgets")
MAIN_EXTRAS = ".[notebook,test,docs,examples]"
# JupyterLab and what the notebooks in notebooks/ import: the lab, bench and docs venvs.
LAB_EXTRAS = ".[notebook,examples]"
DOCS_EXTRAS = ".[notebook,examples,docs]"
CORE_TEST_TOOLS = ["pytest", "pytest-timeout", "pytest-xdist"]
# Most tests wait on kernels, processes and browsers, so pytest runs them in more workers
# than the machine has cores (2 here: 3 workers). `worksteal` starts each worker on a
# contiguous share of the tests (a module's tests stay together, sharing its kernel) and
# moves single tests only to a worker that ran dry. JAXDBG_TEST_WORKERS=0 runs in-process.
TEST_WORKERS = os.environ.get("JAXDBG_TEST_WORKERS") or str((os.cpu_count() or 1) + 1)
PARALLEL_ARGS = ["-n", TEST_WORKERS, "--dist", "worksteal"] if TEST_WORKERS != "0" else []
# The core tests, which run under every matrix interpreter (the kernel tests already run
# each matrix kernel from the main venv): no kernel, no browser, and of the jobs of
# processes those marked `matrix` (what JAX's coordination service and collectives do per
# version; the debug host's own protocol runs in the main venv). Release checks that need
# the main venv's tools (`main_venv`) run there only.
CORE_MARKERS = "not kernel and not browser and not main_venv and (not distributed or matrix)"
# The main run's share when the matrix venvs ran the core tests in the same `nox` run:
# every other test, so each runs once per interpreter that it is for. The core tests'
# Pythons and JAX versions are the matrix's (the oldest, the newest, Colab's); the main
# venv's own (between them) runs its kernel, browser and job tests.
MAIN_MARKERS = f"not ({CORE_MARKERS})"
CORE_TEST_ARGS = [
    "-m",
    CORE_MARKERS,
    "--ignore=tests/browser",
    "-q",
    "-p",
    "no:cacheprovider",
    *PARALLEL_ARGS,
]
# Every Python a test run starts (pytest's workers, each kernel, script and job process)
# keeps the bytecode it compiles, as Python does by default, even where the environment
# sets PYTHONDONTWRITEBYTECODE (as container images often do): else each of them compiles
# jaxdbg anew (about 0.3 s of CPU), and each worker rewrites every test module's asserts
# anew (about 3 s). The files go to the git-ignored __pycache__ folders. The venvs are
# installed without bytecode (install_once), so every session's processes, the lab's
# and the docs build's too, keep it: each module is compiled once, where it is imported.
os.environ["PYTHONDONTWRITEBYTECODE"] = ""  # inherited by every process a session starts
# ml_dtypes 0.7 registers its dtypes' NumPy loops slowly where NumPy is older than 2.5
# (the newest there is on Python 3.11; each new loop is compared with all before it):
# 0.65 s of CPU at every `import jax`. The main and ipykernel-6 venvs, on Python 3.11, start
# hundreds of kernels and processes (about a sixth of the main run's CPU went on it), so they take
# the 0.6 series (0.7 adds one float8 format); the matrix venvs and the installed
# wheel's keep what JAX resolves to (0.7), and the core tests read its dtypes there.
QUICK_JAX_IMPORT = ["ml_dtypes<0.7"]
# What the main run's kernel tests read to start the kernels of the other venvs
# (tests/support/kernel_harness.py), by the session that builds each venv.
KERNEL_ENV = {
    "installed_wheel": "JAXDBG_WHEEL_PYTHON",
    "ipykernel6": "JAXDBG_IPYKERNEL6_PYTHON",
    "colab_pins": "JAXDBG_COLAB_PYTHON",
    "newest_jax": "JAXDBG_NEWEST_JAX_PYTHON",
    "oldest_jax": "JAXDBG_OLDEST_JAX_PYTHON",
}

nox.options.sessions = DEFAULT_SESSIONS
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
# A Python this machine lacks skips its session (the summary says so), on CI too.
nox.options.error_on_missing_interpreters = False


# ------------------------------------------------------------------ the Pythons


def _version_of(exe: str) -> tuple[int, int] | None:
    """(major, minor) of a Python with a working venv module, else None."""
    try:
        out = subprocess.run(
            [exe, "-c", "import sys, venv, ensurepip; print(*sys.version_info[:2])"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split()
    return (int(parts[0]), int(parts[1])) if out.returncode == 0 and len(parts) == 2 else None


def _pythons() -> dict[tuple[int, int], str]:
    """(major, minor) -> an executable, for every CPython >= 3.10 on PATH or under pyenv
    (pyenv's shims on PATH run only the versions pyenv has selected)."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(10, 20)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p) for p in sorted(pyenv.glob("3.*/bin/python3.*")) if re.fullmatch(r"python3\.\d+", p.name)]
    candidates = list(filter(None, candidates))
    # Asked all at once: a pyenv shim takes about a second to answer, and nox imports
    # this file once per venv that `dev.py test` checks.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(candidates))) as pool:
        versions = list(pool.map(_version_of, candidates))
    found: dict[tuple[int, int], str] = {}
    for exe, version in zip(candidates, versions):
        if version and version >= (3, 10):
            found.setdefault(version, exe)
    return dict(sorted(found.items()))


def _matrix_pythons() -> dict[str, str]:
    """The interpreter of each matrix venv (a version nox reports as missing when none fits)."""
    pythons = _pythons()
    if not pythons:
        return {"colab_pins": "3.13", "newest_jax": "3.13", "oldest_jax": "3.11"}
    colab = (
        COLAB_PYTHON
        if COLAB_PYTHON in pythons
        else min(pythons, key=lambda v: (abs(v[1] - COLAB_PYTHON[1]) if v[0] == 3 else 99, -v[1]))
    )
    oldest = [v for v in pythons if v >= OLDEST_JAX_MIN_PYTHON]
    return {
        "colab_pins": pythons[colab],
        "newest_jax": pythons[max(pythons)],
        "oldest_jax": pythons[min(oldest)] if oldest else "3.11",
    }


MATRIX_PYTHONS = _matrix_pythons()


# ------------------------------------------------------------------ installing once


def _stamp(steps: list[list[str]]) -> str:
    h = hashlib.sha256(repr(steps).encode())
    h.update((ROOT / "pyproject.toml").read_bytes())
    if (ROOT / COLAB_PINS).is_file():
        h.update((ROOT / COLAB_PINS).read_bytes())
    for pkg in PACKAGES:
        h.update(f"{pkg}:{(ROOT / pkg / '__init__.py').is_file()}".encode())
    return h.hexdigest()


def install_once(session: nox.Session, *steps: list[str]) -> None:
    """``pip install`` each step in order, unless this venv has them already (its stamp)."""
    stamp_file = Path(session.virtualenv.location) / ".jaxdbg-stamp"
    want = _stamp(list(steps))
    if stamp_file.is_file() and stamp_file.read_text().strip() == want:
        return
    stamp_file.unlink(missing_ok=True)
    for step in steps:
        # --no-compile: pip would byte-compile every installed file (the main venv: 10 s of
        # CPU, 200 MB); Python compiles what is imported, once, on first import instead.
        session.install("--no-compile", *step, env={"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    stamp_file.write_text(want + "\n")


def venv_python(name: str) -> Path:
    """The Python of session ``name``'s venv (built by an earlier session or run)."""
    return ROOT / ".nox" / name / "bin" / "python"


def _extra(name: str) -> str:
    """The requirement for ``name`` in pyproject.toml's `test` extra, e.g. "ruff==0.17.6"."""
    match = re.search(rf'"({re.escape(name)}\b[^"]*)"', (ROOT / "pyproject.toml").read_text())
    return match.group(1) if match else name


def _jax_floor() -> str:
    match = re.search(r'"jax>=([0-9.]+)', (ROOT / "pyproject.toml").read_text())
    if not match:
        raise RuntimeError("pyproject.toml has no jax floor (jax>=X) to build the oldest-JAX venv from")
    return match.group(1)


# ------------------------------------------------------------------ results


def check(session: nox.Session, label: str, versions: str, *args: str, **kwargs) -> None:
    """Run a check that counts as one test in the summary: passed, or failed."""
    started = time.monotonic()
    record(label, versions, {"failed": 1})
    try:
        session.run(*args, **kwargs)
    except BaseException:
        record(label, versions, {"failed": 1}, time.monotonic() - started)
        raise
    record(label, versions, {"passed": 1}, time.monotonic() - started)


def pytest(
    session: nox.Session, label: str, args: list[str], env: dict[str, str] | None = None, python: Path | None = None
) -> None:
    """pytest in the session's venv (or ``python``'s); its counts go to the summary
    through JUnit XML."""
    python = python or Path(session.virtualenv.location) / "bin" / "python"
    versions = describe(python)
    junit = record(label, versions)
    junit.unlink(missing_ok=True)
    started = time.monotonic()
    try:
        session.run(
            str(python),
            "-m",
            "pytest",
            *args,
            f"--junitxml={junit}",
            env={"PYTHONUNBUFFERED": "1", **(env or {})},
            success_codes=[0, 5],
        )  # 5: nothing collected, not a failure of the matrix
    finally:
        record(label, versions, None, time.monotonic() - started)


# ------------------------------------------------------------------ checks


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: the rules in pyproject.toml (bugs and import order), and the formatting."""
    install_once(session, [_extra("ruff")])
    check(session, "lint (ruff)", _extra("ruff"), "ruff", "check", ".")
    check(session, "format (ruff format --check)", _extra("ruff"), "ruff", "format", "--check", ".")


# ------------------------------------------------------------------ the package as users get it


@nox.session
def dist(session: nox.Session) -> None:
    """The sdist and the wheel into dist/ (devtools.build: from a copy of the files a
    clone has, since an editable install's egg-info would hide one missing from package-data)."""
    install_once(session, ["build"])
    venv = Path(session.virtualenv.location)
    # Built again only when a source file or the build venv changed since dist/ was built.
    stamp = DIST / ".jaxdbg-sources"
    sources = sources_digest((venv / ".jaxdbg-stamp").read_text())
    built = len(list(DIST.glob("jaxdbg-*.whl"))) == 1 and len(list(DIST.glob("jaxdbg-*.tar.gz"))) == 1
    if built and stamp.is_file() and stamp.read_text().strip() == sources:
        session.log("dist/ was built from these very sources: kept")
        return
    build_dist(venv / "bin" / "python", DIST)
    stamp.write_text(sources + "\n")


@nox.session
def installed_wheel(session: nox.Session) -> None:
    """A venv with dist/'s wheel installed as a user would (dependencies from its metadata);
    the wheel itself is installed again whenever dist/'s is another one, since its
    contents follow the checkout."""
    wheels = sorted(DIST.glob("jaxdbg-*.whl"))
    if len(wheels) != 1:
        session.error("dist/ holds no single wheel: run the dist session first")
    install_once(session, [str(wheels[0])])
    installed = Path(session.virtualenv.location) / ".jaxdbg-wheel"
    wheel = hashlib.sha256(wheels[0].read_bytes()).hexdigest()
    if installed.is_file() and installed.read_text().strip() == wheel:
        session.log("dist/'s wheel is the one installed: kept")
        return
    installed.unlink(missing_ok=True)
    session.install("--no-deps", "--force-reinstall", str(wheels[0]))
    installed.write_text(wheel + "\n")


# ------------------------------------------------------------------ the matrix venvs


@nox.session
def ipykernel6(session: nox.Session) -> None:
    """A kernel with ipykernel 6.29 (the main run's kernel tests start it)."""
    install_once(session, ["-e", ".", "ipykernel==6.29.*", "jupyter_client", "ipywidgets", *QUICK_JAX_IMPORT])


# Colab's core run leaves out what runs JAX programs to their stops: Colab pins a patch
# release of the oldest JAX's minor version, whose run has them all, and Colab's kernel runs
# the kernel tests marked `matrix("jax")`. It keeps what its pinned IPython, ipywidgets,
# numpy and rich decide.
COLAB_LEAVES_OUT = [
    "--ignore=tests/capture",
    "--ignore=tests/distributed",
    "--ignore=tests/engine/test_stops.py",
    "--ignore=tests/engine/test_replay.py",
]


# The matrix sessions whose core tests ran in this `nox` run (``newest_jax`` runs them
# all: it leaves nothing out and has every library the core tests read).
_core_runs: set[str] = set()


def _core_tests(session: nox.Session, label: str, *extra: str) -> None:
    if session.posargs:
        session.log("pytest arguments given: the core tests under this interpreter do not run")
        return
    start_docs_aside(session)
    try:
        pytest(session, f"{label} (core)", [*CORE_TEST_ARGS, *extra])
    finally:
        _core_runs.add(session.name)


@nox.session(python=MATRIX_PYTHONS["colab_pins"])
def colab_pins(session: nox.Session) -> None:
    """Colab's exact pins, on Colab's Python (or the nearest found)."""
    install_once(session, ["-r", COLAB_PINS], ["-c", COLAB_PINS, "-e", ".", *CORE_TEST_TOOLS])
    _core_tests(session, "colab pins", *COLAB_LEAVES_OUT)


# The libraries users train with, so their values (Modules, parameter trees, optimizer
# states) are tested under the newest JAX too, as the test extra installs them in the main venv.
TRAINING_LIBRARIES = ["flax", "equinox", "dm-haiku", "optax"]


@nox.session(python=MATRIX_PYTHONS["newest_jax"])
def newest_jax(session: nox.Session) -> None:
    """The newest JAX the pins allow, on the newest Python found, with the training libraries."""
    training = [_extra(name) for name in TRAINING_LIBRARIES]
    install_once(session, ["--upgrade", "--upgrade-strategy", "eager", "-e", ".", *CORE_TEST_TOOLS, *training])
    _core_tests(session, "newest jax")


@nox.session(python=MATRIX_PYTHONS["oldest_jax"])
def oldest_jax(session: nox.Session) -> None:
    """The oldest JAX the pins allow, on the oldest Python it takes."""
    floor = _jax_floor()
    install_once(session, ["-e", ".", f"jax=={floor}", f"jaxlib=={floor}", *CORE_TEST_TOOLS])
    _core_tests(session, "oldest jax")


# ------------------------------------------------------------------ the main run


def _chromium_works(path: Path) -> bool:
    try:
        out = subprocess.run(
            [str(path), "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "chrom" in out.stdout.lower()


def ensure_chromium(session: nox.Session) -> Path | None:
    """A Chromium for the browser tests, installing Debian's package when root; else None."""
    override = os.environ.get("JAXDBG_CHROMIUM")
    if override and Path(override).is_file():
        return Path(override)
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        session.warn(
            f"browser tests will be SKIPPED: {CHROMIUM} is missing and we cannot "
            "apt-get install chromium (not root, or no apt-get)"
        )
        return None
    session.log("installing chromium with apt-get (needed by the browser tests) ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]):
        if subprocess.run(cmd, stdin=subprocess.DEVNULL, env=env).returncode != 0:
            session.warn(f"browser tests will be SKIPPED: `{' '.join(cmd)}` failed")
            return None
    if not _chromium_works(CHROMIUM):
        session.warn(
            f"browser tests will be SKIPPED: {CHROMIUM} does not run after `apt-get install chromium` (a snap stub?)"
        )
        return None
    return CHROMIUM


def docs_env() -> dict[str, str]:
    """The docs build executes the notebooks in kernels that inherit this environment: the
    notebooks' python3 kernel is the venv's, not one in the user's home."""
    return {"JAX_PLATFORMS": "cpu", "NO_MKDOCS_2_WARNING": "1", "JUPYTER_PREFER_ENV_PATH": "1"}


DOCS_LABEL = "docs (mkdocs build --strict)"
DOCS_BUILD = ["-m", "mkdocs", "build", "--strict", "--site-dir", str(DOCS_SITE)]


def build_docs(session: nox.Session) -> None:
    check(session, DOCS_LABEL, f"site/ from {session.virtualenv.location}", "python", *DOCS_BUILD, env=docs_env())


class DocsBuildAside:
    """The docs build in its own process, started by the first session of a whole matrix
    run (``dev.py test`` sets JAXDBG_DOCS_ASIDE) and awaited by ``tests``. It executes the
    notebooks in one kernel at a time, about one core for a minute, which the core runs
    leave idle as their workers run out of tests. Its output goes to
    .nox/results/docs-build.log, printed when it fails."""

    def __init__(self) -> None:
        python = venv_python("tests")
        self.versions = f"site/ from {python.parents[1]}"
        self.log_path = RESULTS / "docs-build.log"
        record(DOCS_LABEL, self.versions, {"failed": 1})
        self.log = self.log_path.open("w")
        self.started = self.ended = time.monotonic()
        self.proc = subprocess.Popen(
            [str(python), *DOCS_BUILD],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            # Its kernels talk over Unix sockets (devtools/jupyter_ipc/, read by nbconvert),
            # so they take no TCP port a test's kernel or server chose and has yet to bind.
            env={**os.environ, **docs_env(), "JUPYTER_CONFIG_PATH": str(ROOT / "devtools" / "jupyter_ipc")},
        )
        # Its own time, not that of the sessions it runs beside: a thread notes its exit.
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()

    def _wait(self) -> None:
        self.proc.wait()
        self.ended = time.monotonic()

    def finish(self, session: nox.Session) -> None:
        """Wait for the build; record it, and fail ``session`` when it failed."""
        self.waiter.join()
        self.log.close()
        code, seconds = self.proc.returncode, self.ended - self.started
        record(DOCS_LABEL, self.versions, {"passed": 1} if code == 0 else {"failed": 1}, seconds)
        session.log(f"docs build (beside the other sessions): exit {code} after {seconds:.0f}s")
        if code != 0:
            print(self.log_path.read_text()[-8000:], flush=True)
            session.error(f"the docs build failed (exit {code}); its output: {self.log_path}")


_docs_aside: DocsBuildAside | None = None


def start_docs_aside(session: nox.Session) -> None:
    """Start the docs build beside this session, once per whole matrix run."""
    global _docs_aside
    if _docs_aside is None and os.environ.get("JAXDBG_DOCS_ASIDE") == "1" and venv_python("tests").exists():
        session.log(f"the docs build starts beside the sessions (output: {RESULTS / 'docs-build.log'})")
        _docs_aside = DocsBuildAside()


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite in the main venv, the kernel tests on every matrix kernel; the docs
    built beside it."""
    install_once(session, ["-e", MAIN_EXTRAS, *QUICK_JAX_IMPORT])
    env = {"JAXDBG_DIST_DIR": str(DIST), "JUPYTER_PREFER_ENV_PATH": "1"}
    for name, var in KERNEL_ENV.items():
        if venv_python(name).exists():
            env[var] = str(venv_python(name))
        else:
            session.warn(f"{name}: its venv is not built, so its kernel is not in the kernel tests")
    chromium = ensure_chromium(session)
    if chromium is not None:
        env["JAXDBG_CHROMIUM"] = str(chromium)
    for name in ("ipykernel6", "installed_wheel"):  # kernels only: the summary names their versions
        if venv_python(name).exists():
            record(f"{name} kernel", describe(venv_python(name)), {})
    # Without arguments, in parallel workers: the whole suite, or what the core runs left
    # when newest_jax's ran in this `nox` run; with arguments, as given (add `-n 3`
    # yourself to run a selection in parallel).
    args = session.posargs or PARALLEL_ARGS
    label = "main (+ matrix-marked kernel tests on every matrix kernel)"
    if not session.posargs and "newest_jax" in _core_runs:
        args = [*PARALLEL_ARGS, "-m", MAIN_MARKERS]
        label = "main (kernel, browser, job and release tests, + matrix-marked kernel tests on every matrix kernel)"
    if not session.posargs:
        start_docs_aside(session)  # when no core session started it
    try:
        pytest(session, label, args, env)
    finally:
        if _docs_aside is not None:
            _docs_aside.finish(session)
        elif not session.posargs:
            build_docs(session)


@nox.session(default=False, python=False)
def quick(session: nox.Session) -> None:
    """The tests without a kernel, a browser or a job of processes, in the `tests` session's
    venv (dev.py builds it first), in parallel workers: `python3 dev.py test --quick`,
    with lint and types; pytest arguments after --."""
    main = venv_python("tests")
    if not main.exists():
        session.error("the tests venv is not built: run `python3 dev.py setup` first")
    # No kernel, no browser, no jax.distributed job of processes: the unit and core tests.
    quick_args = [
        "-m",
        "not kernel and not browser and not distributed",
        *CORE_TEST_ARGS[2:],
        # building the wheel and pip's dry run into Colab's pins: release checks
        "--ignore=tests/release/test_packaging.py",
        "--ignore=tests/release/test_colab_pins.py",
    ]
    pytest(session, "quick (no kernel, browser or job)", [*quick_args, *session.posargs], python=main)


@nox.session
def types(session: nox.Session) -> None:
    """mypy over jaxdbg/ and jaxdbg_widgets/. It reads the dependencies' types from the main
    venv when `tests` built it (it runs after `tests`), else from its own install."""
    target = venv_python("tests")
    if target.exists():
        install_once(session, [_extra("mypy")])
    else:
        install_once(session, ["-e", ".", _extra("mypy")])
        target = Path(session.virtualenv.location) / "bin" / "python"
    check(session, "types (mypy)", _extra("mypy"), "mypy", "--python-executable", str(target))


# ------------------------------------------------------------------ by hand


@nox.session(default=False)
def lab(session: nox.Session) -> None:
    """JupyterLab on notebooks/quickstart.ipynb; arguments after -- go to jupyter lab."""
    install_once(session, ["-e", LAB_EXTRAS])
    args = ["lab", str(QUICKSTART), *session.posargs]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in args:
        args.append("--allow-root")
    session.run("jupyter", *args, env={"JUPYTER_PREFER_ENV_PATH": "1"})


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Every benchmark in benchmarks/, one table (benchmarks/run_all.py; its arguments
    after --). The packages are lab's: benchmarks need no test tools."""
    install_once(session, ["-e", LAB_EXTRAS])
    session.run("python", "benchmarks/run_all.py", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Build the site strictly into site/, then serve it with live reload (``-- --no-serve``:
    only build); other arguments go to mkdocs serve."""
    install_once(session, ["-e", DOCS_EXTRAS])
    build_docs(session)
    if "--no-serve" not in session.posargs:
        serve_args = [a for a in session.posargs if a not in ("--serve", "--no-serve")]
        session.run("python", "-m", "mkdocs", "serve", *serve_args, env=docs_env())
