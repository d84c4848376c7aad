#!/usr/bin/env python3
"""Set up the development environment and run things in it.

    python3 dev.py lab [jupyter lab args]   open notebooks/quickstart.ipynb in JupyterLab
    python3 dev.py test [pytest args]       the lint and type checks, every test venv and
                                            Chromium, the whole suite, the docs build
    python3 dev.py test --quick [pytest args]
                                            lint, types and the tests without a kernel or
                                            a browser, in the main venv only
    python3 dev.py setup                    only build the venvs `test` uses
    python3 dev.py bench [--quick] [--only NAME ...] [--compare OLD.json]
                                            run every benchmark in benchmarks/ and print one
                                            table (it is also written under test-artifacts/)
    python3 dev.py docs [--no-serve] [mkdocs serve args]
                                            build the docs site strictly into site/, then
                                            serve it locally (mkdocs serve)
    python3 dev.py nox [nox args]           nox itself, e.g. `nox -s lint` or `nox -l`

The environments and the test matrix are nox sessions (noxfile.py says what each one
does). This file only bootstraps: standard library only, so it runs with any Python >=
3.10 on a fresh machine, it installs nox into .venv-tools and hands over to it. After
`test` it sums up every run of the matrix on the closing `matrix:` line.

It also holds the one recipe that builds the sdist and the wheel (:func:`build_dist`),
used by the `dist` session and by tests/release/test_packaging.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

if sys.version_info < (3, 10):
    sys.exit(f"[dev] Python >= 3.10 is required, this is {sys.version.split()[0]}")

ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / ".venv-tools"
NOX = "nox==2026.10.20"
RESULTS = ROOT / ".nox" / "results"
REPORT = RESULTS / "nox-report.json"
DIST = ROOT / "dist"


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


# ------------------------------------------------------------------ the package


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


# ------------------------------------------------------------------ nox


def ensure_nox() -> Path:
    """.venv-tools with nox in it (made once; again only when NOX changes); nox's path."""
    nox = TOOLS / "bin" / "nox"
    stamp = TOOLS / ".jaxdbg-stamp"
    if nox.exists() and stamp.is_file() and stamp.read_text().strip() == NOX:
        return nox
    started = time.monotonic()
    shutil.rmtree(TOOLS, ignore_errors=True)
    log(f"creating {TOOLS.name} with {sys.executable} and installing {NOX} ...")
    if (
        subprocess.run(
            [sys.executable, "-m", "venv", str(TOOLS)], stdin=subprocess.DEVNULL, env=quiet_env(), cwd=ROOT
        ).returncode
        != 0
    ):
        shutil.rmtree(TOOLS, ignore_errors=True)
        sys.exit(
            f"[dev] could not create a virtual environment with {sys.executable}; on "
            "Debian/Ubuntu install the venv module first: apt-get install python3-venv"
        )
    run_pip([str(TOOLS / "bin" / "python"), "-m", "pip", "install", "-q", NOX])
    stamp.write_text(NOX + "\n")
    log(f"{TOOLS.name} ready ({time.monotonic() - started:.0f}s)")
    return nox


