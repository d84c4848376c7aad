"""What every benchmark shares: interleaved repeats, medians with their spread, table rows.

A benchmark measures its candidates (ours and the baseline) in turn within each repeat,
so a change of machine load hits both alike, and reports the median of the per-repeat
ratios with their spread (min .. max). A goal inside the spread is "within noise": the
run cannot tell whether it is met.

Each ``bench_*.py`` builds rows with :func:`ratio_row` / :func:`delta_row` /
:func:`absolute_row` and hands
them to :func:`finish`, which prints them and, with ``--json PATH``, writes them for
``run_all.py`` (``python3 dev.py bench``), which prints the one table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

Row = dict[str, Any]


def arguments(description: str) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--quick`` (tiny sizes) and ``--json PATH``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (a smoke run)")
    parser.add_argument("--json", type=Path, help="also write the rows here, for run_all.py")
    return parser


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleave(candidates: dict[str, Callable[[], float]], repeats: int, warmup: int = 1) -> dict[str, list[float]]:
    """Run each candidate once per repeat, in turn (the order rotating each repeat); each
    call returns its own measurement. ``warmup`` rounds first are thrown away."""
    names = list(candidates)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(warmup + repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            value = candidates[name]()
            if round_ >= warmup:
                samples[name].append(value)
    return samples


def _verdict(low: float, high: float, goal: float | None) -> str:
    if goal is None:  # a row shown for scale
        return "no goal"
    if high <= goal:
        return "meets"
    if low > goal:
        return "misses"
    return "within noise"


def ratio_row(
    measure: str,
    ours: list[float],
    baseline: list[float],
    goal: float | None,
    *,
    unit: str = "s",
    baseline_name: str = "",
    note: str = "",
) -> Row:
    """A row comparing interleaved samples: the ratio ours/baseline per repeat (``goal``
    None: no goal, the row shows a cost for scale and its note says why)."""
    ratios = [o / b for o, b in zip(ours, baseline) if b > 0]
    low, high = (min(ratios), max(ratios)) if ratios else (float("nan"), float("nan"))
    ratio = statistics.median(ratios) if ratios else float("nan")
    return {
        "measure": measure,
        "kind": "ratio",
        "unit": unit,
        "ours": statistics.median(ours),
        "baseline": statistics.median(baseline),
        "baseline_name": baseline_name,
        "ratio": ratio,
        "spread": [low, high],
        "goal": goal,
        "verdict": _verdict(low, high, goal),
        "repeats": len(ratios),
        "note": note,
    }


def delta_row(
    measure: str,
    ours: list[float],
    baseline: list[float],
    goal: float,
    *,
    unit: str = "MB",
    baseline_name: str = "",
    note: str = "",
) -> Row:
    """A row whose goal is a difference: ours - baseline per repeat, at most ``goal``."""
    deltas = [o - b for o, b in zip(ours, baseline)]
    low, high = min(deltas), max(deltas)
    return {
        "measure": measure,
        "kind": "delta",
        "unit": unit,
        "ours": statistics.median(ours),
        "baseline": statistics.median(baseline),
        "baseline_name": baseline_name,
        "ratio": statistics.median(deltas),
        "spread": [low, high],
        "goal": goal,
        "verdict": _verdict(low, high, goal),
        "repeats": len(deltas),
        "note": note,
    }


def absolute_row(
    measure: str,
    ours: list[float],
    baseline: list[float],
    goal: float,
    *,
    unit: str = "s",
    baseline_name: str = "",
    note: str = "",
) -> Row:
    """A row whose goal is an absolute quantity (``goal``, in seconds or MB): ours per
    repeat, at most ``goal``; the baseline, measured alongside, is shown for scale."""
    low, high = min(ours), max(ours)
    return {
        "measure": measure,
        "kind": "absolute",
        "unit": unit,
        "ours": statistics.median(ours),
        "baseline": statistics.median(baseline),
        "baseline_name": baseline_name,
        "ratio": statistics.median(ours),
        "spread": [low, high],
        "goal": goal,
        "verdict": _verdict(low, high, goal),
        "repeats": len(ours),
        "note": note,
    }


_SCALE = {"s": (1.0, "s"), "ms": (1e3, "ms"), "us": (1e6, "µs"), "MB": (1.0, "MB")}


def quantity(value: float, unit: str) -> str:
    """``value`` (in seconds, or MB) shown in the row's unit."""
    scale, shown = _SCALE.get(unit, (1.0, unit))
    return f"{value * scale:.3g} {shown}"


def goal_text(row: Row) -> str:
    if row["kind"] == "absolute":
        return f"<= {quantity(row['goal'], row['unit'])}"
    if row["goal"] is None:
        return "-"
    return f"<= {row['goal']:g}x" if row["kind"] == "ratio" else f"<= +{row['goal']:g} {row['unit']}"


def result_text(row: Row) -> tuple[str, str]:
    """The row's result (ratio or difference) and its spread, as shown."""
    low, high = row["spread"]
    if row["kind"] == "ratio":
        return f"{row['ratio']:.3f}x", f"{low:.3f}..{high:.3f}"
    if row["kind"] == "absolute":
        return quantity(row["ratio"], row["unit"]), f"{quantity(low, row['unit'])}..{quantity(high, row['unit'])}"
    return f"{row['ratio']:+.0f} {row['unit']}", f"{low:+.0f}..{high:+.0f}"


def format_table(rows: list[Row]) -> str:
    """The rows as one aligned text table, notes (what bounds a missed goal) below it."""
    header = ("measure", "ours", "baseline", "ratio", "spread", "goal", "verdict")
    lines = [header]
    for row in rows:
        ratio, spread = result_text(row)
        lines.append(
            (
                row["measure"],
                quantity(row["ours"], row["unit"]),
                f"{quantity(row['baseline'], row['unit'])} {row['baseline_name']}".strip(),
                ratio,
                spread,
                goal_text(row),
                row["verdict"],
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"- {row['measure']}: {row['note']}" for row in rows if row.get("note") and row["verdict"] != "meets"]
    return "\n".join(out + ([""] + notes if notes else []))


def finish(rows: list[Row], json_path: Path | None) -> None:
    """Print the benchmark's rows; write them to ``json_path`` when given."""
    print(format_table(rows), flush=True)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(rows, indent=1))
