"""The test matrix's results: each run notes itself under .nox/results/ (``record``), and
``summarize`` prints them all, with each run's time, the ten slowest tests, the tests and
modules that cost the most CPU, and the closing ``matrix:`` line."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from devtools import common


def describe(python: str | Path) -> str:
    """The versions a venv's Python runs with, read from the installed packages' metadata
    (importing them took 2-3 s a venv, six times a run)."""
    code = (
        "import sys\n"
        "from importlib.metadata import version, PackageNotFoundError\n"
        "def v(name):\n"
        "    try:\n"
        "        return version(name)\n"
        "    except PackageNotFoundError:\n"
        "        return 'missing'\n"
        'print(f\'Python {sys.version.split()[0]}, jax {v("jax")}, ipykernel {v("ipykernel")}, \'\n'
        '      f\'IPython {v("ipython")}, ipywidgets {v("ipywidgets")}, jupyter_client {v("jupyter_client")}\')'
    )
    out = subprocess.run(
        [str(python), "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout.strip() or f"(could not run: {out.stderr.strip().splitlines()[-1:]})"


def record(label: str, versions: str, counts: dict[str, int] | None = None, seconds: float | None = None) -> Path:
    """Note a run for the summary: its counts, or (None) the JUnit XML its pytest writes,
    whose path this returns; and how long it took, once it has ended."""
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"\W+", "-", label).strip("-")
    (common.RESULTS / f"{slug}.json").write_text(
        json.dumps({"label": label, "versions": versions, "counts": counts, "junit": f"{slug}.xml", "seconds": seconds})
    )
    return common.RESULTS / f"{slug}.xml"


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


def _cpu_of(case: ET.Element) -> float | None:
    """The CPU seconds a test case's JUnit XML notes (``tests/support/cpu_usage.py``)."""
    for prop in case.iter("property"):
        if prop.get("name") == "cpu_s":
            try:
                return float(prop.get("value") or 0)
            except ValueError:
                return None
    return None


def cpu_use(
    runs: list[tuple[str, Path]], count: int = 10
) -> tuple[list[tuple[float, str, str]], list[tuple[float, int, str]], float]:
    """Where the CPU went over the runs' JUnit XML: the ``count`` costliest tests
    (seconds, test, run), the ``count`` costliest modules (seconds, tests, module), and
    the CPU seconds of every test together. A test's CPU holds its kernels', scripts',
    servers' and browsers' (each test's whole process tree, measured by the tests)."""
    cases: list[tuple[float, str, str]] = []
    modules: dict[str, list[float]] = {}
    for label, path in runs:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        for case in root.iter("testcase"):
            cpu = _cpu_of(case)
            if cpu is None:
                continue
            module = case.get("classname", "")
            test = f"{module}::{case.get('name', '')}".lstrip(":")
            cases.append((cpu, test, label))
            spent = modules.setdefault(f"{module}  ({label})", [0.0, 0])
            spent[0] += cpu
            spent[1] += 1
    by_module = sorted(((cpu, int(n), module) for module, (cpu, n) in modules.items()), reverse=True)
    return sorted(cases, reverse=True)[:count], by_module[:count], sum(cpu for cpu, _, _ in cases)


def summarize(nox_rc: int) -> int:
    """Print every run of the matrix with its time, the ten slowest tests, the ten
    costliest tests and modules on CPU and the closing `matrix:` line; the exit status."""
    print("\n[dev] test matrix:", flush=True)
    total = {"passed": 0, "failed": 0, "skipped": 0}
    junits: list[tuple[str, Path]] = []
    for path in sorted(common.RESULTS.glob("*.json"), key=lambda p: p.stat().st_mtime):
        if path == common.REPORT:
            continue
        run = json.loads(path.read_text())
        counts = run["counts"]
        if counts is None:  # a pytest run: its JUnit XML, or nothing when it did not finish
            junits.append((run["label"], common.RESULTS / run["junit"]))
            counts = junit_counts(common.RESULTS / run["junit"]) or {"failed": 1}
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
    heaviest, modules, cpu_total = cpu_use(junits)
    if heaviest:
        print(f"[dev] CPU spent by the tests: {cpu_total:.0f}s in all; the ten costliest tests:", flush=True)
        for seconds, test, label in heaviest:
            print(f"[dev]   {seconds:6.1f}s  {test}  ({label})", flush=True)
        print("[dev] the ten costliest modules on CPU (seconds, tests):", flush=True)
        for seconds, n, module in modules:
            print(f"[dev]   {seconds:6.1f}s {n:4d}  {module}", flush=True)
    failed_sessions = False
    if common.REPORT.is_file():
        for session in json.loads(common.REPORT.read_text()).get("sessions", []):
            if session["result"] == "skipped":
                print(f"[dev]   session {session['name']}: NOT RUN, {session.get('reason')}", flush=True)
            elif session["result"] == "failed":
                failed_sessions = True
                print(f"[dev]   session {session['name']}: FAILED (its output above says why)", flush=True)
    print(f"matrix: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped", flush=True)
    return 1 if nox_rc != 0 or failed_sessions or total["failed"] else 0
