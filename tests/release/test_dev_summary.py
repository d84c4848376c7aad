"""`dev.py test`'s closing `matrix:` line (devtools.summary) counts every run of the matrix: each pytest run's JUnit
XML, each check (lint, types, docs) as one, and a session that failed before it wrote
anything fails the line too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dev(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # devtools/ is not installed: it sits beside dev.py
    from devtools import common, summary

    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(common, "REPORT", tmp_path / "nox-report.json")
    return summary


def _run(results: Path, slug: str, label: str, counts=None, junit: str | None = None) -> None:
    (results / f"{slug}.json").write_text(
        json.dumps({"label": label, "versions": "Python 3.x", "counts": counts, "junit": f"{slug}.xml"})
    )
    if junit is not None:
        (results / f"{slug}.xml").write_text(junit)


JUNIT = (
    '<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="{e}" failures="{f}" '
    'skipped="{s}" tests="{t}"></testsuite></testsuites>'
)


def test_the_matrix_line_sums_every_run(dev, tmp_path, capsys):
    _run(tmp_path, "lint", "lint (ruff)", {"passed": 1})
    _run(tmp_path, "main", "main", junit=JUNIT.format(e=0, f=0, s=3, t=10))
    _run(tmp_path, "colab", "colab pins (core)", junit=JUNIT.format(e=0, f=0, s=1, t=5))
    _run(tmp_path, "wheel", "installed_wheel kernel", {})
    assert dev.summarize(0) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "matrix: 12 passed, 0 failed, 4 skipped"
    assert "installed_wheel kernel: Python 3.x" in out


def test_a_failure_anywhere_fails_the_line(dev, tmp_path, capsys):
    _run(tmp_path, "main", "main", junit=JUNIT.format(e=1, f=1, s=0, t=10))
    _run(tmp_path, "core", "oldest jax (core)")  # its pytest never wrote its XML
    _run(tmp_path, "docs", "docs", {"failed": 1})
    assert dev.summarize(0) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "matrix: 8 passed, 4 failed, 0 skipped"


def test_a_session_that_failed_or_did_not_run_is_named(dev, tmp_path, capsys):
    _run(tmp_path, "lint", "lint (ruff)", {"passed": 1})
    (tmp_path / "nox-report.json").write_text(
        json.dumps(
            {
                "sessions": [
                    {"name": "colab_pins", "result": "skipped", "reason": "Python interpreter 3.13 not found"},
                    {"name": "ipykernel6", "result": "failed", "reason": None},
                ]
            }
        )
    )
    assert dev.summarize(0) == 1
    out = capsys.readouterr().out
    assert "session colab_pins: NOT RUN, Python interpreter 3.13 not found" in out
    assert "session ipykernel6: FAILED" in out


CASE = '<testcase classname="{module}" name="{name}" time="1"><properties><property name="cpu_s" value="{cpu}"/></properties></testcase>'


def test_the_summary_names_the_tests_and_modules_that_cost_the_most_cpu(dev, tmp_path, capsys):
    cases = [("tests.a", "one", 30.5), ("tests.a", "two", 0.5), ("tests.b", "three", 20)]
    _run(
        tmp_path,
        "main",
        "main",
        junit='<testsuites><testsuite tests="4">'
        + "".join(CASE.format(module=m, name=n, cpu=c) for m, n, c in cases)
        + '<testcase classname="tests.b" name="unmeasured" time="1"/></testsuite></testsuites>',
    )
    assert dev.summarize(0) == 0
    out = capsys.readouterr().out
    heaviest = out[out.index("CPU spent by the tests: 51s in all") :].splitlines()
    assert heaviest[1:4] == [
        "[dev]     30.5s  tests.a::one  (main)",
        "[dev]     20.0s  tests.b::three  (main)",
        "[dev]      0.5s  tests.a::two  (main)",
    ]
    assert heaviest[5:7] == ["[dev]     31.0s    2  tests.a  (main)", "[dev]     20.0s    1  tests.b  (main)"]


def test_a_venv_is_described_by_its_versions(dev):
    import platform
    import sys

    described = dev.describe(sys.executable)
    assert described.startswith(f"Python {platform.python_version()}, jax "), described
    assert all(f", {name} " in described for name in ("ipykernel", "IPython", "ipywidgets", "jupyter_client"))
