"""The watch tables at the prompt: ``watch N`` (a watch's values per hit), ``watch N
leaves [HIT]`` (a pytree's leaf norms) and ``watch diff N HIT1 HIT2`` (which leaves
changed between two hits, and by how much). Text over :mod:`jaxdbg.engine.watches`;
``watch N leaves`` also as a model (:class:`LeafHistories`) the panel draws as plots.
"""

from __future__ import annotations

import dataclasses
import math

from jaxdbg.engine import watches
from jaxdbg.engine.values import drawable
from jaxdbg.runtime import phrases

SPARK = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 40  # the terminal's line of a scalar's history shows its last values
HISTORY_ROWS = 50  # `watch N` shows the latest values; `watch N all` every one


def sparkline(numbers: list[float]) -> str:
    """A scalar's history in block characters (``▁▃▅█``), one per value."""
    finite = [x for x in numbers if x == x and abs(x) != float("inf")]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    span = (high - low) or 1.0
    return "".join("·" if x not in finite else SPARK[int((x - low) / span * (len(SPARK) - 1))] for x in numbers)


def hit_label(value: watches.WatchValue) -> str:
    return "-" if value.hit is None else str(value.hit)


def _plural(n: int, word: str) -> str:
    return f"{phrases.count(n)} {word}{'' if n == 1 else 's'}"


def leaf_count(n: int, kind: str = "") -> str:
    """``3 leaves``, ``1 float leaf``: as every watch table counts them."""
    return f"{phrases.count(n)} {kind}{'leaf' if n == 1 else 'leaves'}"


def _columns(rows: list[list[str]], right: set[int]) -> list[str]:
    """Rows of cells as aligned text (the columns in ``right`` aligned right)."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    out = []
    for row in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def _first_nonfinite(leaves: watches.LeafNorms) -> str:
    """``NaN in .l2.kernel`` (the first leaf in key-path order), or ``Inf in ...``."""
    for counts, word in ((leaves.nans, "NaN"), (leaves.infs, "Inf")):
        hits = [i for i, n in enumerate(counts) if n]
        if hits:
            more = f" and {leaf_count(len(hits) - 1, 'more ')}" if len(hits) > 1 else ""
            return f"{word} in {leaves.paths[hits[0]]}{more}"
    return ""


def _row(value: watches.WatchValue) -> list[str]:
    """One hit's cells: the hit, then its value(s) by kind."""
    hit = hit_label(value)
    if value.error:
        return [hit, f"*** {value.error}"]
    if value.leaves is not None:
        nans, infs = value.nonfinite or (0, 0)
        norm = "" if value.number is None else f"{value.number:.6g}"
        return [hit, norm, str(nans), str(infs), _first_nonfinite(value.leaves)]
    if value.stats is not None:
        s = value.stats
        return [hit, *(f"{x:.6g}" if isinstance(x, (int, float)) else str(x) for x in (s.min, s.max, s.mean))] + [
            str(s.nan_count),
            str(s.inf_count),
        ]
    return [hit, value.text]


def _header(last: watches.WatchValue | None) -> tuple[list[str], set[int]]:
    if last is not None and last.leaves is not None:
        return ["hit", "‖·‖", "NaN", "Inf", ""], {0, 1, 2, 3}
    if last is not None and last.stats is not None:
        return ["hit", "min", "max", "mean", "NaN", "Inf"], {0, 1, 2, 3, 4, 5}
    return ["hit", "value"], {0}


