"""Watches: expressions evaluated at every stop of a breakpoint, with a value per hit.

``watch EXPR`` at a stop of breakpoint N adds EXPR to N's watches for the rest of
the kernel session (or script). From then on every stop of N that reaches the host
evaluates it in its innermost frame, where the stop is served: the stops that open,
and the ones passed without opening (``continue all``, an ignore count, a false
condition, a logpoint, a disabled breakpoint), so the history fills in while a scan
runs on. A breakpoint without watches costs one dict lookup per stop.

What is kept per hit is small (:mod:`jaxdbg.engine.values.watch_values`): a number, an
array's statistics, a pytree's line and its leaves' norms, never a copy of the value.
An expression that raises keeps the error as its value and is reported once per
breakpoint; it never ends the computation.

A :class:`WatchBook` holds the watches of every breakpoint. :data:`LIVE` is this
process's; a reopened saved stop (:mod:`jaxdbg.engine.saved_stops`) has its own.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any, Callable

import numpy as np

from jaxdbg.engine import evaluation
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.values import sent_stats, watch_values
from jaxdbg.engine.values.watch_values import LeafNorms as LeafNorms  # the watches' API too
from jaxdbg.engine.values.watch_values import WatchValue as WatchValue
from jaxdbg.engine.values.watch_values import leaf_norms as leaf_norms
from jaxdbg.engine.values.watch_values import value_of as value_of
from jaxdbg.runtime import notices

HISTORY_LENGTH = 10_000  # values kept per watch (the oldest leave first)
# A full history drops its oldest values this many at a time: dropping one per hit moves
# the whole list each time, the most of what a watch on a number costs a passed stop.
_DROPPED_AT_ONCE = 1_000
#: Per-leaf numbers kept per watch, over its hits: a big tree keeps them for its latest
#: hits only (10,000 leaves: the last 200 hits, about 5 MB); older hits keep their line.
LEAF_VALUES = 2_000_000


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
            self.values += [watch_values.number_value(hit, number) for hit, number in taken]
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
            number = watch_values.numpy_number(result)
            if isinstance(result, sent_stats.SentStats):  # a local sent as its statistics
                found.append(watch_values.sent_stats_value(hit, result))
            elif number is not None:
                found.append(watch_values.number_value(hit, number))
            elif result is not evaluation.NOT_ON_NUMPY and (
                watch_values.real_scalar(result) is not None or watch_values.numeric_tree(result)
            ):
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
            scalar = watch_values.numpy_number(value)
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
