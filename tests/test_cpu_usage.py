"""Each test's CPU (``support/cpu_usage.py``): its process tree's, each child counted once, in
the JUnit XML that ``dev.py test``'s summary reads (``tests/release/test_dev_summary.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support.cpu_usage import tree_cpu

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devtools.summary import cpu_use  # noqa: E402

# Spends SPIN s of its own CPU, says so, and waits for its stdin to close.
SPINNER = textwrap.dedent(
    """
    import sys, time
    while time.process_time() < {spin}:
        pass
    print("spun", flush=True)
    sys.stdin.read()
    """
)
SPIN = 0.3
TICK = 0.02  # /proc counts in clock ticks (1/100 s)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a live child's CPU is read from /proc")
def test_a_child_counts_once_while_it_runs_and_once_reaped():
    before = tree_cpu()
    child = subprocess.Popen(
        [sys.executable, "-c", SPINNER.format(spin=SPIN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "spun\n"
        running = tree_cpu()
        assert running - before >= SPIN - TICK
    finally:
        child.communicate("")
    reaped = tree_cpu()
    # Reaped, its CPU moves from /proc into RUSAGE_CHILDREN: counted once, not twice.
    assert reaped >= running - TICK
    assert reaped - running < SPIN / 2


def test_each_test_of_a_run_carries_its_cpu_in_the_junit_xml(tmp_path):
    junit = tmp_path / "run.xml"
    one = "tests/test_architecture_tests.py::test_the_check_sees_every_way_to_import_a_test_module"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", f"--junitxml={junit}", one],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tests, modules, _ = cpu_use([("run", junit)])
    assert [test for _, test, _ in tests] == [one.replace("/", ".").replace(".py::", "::")]
    assert [module for _, _, module in modules] == ["tests.test_architecture_tests  (run)"]
