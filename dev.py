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
`test` it sums up every run of the matrix on the closing `matrix:` line (devtools.summary).

What it shares with noxfile.py (the session lists, the build recipe, the results and
their summary) lives in devtools/.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if sys.version_info < (3, 10):
    sys.exit(f"[dev] Python >= 3.10 is required, this is {sys.version.split()[0]}")

from devtools.common import PARALLEL_VENVS, QUICK_SESSIONS, REPORT, RESULTS, ROOT, log, quiet_env, run_pip
from devtools.summary import summarize

TOOLS = ROOT / ".venv-tools"
NOX = "nox==2026.10.20"
BUILDERS = 3  # venvs built at a time
# What the venvs of `test` take (4.8 GiB after a run) plus pip's unpacking and the run's
# temporary files; under it, a build dies deep in pip with "No space left on device".
DISK_NEEDED_GIB = 8


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


def run_nox(args: list[str], env: dict[str, str] | None = None) -> int:
    return subprocess.run(
        [str(ensure_nox()), "--noxfile", str(ROOT / "noxfile.py"), *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        env={**quiet_env(), **(env or {})},
    ).returncode


def exec_nox(args: list[str]) -> None:
    nox = ensure_nox()
    os.chdir(ROOT)
    os.execve(str(nox), [str(nox), "--noxfile", str(ROOT / "noxfile.py"), *args], quiet_env())


# ------------------------------------------------------------------ commands


def warn_if_disk_short() -> None:
    """Say up front, in one line, when the disk cannot hold what the venvs need; the
    build still goes on (venvs built before need no more room)."""
    if (ROOT / ".nox" / "tests" / "bin" / "python").exists():
        return
    # The checkout and the temporary folder, once each when they share a disk.
    folders = {os.stat(folder).st_dev: folder for folder in (Path(tempfile.gettempdir()), ROOT)}
    for folder in folders.values():
        free_gib = shutil.disk_usage(folder).free / 2**30
        if free_gib < DISK_NEEDED_GIB:
            log(
                f"only {free_gib:.1f} GiB free on the disk of {folder}; the venvs and the test "
                f"run need about {DISK_NEEDED_GIB} GiB: free some (other clones' .nox folders "
                "hold 5 GiB each) or the build will fail for want of space"
            )


def build_venvs() -> int:
    """Build (or check) every venv of PARALLEL_VENVS, BUILDERS at a time; each one's output
    goes to .nox/results/setup-NAME.log, printed when it fails. A built venv takes a
    second or two (its stamp says it is up to date)."""
    started = time.monotonic()
    warn_if_disk_short()
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
    # The whole matrix builds the docs beside the core runs, which leave a core idle at times.
    aside = {"JAXDBG_DOCS_ASIDE": "1"} if not sessions and not args else {}
    rc = run_nox(["--report", str(REPORT), *sessions, *(["--", *args] if args else [])], env=aside)
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
