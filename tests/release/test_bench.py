"""The benchmark tool (``python3 dev.py bench`` = benchmarks/run_all.py): one table of every
benchmark, written as JSON, comparable across runs. No timing is asserted: the quick run
only has to produce every measure of the goals table, without the test suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import measure  # noqa: E402
import run_all  # noqa: E402

# The goals of the benchmark table: each a measure its benchmark prints.
GOAL_MEASURES = {
    "bench_breakpoint": (
        "passed stop (continue all)",
        "passed stop (disabled)",
        "passed stop (ignored)",
        "local in the frame, per step of a",  # a passed stop against a callback without operands, by local size
        "local in the frame vs",  # ... and with a big local against a small one
        "loop carry in the frame",  # ... with a big loop carry (no second copy of it)
        "local only the stop reads",  # ... with a local XLA computes for the stop alone
        "passed stop (false condition)",  # a screened stop, which sends what it reads
        "with a watch on a scalar",
        "untriggered breakpoint_if",
        "trace + compile, 10 frames x 30 locals",
        "in a Flax NNX train step, a Python loop",
    ),
    "bench_panel": ("pause -> panel shown, 20", "parameter tree as a local vs one array local"),
    # ... and a big pytree watched from the statistics the program sends, not its leaves
    "bench_conditions": ("pytree watch, per stop", "its leaves' statistics sent vs its leaves"),
    "bench_big_local": (": pause -> prompt (terminal)", "resident memory 1 s after the stop"),
    "bench_print": ("prints from a scan in a kernel",),
    # a passed stop in a sharded jit against the least any host-decided stop costs there
    "bench_sharded_stops": ("vs a host answer used on every device", "plain JAX: a host answer"),
}
# Every benchmark in benchmarks/, a test case each: they spread over the workers.
BENCHMARKS = [path.stem for path in run_all.benchmarks([])]


def _rows(ratio: float, low: float, high: float) -> dict:
    return {
        "commit": "abc",
        "date": "then",
        "rows": [
            {
                "measure": "m",
                "kind": "ratio",
                "unit": "s",
                "ours": ratio,
                "baseline": 1.0,
                "baseline_name": "",
                "ratio": ratio,
                "spread": [low, high],
                "goal": 1.0,
                "verdict": "",
                "note": "",
            }
        ],
    }


def test_a_result_inside_the_spread_is_within_noise():
    ours, base = [1.05, 0.97, 1.01], [1.0, 1.0, 1.0]
    row = measure.ratio_row("m", ours, base, 1.02)
    assert row["spread"] == [0.97, 1.05] and row["verdict"] == "within noise"
    assert measure.ratio_row("m", ours, base, 1.1)["verdict"] == "meets"
    assert measure.ratio_row("m", ours, base, 0.9)["verdict"] == "misses"
    assert measure.delta_row("mem", [130, 120], [100, 100], 50)["verdict"] == "meets"
    shown = measure.ratio_row("m", ours, base, None)
    assert shown["verdict"] == "no goal" and measure.goal_text(shown) == "-"


def test_compare_names_the_change_and_the_noise():
    old = _rows(1.5, 1.4, 1.6)
    assert run_all.compare(old, {**_rows(1.45, 1.3, 1.5), "commit": "new"}).endswith("within noise")
    assert run_all.compare(old, {**_rows(1.1, 1.0, 1.2), "commit": "new"}).endswith("better")
    assert run_all.compare(old, {**_rows(1.9, 1.8, 2.0), "commit": "new"}).endswith("worse")


def test_an_unknown_benchmark_is_named_with_the_known_ones():
    with pytest.raises(SystemExit, match="no such benchmark: bench_nope.py .*breakpoint"):
        run_all.benchmarks(["nope"])


def test_every_goal_is_measured_by_a_benchmark():
    assert set(GOAL_MEASURES) <= set(BENCHMARKS), sorted(set(GOAL_MEASURES) - set(BENCHMARKS))


@pytest.mark.kernel
# bench_distributed's case (jobs of processes, each importing JAX) can take about a
# minute on 2 busy cores; the others take well under one.
@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_the_quick_run_of_each_benchmark_writes_its_measures_without_the_test_suite(benchmark, tmp_path):
    """Each benchmark once, at its smallest size, in its own process (most with a real
    kernel or a job of processes), so that a benchmark that no longer runs fails here
    rather than at `dev.py bench`; run through run_all.py, which prints the one table
    and compares it with an older one."""
    # The test tools and harnesses cannot be imported: benchmarks must not need them.
    blocked = tmp_path / "blocked"
    (blocked / "support").mkdir(parents=True)
    for module in (blocked / "pytest.py", blocked / "support" / "__init__.py"):
        module.write_text("raise ImportError('benchmarks must not import the test suite')\n")
    out, old = tmp_path / "table.json", tmp_path / "old.json"
    old.write_text(json.dumps(_rows(1.5, 1.4, 1.6)))  # one measure ("m") no benchmark takes now
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), str(ROOT)]), "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run_all.py"),
            "--quick",
            "--only",
            benchmark,
            "--out",
            str(out),
            "--compare",
            str(old),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    table = json.loads(out.read_text())
    assert table["quick"] and not table["failures"]
    names = [row["measure"] for row in table["rows"]]
    assert names, proc.stdout[-4000:]
    for wanted in GOAL_MEASURES.get(benchmark, ()):
        assert any(wanted in name for name in names), (wanted, names)
    assert {row["benchmark"] for row in table["rows"]} == {benchmark}
    for row in table["rows"]:
        assert row["verdict"] in ("meets", "misses", "within noise", "no goal"), row
        assert (row["verdict"] == "no goal") == (row["goal"] is None), row
        assert row["ours"] > 0 and row["baseline"] > 0 and row["repeats"] >= 1, row
    assert "measure" in proc.stdout and "verdict" in proc.stdout  # the one table is printed
    assert "change from abc (then)" in proc.stdout and "m: not measured now" in proc.stdout
    assert all(f"{name}: new" in proc.stdout for name in names)