def history(number: int, index: int, watch: watches.Watch, every: bool = False) -> str:
    """``watch N``: a row per value kept (the latest :data:`HISTORY_ROWS`, or all)."""
    values = watch.values
    title = f"Watch {index} at breakpoint {number}: {watch.expression}, {_plural(len(values), 'value')}"
    if not values:
        return title + " (none yet)"
    shown = values if every else values[-HISTORY_ROWS:]
    if len(shown) < len(values):
        title += f"; the latest {len(shown)} (watch {index} all: every one)"
    overview = watch.overview()
    typical = next((v for v in reversed(values) if not v.error), None)
    header, right = _header(typical)
    lines = [title] + ([f"  {overview}"] if overview else [])
    lines += _columns([header] + [_row(v) for v in shown], right)
    if typical is not None and typical.leaves is not None:
        lines.append(f"  (watch {index} leaves [HIT]: each leaf's norm; watch diff {index} HIT1 HIT2: what changed)")
    return "\n".join(lines)


def find_hit(watch: watches.Watch, hit: int | None) -> watches.WatchValue | str:
    """The latest value of ``hit`` that kept per-leaf numbers (the latest value when
    ``hit`` is None), or why there is none."""
    kept = [v for v in watch.values if v.leaves is not None]
    if not kept:
        # Not a pytree, or a stop saved by a jaxdbg that kept each hit's line and norm only.
        return f"{watch.expression!r} has no per-leaf values (only a pytree watch keeps them)"
    if hit is None:
        return kept[-1]
    found = [v for v in kept if v.hit == hit]
    if found:
        return found[-1]
    hits = [v.hit for v in kept if v.hit is not None]
    span = f"hits {min(hits)} to {max(hits)}" if hits else "no numbered hits"
    return f"no per-leaf values of {watch.expression!r} at hit {hit} (kept: {span})"


@dataclasses.dataclass(frozen=True, eq=False)
class LeafHistories(drawable.Drawable):
    """``watch N leaves [HIT]``: a pytree watch's float leaves at one hit, and each leaf's
    norm over the latest hits that kept per-leaf numbers (:data:`LEAF_POINTS`). Drawn
    as a table with a line of block characters per leaf (text: :func:`leaves_text`), and
    by the panel as a plot per leaf (``views/watch_views.py``)."""

    number: int  # the breakpoint
    index: int  # the watch's number in ``watch``
    expression: str
    at: watches.WatchValue  # the hit shown; its ``leaves`` is set
    kept: tuple[watches.WatchValue, ...]  # values with per-leaf numbers, oldest first

    @property
    def paths(self) -> tuple[str, ...]:
        assert self.at.leaves is not None
        return self.at.leaves.paths

    def title(self) -> str:
        return (
            f"Watch {self.index} at breakpoint {self.number}: {self.expression} at hit {hit_label(self.at)}, "
            f"{leaf_count(len(self.paths), 'float ')} (norms over finite values)"
        )

    def numbers(self, i: int) -> tuple[float, int, int]:
        """Leaf ``i``'s norm, NaN and Inf counts at the hit shown."""
        at = self.at.leaves
        assert at is not None
        return float(at.norms[i]), int(at.nans[i]), int(at.infs[i])

    def norms(self, i: int, points: int = 0) -> list[tuple[int | None, float]]:
        """``(hit, norm)`` of leaf ``i`` at each kept hit that has it (the latest
        ``points``; 0: all)."""
        path = self.paths[i]
        found = []
        for v in self.kept[-points:] if points else self.kept:
            leaves = v.leaves
            assert leaves is not None
            # The hits of one tree share its key paths: its number is at the same place.
            norm = float(leaves.norms[i]) if leaves.paths is self.paths else (leaves.at(path) or (None,))[0]
            if norm is not None:
                found.append((v.hit, norm))
        return found

    def history(self, i: int, points: int = 0) -> watches.Watch:
        """Leaf ``i``'s norms (as :meth:`norms`) as a watch of its own, named by its key
        path: what a plot of one number draws."""
        values = [watches.WatchValue(hit, f"{norm:.6g}", number=norm) for hit, norm in self.norms(i, points)]
        return watches.Watch(self.paths[i], values)


LEAF_POINTS = 500  # the latest hits whose leaf norms ``watch N leaves`` shows (a plot's points)


