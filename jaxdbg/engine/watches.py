"""Watches: expressions evaluated at every stop of a breakpoint, with a value per hit.

``watch EXPR`` at a stop of breakpoint N adds EXPR to N's watches for the rest of
the kernel session (or script). From then on every stop of N that reaches the host
evaluates it in its innermost frame, where the stop is served: the stops that open,
and the ones passed without opening (``continue all``, an ignore count, a false
condition, a logpoint, a disabled breakpoint), so the history fills in while a scan
runs on. A breakpoint without watches costs one dict lookup per stop.

What is kept per hit is small: a real scalar's number (the panel plots it), an
array's statistics (min / max / mean and NaN / Inf counts, as ``locals`` shows), a
pytree's summary line with its global norm and, per float leaf, the leaf's norm and
NaN / Inf counts (:class:`LeafNorms`, never a copy of the tree), anything else its
short repr. An expression that raises keeps the error as its
value and is reported once per breakpoint; it never ends the computation.

A :class:`WatchBook` holds the watches of every breakpoint. :data:`LIVE` is this
process's; a reopened saved stop (:mod:`jaxdbg.engine.saved_stops`) has its own.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any, Callable

import jax
import numpy as np

from jaxdbg.engine import evaluation
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.values import leaf_stats, sent_stats, summaries, tree_hits, tree_summaries
from jaxdbg.runtime import notices
from jaxdbg.runtime.guarded_calls import format_exception, guarded

HISTORY_LENGTH = 10_000  # values kept per watch (the oldest leave first)
# A full history drops its oldest values this many at a time: dropping one per hit moves
# the whole list each time, the most of what a watch on a number costs a passed stop.
_DROPPED_AT_ONCE = 1_000
TEXT_CHARS = 200  # a value's text beyond this is cut
#: Per-leaf numbers kept per watch, over its hits: a big tree keeps them for its latest
#: hits only (10,000 leaves: the last 200 hits, about 5 MB); older hits keep their line.
LEAF_VALUES = 2_000_000


@dataclasses.dataclass(frozen=True, eq=False)
class LeafNorms:
    """A pytree watch's float leaves at one hit, by key path: each leaf's L2 norm over its
    finite values (NaN for a leaf that could not be read) and its NaN / Inf counts.
    ``paths`` is one tuple shared by the hits of one tree structure."""

    paths: tuple[str, ...]
    norms: np.ndarray  # float64, one per path
    nans: np.ndarray  # int64
    infs: np.ndarray  # int64

    def at(self, path: str) -> tuple[float, int, int] | None:
        """``(norm, nans, infs)`` of the leaf at ``path``, None when this hit has none."""
        try:
            i = self.paths.index(path)
        except ValueError:
            return None
        return float(self.norms[i]), int(self.nans[i]), int(self.infs[i])


@dataclasses.dataclass  # not frozen, though never changed: that costs a µs per value, made at each step of a loop
class WatchValue:
    """One watch's value at one stop. ``hit`` is the breakpoint's hit number (None at a
    stop of a disabled breakpoint, which is not a hit)."""

    hit: int | None
    text: str
    number: float | None = None  # a real scalar (a pytree: its global norm), for the plot
    stats: summaries.ArrayStats | None = None  # an array's statistics
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    error: str | None = None
    leaves: LeafNorms | None = None  # a pytree's float leaves

    @property
    def nonfinite(self) -> tuple[int, int] | None:
        """``(NaN, Inf)`` counts of an array or a pytree (all its float leaves)."""
        if self.stats is not None:
            return self.stats.nan_count, self.stats.inf_count
        if self.leaves is not None:
            return int(self.leaves.nans.sum()), int(self.leaves.infs.sum())
        return None


@dataclasses.dataclass
class Watch:
    """An expression and its values over the stops since it was set."""

    expression: str
    values: list[WatchValue] = dataclasses.field(default_factory=list)
    # A watch of a local that is a number, taken at passed stops: (hit, NumPy scalar)
    # pairs made into values when read (:meth:`snapshot`), not at every step of a loop.
    numbers_taken: list[tuple[int | None, Any]] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def snapshot(self) -> "Watch":
        self.keep_numbers_taken()
        return Watch(self.expression, self.values[-HISTORY_LENGTH:])

    def keep_numbers_taken(self) -> None:
        """Make :attr:`numbers_taken` values, in order (the book's lock held)."""
        if self.numbers_taken:
            taken, self.numbers_taken = self.numbers_taken[-HISTORY_LENGTH:], []
            self.values += [_number_value(hit, number) for hit, number in taken]
            _drop_oldest(self.values)

    @property
    def numbers(self) -> list[tuple[int, float]]:
        """``(position, value)`` of each value that is a number, positions counted from 1."""
        return [(i, v.number) for i, v in enumerate(self.values, 1) if v.number is not None]

    def overview(self) -> str:
        """What a plot of the history reads without hovering: ``first 0.5 · last 196 ·
        range 0.5 … 196`` for numbers (a pytree: its global norm), the mean's first and
        last and the min … max over hits for an array; empty for anything else."""
        return " · ".join(self.overview_parts())

    def overview_parts(self) -> list[str]:
        """:meth:`overview`'s pieces: the first and last values, then the range (and how
        many values were not finite)."""
        numbers = [n for _, n in self.numbers]
        if numbers:
            finite = [n for n in numbers if math.isfinite(n)]
            parts = [f"first {numbers[0]:.6g}", f"last {numbers[-1]:.6g}"]
            if finite:
                parts.append(f"range {min(finite):.6g} … {max(finite):.6g}")
            if len(finite) < len(numbers):
                parts.append(f"{len(numbers) - len(finite)} not finite")
            return parts
        stats = [v.stats for v in self.values if v.stats is not None]
        means = [float(s.mean) for s in stats if isinstance(s.mean, (float, np.floating))]
        lows = [float(s.min) for s in stats if isinstance(s.min, (float, np.floating))]
        highs = [float(s.max) for s in stats if isinstance(s.max, (float, np.floating))]
        if not means or not lows or not highs:
            return []
        return [f"mean first {means[0]:.6g}", f"last {means[-1]:.6g}", f"range {min(lows):.6g} … {max(highs):.6g}"]


def _real_scalar(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if summaries.is_array(value) or isinstance(value, np.generic):
        if np.ndim(value) != 0:
            return None
        host = np.asarray(value)
        if host.dtype.kind in "biuf" or host.dtype.name == "bfloat16":
            return float(host.astype(np.float64))
    return None


def value_of(hit: int | None, result: Any) -> WatchValue:
    """What a watch keeps of ``result`` (user code: a repr or ``__array__`` may raise)."""

    def describe() -> WatchValue:
        number = _real_scalar(result)
        if number is not None:
            return WatchValue(hit, summaries.scalar_text(result), number=number)
        if summaries.is_array(result):
            return _array_value(hit, summaries.summarize("", result))
        if tree_summaries.is_tree(result):
            tree = guarded(lambda: _tree_value(hit, result), lambda e: None)
            if tree is not None:
                return tree
        return WatchValue(hit, tree_summaries.short_description(result)[:TEXT_CHARS])

    return guarded(describe, lambda e: WatchValue(hit, "", error=format_exception(e)))


def _array_value(hit: int | None, summary: summaries.ValueSummary) -> WatchValue:
    return WatchValue(
        hit, summary.details()[:TEXT_CHARS], stats=summary.stats, shape=summary.shape, dtype=summary.dtype
    )


def _tree_value(hit: int | None, value: Any) -> WatchValue | None:
    """A pytree's line, its global norm (what the plot draws) and its leaves' norms; None
    for a tree without arrays, whose short repr says more. The tree is walked once."""
    quick = tree_hits.tree_hit(value)  # a tree with float leaves, its structure read once
    if quick is not None:
        return _tree_hit_value(hit, quick)
    found = tree_summaries.leaves(value)
    if not any(leaf.is_array for leaf in found):
        tree = tree_summaries.tree_summary(value)
        return None if tree is None else WatchValue(hit, tree.line()[:TEXT_CHARS])
    # The leaves' statistics first: the line's summary then reads them from cache.
    norms = leaf_norms(value, found)
    kind = tree_summaries.library_kind(value)
    tree = tree_summaries.summarize_leaves(summaries.type_name(value), kind, found)
    return WatchValue(hit, tree.line()[:TEXT_CHARS], number=tree.norm, leaves=norms)


def _tree_hit_value(hit: int | None, quick: tree_hits.TreeHit) -> WatchValue:
    numbers = LeafNorms(quick.paths, quick.norms, quick.nans, quick.infs)
    return WatchValue(hit, quick.summary.line()[:TEXT_CHARS], number=quick.summary.norm, leaves=numbers)


def _sent_stats_value(hit: int | None, sent: sent_stats.SentStats) -> WatchValue:
    """What a watch keeps of a local sent as its statistics: a pytree's or an array's."""
    if isinstance(sent, sent_stats.SentArrayStats):
        return _array_value(hit, sent.summary())
    quick = guarded(sent.hit, lambda e: None)
    if quick is None:
        return WatchValue(hit, "", error="its leaves' statistics could not be read")
    return _tree_hit_value(hit, quick)


def leaf_norms(value: Any, listed: list[tree_summaries.Leaf] | None = None) -> LeafNorms | None:
    """Each float array leaf's norm and NaN / Inf counts, by key path; None without any.
    ``listed``: the value's leaves, when they were listed already."""
    is_float: dict[Any, bool] = {}  # per dtype: its name is slow to make, and 10,000 leaves share a few
    floats = []
    for leaf in tree_summaries.leaves(value) if listed is None else listed:
        if leaf.is_array:
            dtype = leaf.value.dtype
            if dtype not in is_float:
                is_float[dtype] = leaf_stats.is_float(dtype)
            if is_float[dtype]:
                floats.append(leaf)
    if not floats:
        return None
    found = leaf_stats.many_leaf_stats([leaf.value for leaf in floats])
    return LeafNorms(
        tuple(leaf.path for leaf in floats),
        np.array([math.sqrt(s.sum_squares) if s is not None else math.nan for s in found], dtype=np.float64),
        np.array([s.nan_count if s is not None else 0 for s in found], dtype=np.int64),
        np.array([s.inf_count if s is not None else 0 for s in found], dtype=np.int64),
    )


ValuesOf = Callable[[list[str], "int | None"], list[WatchValue]]


def in_frame(frame: Frame) -> ValuesOf:
    """Watch values taken in ``frame`` (a stop's innermost frame, in this process)."""
    return lambda expressions, hit: [evaluate(e, frame, hit) for e in expressions]


def on_numbers(numbers: Callable[[str], Any], frame_of: Callable[[], Frame]) -> ValuesOf:
    """Watch values taken on a screened stop's NumPy values (``numbers(name)``, as the
    program sent them; KeyError: not at hand) where the watch is a number NumPy
    computes as JAX would (a scalar local, a comparison), a local sent as its
    statistics (sent_stats.SentStats) or a pytree local of numeric
    arrays (its line, norms and NaN / Inf counts read the leaves' values only);
    anything else in the frame of JAX arrays ``frame_of()`` builds."""

    def values(expressions: list[str], hit: int | None) -> list[WatchValue]:
        found = []
        for expression in expressions:
            result = _on_numpy(expression, numbers)
            number = _numpy_number(result)
            if isinstance(result, sent_stats.SentStats):  # a local sent as its statistics
                found.append(_sent_stats_value(hit, result))
            elif number is not None:
                found.append(_number_value(hit, number))
            elif result is not evaluation.NOT_ON_NUMPY and (_real_scalar(result) is not None or _numeric_tree(result)):
                found.append(value_of(hit, result))  # what the JAX values give
            else:
                found.append(evaluate(expression, frame_of(), hit))
        return found

    return values


def _on_numpy(expression: str, numbers: Callable[[str], Any]) -> Any:
    """A watch's value on the NumPy values: a local's as sent (the common watch), else
    the expression's (evaluation.NOT_ON_NUMPY where NumPy may not evaluate it)."""
    if expression.isidentifier():
        try:
            value = numbers(expression)
        except KeyError:
            return evaluation.NOT_ON_NUMPY
        if isinstance(value, (np.ndarray, np.generic, sent_stats.SentStats)):
            return value
    return evaluation.on_numpy_values(expression, numbers)


# NumPy's number types: a watch on one keeps its number (value_of's, made sooner).
_NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdg")


def _numpy_number(value: Any) -> Any:
    """``value`` as a NumPy scalar when it is a number NumPy holds as JAX does (a copy:
    the program's buffer is not ours after the host call); None otherwise."""
    if type(value) is np.ndarray and value.ndim == 0 and value.dtype.kind in "biuf":
        return value[()]
    return value if type(value) in _NUMPY_SCALARS else None


def _number_value(hit: int | None, number: Any) -> WatchValue:
    """What :func:`value_of` keeps of a NumPy number, made without its general checks."""
    return WatchValue(hit, str(number), number=float(number))


def _numeric_tree(value: Any) -> bool:
    """A pytree whose leaves are all NumPy arrays of booleans, integers or floats."""
    if not tree_summaries.is_tree(value):
        return False
    leaves = jax.tree_util.tree_leaves(value)
    return bool(leaves) and all(
        isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "biuf" for leaf in leaves
    )


def evaluate(expression: str, frame: Frame, hit: int | None) -> WatchValue:
    """``expression`` in ``frame``, as a watch keeps it; never raises for user errors."""
    try:
        result = evaluation.evaluate(expression, frame, {}, expression_only=True)
    except SyntaxError as e:
        return WatchValue(hit, "", error=f"SyntaxError: {e.msg}")
    except evaluation.EvaluationError as e:
        return WatchValue(hit, "", error=str(e))
    return value_of(hit, result)


class WatchBook:
    """The watches of each breakpoint, by number, and their histories."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_breakpoint: dict[int, list[Watch]] = {}
        self._reported: set[tuple[int, str]] = set()  # (breakpoint, expression) whose error was said
        self._recorded: dict[int, int] = {}  # values taken per breakpoint: views poll it to redraw
        self.version = 0  # changes whenever a watch is added, removed or loaded

    def recorded(self, number: int | None) -> int:
        """How many values breakpoint ``number``'s watches have taken (a view that polls it
        redraws when it moved, so a passed stop does no drawing)."""
        return self._recorded.get(number or -1, 0)

    def numbers(self) -> list[int]:
        """The breakpoints that have watches, in the order their first was set."""
        with self._lock:
            return [n for n, w in self._by_breakpoint.items() if w]

    def has_watches(self, number: int | None) -> bool:
        return number is not None and bool(self._by_breakpoint.get(number))

    def expressions(self, number: int | None) -> list[str]:
        """Breakpoint ``number``'s watched expressions (no copy of their values)."""
        with self._lock:
            return [w.expression for w in self._by_breakpoint.get(number or -1, [])]

    def watches(self, number: int | None) -> list[Watch]:
        """Copies of breakpoint ``number``'s watches, in the order they were set."""
        with self._lock:
            return [w.snapshot() for w in self._by_breakpoint.get(number or -1, [])]

    def add(self, number: int, expression: str) -> Watch:
        """Watch ``expression`` at breakpoint ``number``; ValueError if it is watched already."""
        expression = expression.strip()
        compile(expression, "<watch>", "eval")  # SyntaxError now, not at every stop
        with self._lock:
            watches = self._by_breakpoint.setdefault(number, [])
            if any(w.expression == expression for w in watches):
                raise ValueError(f"{expression!r} is watched already at breakpoint {number}")
            watch = Watch(expression)
            watches.append(watch)
            self.version += 1
            return watch

    def remove(self, number: int, which: str) -> str:
        """Stop watching ``which`` (the expression, or its number in the list from 1);
        returns the expression. ValueError when there is no such watch."""
        which = which.strip()
        with self._lock:
            watches = self._by_breakpoint.get(number, [])
            index = next((i for i, w in enumerate(watches) if w.expression == which), None)
            if index is None and which.isdigit() and 0 < int(which) <= len(watches):
                index = int(which) - 1
            if index is None:
                listed = ", ".join(f"{i}: {w.expression}" for i, w in enumerate(watches, 1))
                raise ValueError(
                    f"no watch {which!r} at breakpoint {number}"
                    + (f" (watched: {listed})" if listed else " (none set)")
                )
            self.version += 1
            return watches.pop(index).expression

    def record(self, number: int | None, hit: int | None, frames: list[Frame], only: str | None = None) -> None:
        """Evaluate breakpoint ``number``'s watches (or the one ``only``) in the stop's
        innermost frame and keep the values. Nothing to do when it has none."""
        if not frames:
            return
        self.record_with(number, hit, in_frame(frames[0]), only)

    def record_with(self, number: int | None, hit: int | None, values_of: "ValuesOf", only: str | None = None) -> None:
        """As :meth:`record`, the values taken by ``values_of(expressions, hit)``: in this
        process's frames, or in the process that owns another process's stop."""
        if number is None or not self._by_breakpoint.get(number):
            return
        watched = self._by_breakpoint[number]
        watched = [w for w in watched if w.expression == only] if only is not None else list(watched)
        values = values_of([w.expression for w in watched], hit)
        errors = []
        with self._lock:
            for watch, value in zip(watched, values):
                watch.keep_numbers_taken()
                kept = watch.values
                if value.leaves is not None:
                    value = _sharing_paths(kept, value)
                    _forget_old_leaves(kept, value)
                kept.append(value)
                _drop_oldest(kept)
                if value.error is not None:
                    errors.append((watch.expression, value.error))
            self._recorded[number] = self._recorded.get(number, 0) + len(watched)
        for expression, error in errors:
            self._report_once(number, expression, error)

    def record_numbers(self, number: int, hit: int | None, numbers: Callable[[str], Any]) -> bool:
        """Keep breakpoint ``number``'s watches at a screened stop where each is a local
        whose value (``numbers(name)``, as the program sent it) is a number, the common
        watch of a loop (a loss, a step), at the cost of an append; False, keeping
        nothing, where one is not (:meth:`record_with` takes them then)."""
        watched = self._by_breakpoint.get(number)
        if not watched:
            return True
        watched = list(watched)
        taken: list[Any] = []
        for watch in watched:
            try:
                value = numbers(watch.expression) if watch.expression.isidentifier() else None
            except KeyError:
                return False
            scalar = _numpy_number(value)
            if scalar is None:
                return False
            taken.append(scalar)
        with self._lock:
            for watch, value in zip(watched, taken):
                watch.numbers_taken.append((hit, value))
                if len(watch.numbers_taken) > HISTORY_LENGTH + _DROPPED_AT_ONCE:
                    del watch.numbers_taken[:-HISTORY_LENGTH]
            self._recorded[number] = self._recorded.get(number, 0) + len(taken)
        return True

    def load(self, number: int, watches: list[Watch]) -> None:
        """Put saved watches in (a reopened stop's book)."""
        with self._lock:
            self._by_breakpoint[number] = [w.snapshot() for w in watches]
            self.version += 1

    def _report_once(self, number: int, expression: str, error: str) -> None:
        key = (number, expression)
        with self._lock:
            if key in self._reported:
                return
            self._reported.add(key)
        notices.notice(
            f"watch {expression!r} at breakpoint {number} raised {error}; its values show the error (said once)"
        )


def _drop_oldest(values: list[WatchValue]) -> None:
    if len(values) > HISTORY_LENGTH + _DROPPED_AT_ONCE:
        del values[:-HISTORY_LENGTH]


def _sharing_paths(values: list[WatchValue], value: WatchValue) -> WatchValue:
    """``value`` with its leaves' paths the tuple of the value before, when equal (one
    tuple per tree structure, not per hit)."""
    previous = values[-1].leaves if values else None
    if value.leaves is None or previous is None or previous.paths is value.leaves.paths:
        return value
    if previous.paths != value.leaves.paths:
        return value
    return dataclasses.replace(value, leaves=dataclasses.replace(value.leaves, paths=previous.paths))


def _forget_old_leaves(values: list[WatchValue], newest: WatchValue) -> None:
    """Keep per-leaf numbers for the latest hits only, :data:`LEAF_VALUES` in all."""
    if newest.leaves is None:
        return
    keep = max(1, LEAF_VALUES // max(1, len(newest.leaves.paths)))  # with newest, appended next
    if len(values) >= keep and values[-keep].leaves is not None:
        values[-keep] = dataclasses.replace(values[-keep], leaves=None)


#: This process's watches.
LIVE = WatchBook()