def run_nox(args: list[str]) -> int:
    return subprocess.run(
        [str(ensure_nox()), "--noxfile", str(ROOT / "noxfile.py"), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        env=quiet_env(),
    ).returncode


def exec_nox(args: list[str]) -> None:
    nox = ensure_nox()
    os.chdir(ROOT)
    os.execve(str(nox), [str(nox), "--noxfile", str(ROOT / "noxfile.py"), *args], quiet_env())


# ------------------------------------------------------------------ the summary


def junit_counts(path: Path) -> dict[str, int] | None:
    """passed / failed / skipped from pytest's JUnit XML (errors count as failed)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for suite in suites:
        tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        total["passed"] += tests - skipped - failed
        total["failed"] += failed
        total["skipped"] += skipped
    return total


def slowest_tests(runs: list[tuple[str, Path]], count: int = 10) -> list[tuple[float, str, str]]:
    """The ``count`` slowest test cases over the runs' JUnit XML: (seconds, test, run)."""
    cases: list[tuple[float, str, str]] = []
    for label, path in runs:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        for case in root.iter("testcase"):
            test = f"{case.get('classname', '')}::{case.get('name', '')}".lstrip(":")
            cases.append((float(case.get("time") or 0), test, label))
    return sorted(cases, reverse=True)[:count]


def summarize(nox_rc: int) -> int:
    """Print every run of the matrix with its time, the ten slowest tests and the closing
    `matrix:` line; the exit status."""
    print("\n[dev] test matrix:", flush=True)
    total = {"passed": 0, "failed": 0, "skipped": 0}
    junits: list[tuple[str, Path]] = []
    for path in sorted(RESULTS.glob("*.json"), key=lambda p: p.stat().st_mtime):
        if path == REPORT:
            continue
        run = json.loads(path.read_text())
        counts = run["counts"]
        if counts is None:  # a pytest run: its JUnit XML, or nothing when it did not finish
            junits.append((run["label"], RESULTS / run["junit"]))
            counts = junit_counts(RESULTS / run["junit"]) or {"failed": 1}
        if not counts:  # a venv whose kernel the main run used: its versions only
            print(f"[dev]   {run['label']}: {run['versions']}", flush=True)
            continue
        for key in total:
            total[key] += counts.get(key, 0)
        state = "ok" if not counts.get("failed") else "FAILED"
        shown = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        took = f" in {run['seconds']:.0f}s" if run.get("seconds") is not None else ""
        print(f"[dev]   {run['label']}: {state} ({shown}){took}; {run['versions']}", flush=True)
    slowest = slowest_tests(junits)
    if slowest:
        print("[dev] the ten slowest tests:", flush=True)
        for seconds, test, label in slowest:
            print(f"[dev]   {seconds:6.1f}s  {test}  ({label})", flush=True)
    failed_sessions = False
    if REPORT.is_file():
        for session in json.loads(REPORT.read_text()).get("sessions", []):
            if session["result"] == "skipped":
                print(f"[dev]   session {session['name']}: NOT RUN, {session.get('reason')}", flush=True)
            elif session["result"] == "failed":
                failed_sessions = True
                print(f"[dev]   session {session['name']}: FAILED (its output above says why)", flush=True)
    print(f"matrix: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped", flush=True)
    return 1 if nox_rc != 0 or failed_sessions or total["failed"] else 0


# ------------------------------------------------------------------ commands


QUICK_SESSIONS = ["lint", "quick", "types"]
# The venvs `test` and `setup` build before anything runs, BUILDERS at a time: building is
# mostly downloading and unpacking wheels, which overlap well, while the tests then run in
# order. `types` installs after `tests` (it reads that venv's packages); `installed_wheel`
# needs dist/'s wheel first.
PARALLEL_VENVS = ["tests", "colab_pins", "newest_jax", "oldest_jax", "ipykernel6", "lint"]
BUILDERS = 3


def build_venvs() -> int:
    """Build (or check) every venv of PARALLEL_VENVS, BUILDERS at a time; each one's output
    goes to .nox/results/setup-NAME.log, printed when it fails. A built venv takes a
    second or two (its stamp says it is up to date)."""
    started = time.monotonic()
    nox = ensure_nox()
    RESULTS.mkdir(parents=True, exist_ok=True)
    waiting, running, failed = list(PARALLEL_VENVS), [], []
    while waiting or running:
        while waiting and len(running) < BUILDERS:
            name = waiting.pop(0)
            out = (RESULTS / f"setup-{name}.log").open("w")
            proc = subprocess.Popen(
                [str(nox), "--noxfile", str(ROOT / "noxfile.py"), "--install-only", "-s", name],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=quiet_env(),
            )
            running.append((name, proc, out))
        time.sleep(0.5)
        for entry in [e for e in running if e[1].poll() is not None]:
            running.remove(entry)
            name, proc, out = entry
            out.close()
            if proc.returncode:
                failed.append(name)
                print((RESULTS / f"setup-{name}.log").read_text()[-6000:], flush=True)
    log(
        f"venvs {'built' if not failed else 'failed: ' + ', '.join(failed)} "
        f"({BUILDERS} at a time) in {time.monotonic() - started:.0f}s"
    )
    return 1 if failed else 0


def cmd_test(args: list[str]) -> None:
    """Every default session of noxfile.py, pytest arguments passed on; then the summary.
    `--quick`: lint, types and the tests that need no kernel and no browser, in the main
    venv only (a developer's loop)."""
    started = time.monotonic()
    shutil.rmtree(RESULTS, ignore_errors=True)
    RESULTS.mkdir(parents=True)
    sessions: list[str] = []
    if args[:1] == ["--quick"]:
        sessions, args = ["-s", *QUICK_SESSIONS], args[1:]
        if not (ROOT / ".nox" / "tests" / "bin" / "python").exists():
            run_nox(["--install-only", "-s", "tests"])
    else:
        build_venvs()  # a venv that failed to build fails again, with its session, below
    # A session built --install-only notes its runs without running them: only what runs
    # from here on is summed up.
    for record in [*RESULTS.glob("*.json"), *RESULTS.glob("*.xml")]:
        record.unlink()
    rc = run_nox(["--report", str(REPORT), *sessions, *(["--", *args] if args else [])])
    log(f"total time {time.monotonic() - started:.0f}s")
    sys.exit(summarize(rc))


def cmd_setup(args: list[str]) -> None:
    """Build every venv `test` uses (and dist/), without running the tests."""
    rc = build_venvs()
    if rc:  # builders share the checkout's egg-info: a clash is built again, one at a time
        rc = run_nox(["--install-only", "-s", *PARALLEL_VENVS])
    rc = rc or run_nox(["-s", "dist"])
    rc = rc or run_nox(["--install-only", "-s", "types", "installed_wheel"])
    sys.exit(rc)


def cmd_lab(args: list[str]) -> None:
    exec_nox(["-s", "lab", "--", *args])


def cmd_bench(args: list[str]) -> None:
    exec_nox(["-s", "bench", "--", *args])


def cmd_docs(args: list[str]) -> None:
    exec_nox(["-s", "docs", "--", *args])


def cmd_nox(args: list[str]) -> None:
    exec_nox(args)


def hear_ctrl_c() -> None:
    """A shell that starts a command in the background without job control (`cmd &` in a
    script) starts it with SIGINT ignored, and every child inherits that: the kernels and
    the tests of Ctrl-C would then never see one. Handled here, children start with the
    default again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv: list[str]) -> None:
    hear_ctrl_c()
    commands = {
        "lab": cmd_lab,
        "test": cmd_test,
        "setup": cmd_setup,
        "bench": cmd_bench,
        "docs": cmd_docs,
        "nox": cmd_nox,
    }
    if not argv or argv[0] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    commands[argv[0]](argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