def leaf_histories(number: int, index: int, watch: watches.Watch, hit: int | None) -> LeafHistories | str:
    """``watch N leaves [HIT]``'s data, or why there is none."""
    value = find_hit(watch, hit)
    if isinstance(value, str):
        return value
    kept = tuple(v for v in watch.values if v.leaves is not None)[-LEAF_POINTS:]
    return LeafHistories(number, index, watch.expression, value, kept)


def leaves_text(model: LeafHistories) -> str:
    """``watch N leaves [HIT]`` as text: each float leaf's norm and NaN / Inf at one hit,
    and its norm over the last hits kept, as block characters."""
    shown = len(model.kept[-SPARK_POINTS:])
    rows = [["leaf", "‖·‖", "NaN", "Inf", f"over the last {shown} hits"]]
    for i, path in enumerate(model.paths):
        norm, nans, infs = model.numbers(i)
        series = [n for _, n in model.norms(i, SPARK_POINTS)]
        finite = [x for x in series if math.isfinite(x)]
        spread = f"  {min(finite):.4g} … {max(finite):.4g}" if len(finite) > 1 else ""
        rows.append([path, f"{norm:.6g}", str(nans), str(infs), sparkline(series) + spread])
    return "\n".join([model.title()] + _columns(rows, {1, 2, 3}))


def leaves(number: int, index: int, watch: watches.Watch, hit: int | None) -> str:
    """``watch N leaves [HIT]`` as text (``*** why`` when there is nothing to show)."""
    model = leaf_histories(number, index, watch, hit)
    return f"*** {model}" if isinstance(model, str) else leaves_text(model)


def _change(a: float, b: float) -> str:
    if not (math.isfinite(a) and math.isfinite(b)):
        return ""
    ratio = f" ({b / a:.3g}x)" if a else ""
    return f"{b - a:+.4g}{ratio}"


def diff(number: int, index: int, watch: watches.Watch, first: int, second: int) -> str:
    """``watch diff N HIT1 HIT2``: the leaves whose norm or NaN / Inf counts differ
    between two hits, the largest change first (a new NaN or Inf before any)."""
    values = [find_hit(watch, first), find_hit(watch, second)]
    for v in values:
        if isinstance(v, str):
            return f"*** {v}"
    a, b = (v.leaves for v in values if isinstance(v, watches.WatchValue))
    assert a is not None and b is not None
    changed: list[tuple[tuple[int, float], list[str]]] = []
    same = 0
    for path in dict.fromkeys(a.paths + b.paths):
        before, after = a.at(path), b.at(path)
        if before is None or after is None:
            only = first if after is None else second
            changed.append(((2, math.inf), [path, "", "", f"only at hit {only}", ""]))
            continue
        (n0, nan0, inf0), (n1, nan1, inf1) = before, after
        norms_equal = n0 == n1 or (math.isnan(n0) and math.isnan(n1))
        if norms_equal and (nan0, inf0) == (nan1, inf1):
            same += 1
            continue
        counts = "" if (nan0, inf0) == (nan1, inf1) else f"NaN {nan0} → {nan1}, Inf {inf0} → {inf1}"
        size = abs(n1 - n0) if math.isfinite(n1 - n0) else math.inf
        changed.append(((1 if counts else 0, size), [path, f"{n0:.6g}", f"{n1:.6g}", _change(n0, n1), counts]))
    changed.sort(key=lambda item: item[0], reverse=True)
    total = len(changed) + same
    title = (
        f"Watch {index} at breakpoint {number}: {watch.expression} from hit {first} to hit {second}: "
        f"{phrases.count(len(changed))} of {leaf_count(total)} changed "
        "(by norm and NaN / Inf counts), the largest change first"
    )
    if not changed:
        return title
    rows = [["leaf", f"‖·‖ at {first}", f"‖·‖ at {second}", "change", ""]] + [r for _, r in changed]
    lines = [title] + _columns(rows, {1, 2, 3})
    if same:
        lines.append(f"  ({leaf_count(same)} unchanged)")
    return "\n".join(lines)
