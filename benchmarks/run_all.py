"""Run every benchmark in benchmarks/ and print one table (``python3 dev.py bench``).

Each ``bench_*.py`` runs in its own process (some set JAX flags at import) with
``--json``; their rows are joined into one table: measure, ours, baseline, ratio, the
spread of the ratio over the interleaved repeats, the goal, and the verdict ("meets",
"misses", or "within noise" when the goal lies inside the spread; "no goal" for a row
shown for scale). The table is
written as JSON under test-artifacts/ (``--out`` to choose the file), so that two
commits can be compared: ``--compare OLD.json`` prints, per measure, the ratio then and
now, and "within noise" when the new one lies inside the old run's spread.

    python benchmarks/run_all.py [--quick] [--only NAME ...] [--out PATH] [--compare OLD.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from measure import Row, format_table, result_text  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"


def benchmarks(only: list[str]) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if not only:
        return found
    wanted = [f"bench_{name.removeprefix('bench_').removesuffix('.py')}.py" for name in only]
    unknown = sorted(set(wanted) - {p.name for p in found})
    if unknown:
        sys.exit(f"no such benchmark: {', '.join(unknown)} (there are: {', '.join(p.stem for p in found)})")
    return [p for p in found if p.name in wanted]


def run_one(path: Path, quick: bool, timeout: float) -> tuple[list[Row], str | None]:
    """The rows of one benchmark, and why it failed (None when it did not)."""
    with tempfile.TemporaryDirectory(prefix="jaxdbg-bench-") as tmp:
        out = Path(tmp) / "rows.json"
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(
                [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            ),
        )
        cmd = [sys.executable, str(path), "--json", str(out), *(["--quick"] if quick else [])]
        print(f"[bench] {path.name} ...", flush=True)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, timeout=timeout, capture_output=True, text=True
            )
        except subprocess.TimeoutExpired:
            return [], f"timed out after {timeout:.0f} s"
        print(f"[bench] {path.name}: {time.monotonic() - started:.0f} s", flush=True)
        if proc.returncode != 0 or not out.is_file():
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            return [], f"exit status {proc.returncode}:\n{tail}"
        rows = json.loads(out.read_text())
    for row in rows:
        row["benchmark"] = path.stem
    return rows, None


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def _versions() -> str:
    try:
        import jax

        return f"Python {platform.python_version()}, jax {jax.__version__}"
    except ImportError:
        return f"Python {platform.python_version()}"


def compare(old: dict, new: dict) -> str:
    """Per measure found in both runs: the ratio then and now, and what changed."""
    before = {row["measure"]: row for row in old["rows"]}
    lines = [f"change from {old.get('commit', '?')} ({old.get('date', '?')}) to {new['commit']}:"]
    for row in new["rows"]:
        then = before.get(row["measure"])
        if then is None:
            lines.append(f"  {row['measure']}: new")
            continue
        low, high = then["spread"]
        now_text, then_text = result_text(row)[0], result_text(then)[0]
        if low <= row["ratio"] <= high:
            change = "within noise"
        else:
            change = "better" if row["ratio"] < then["ratio"] else "worse"
        lines.append(f"  {row['measure']}: {then_text} -> {now_text}  {change}")
    gone = sorted(set(before) - {row["measure"] for row in new["rows"]})
    lines += [f"  {measure}: not measured now" for measure in gone]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (a smoke run)")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME", help="e.g. breakpoint panel")
    parser.add_argument("--out", type=Path, help="the JSON file (default test-artifacts/bench-COMMIT.json)")
    parser.add_argument("--compare", type=Path, metavar="OLD.json", help="print the change from that run")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    args = parser.parse_args(argv)
    old = json.loads(args.compare.read_text()) if args.compare else None

    rows: list[Row] = []
    failures: dict[str, str] = {}
    for path in benchmarks(args.only):
        got, failure = run_one(path, args.quick, args.timeout)
        rows += got
        if failure:
            failures[path.stem] = failure
    commit = _git_commit()
    result = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "quick": args.quick,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "versions": _versions(),
        "rows": rows,
        "failures": failures,
    }
    out = args.out or ARTIFACTS / f"bench-{commit}{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))

    print(f"\n{result['versions']}; {result['machine']}; commit {commit}{' (quick: tiny sizes)' if args.quick else ''}")
    print(format_table(rows))
    for name, why in failures.items():
        print(f"\n{name} FAILED: {why}")
    if old is not None:
        print("\n" + compare(old, result))
    print(f"\n[bench] the table is in {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
