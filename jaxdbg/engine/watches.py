"""Watches: expressions evaluated at every stop of a breakpoint, with a value per hit.

``watch EXPR`` at a stop of breakpoint N adds EXPR to N's watches for the rest of
the kernel session (or script). From then on every stop of N that reaches the host
evaluates it in its innermost frame, where the stop is served: the stops that open,
and the ones passed without opening (``continue all``, an ignore count, a false
condition, a logpoint, a disabled breakpoint), so the history fills in while a scan
runs on. A breakpoint without watches costs one dict lookup per stop.

What is kept per hit is small: a real scalar's number (the panel plots it), an
array's statistics (min / max / mean and NaN / Inf counts, as ``locals`` shows),
anything else its short repr. An expression that raises keeps the error as its
value and is reported once per breakpoint; it never ends the computation.

A :class:`WatchBook` holds the watches of every breakpoint. :data:`LIVE` is this
process's; a reopened saved stop (:mod:`jaxdbg.engine.saved_stops`) has its own.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Callable

import numpy as np

from jaxdbg.engine import evaluation
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.values import summaries, tree_summaries
from jaxdbg.runtime import notices
from jaxdbg.runtime.guarded_calls import format_exception, guarded

HISTORY_LENGTH = 10_000  # values kept per watch (the oldest leave first)
TEXT_CHARS = 200  # a value's text beyond this is cut


@dataclasses.dataclass(frozen=True)
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


@dataclasses.dataclass
class Watch:
    """An expression and its values over the stops since it was set."""

    expression: str
    values: list[WatchValue] = dataclasses.field(default_factory=list)

    def snapshot(self) -> "Watch":
        return Watch(self.expression, list(self.values))

    @property
    def numbers(self) -> list[tuple[int, float]]:
        """``(position, value)`` of each value that is a number, positions counted from 1."""
        return [(i, v.number) for i, v in enumerate(self.values, 1) if v.number is not None]


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
            summary = summaries.summarize("", result)
            return WatchValue(
                hit, summary.details()[:TEXT_CHARS], stats=summary.stats, shape=summary.shape, dtype=summary.dtype
            )
        tree = tree_summaries.tree_summary(result)
        if tree is not None:  # a pytree's line; its global norm is what the plot draws
            return WatchValue(hit, tree.line()[:TEXT_CHARS], number=tree.norm)
        return WatchValue(hit, tree_summaries.short_description(result)[:TEXT_CHARS])

    return guarded(describe, lambda e: WatchValue(hit, "", error=format_exception(e)))


ValuesOf = Callable[[list[str], "int | None"], list[WatchValue]]


def in_frame(frame: Frame) -> ValuesOf:
    """Watch values taken in ``frame`` (a stop's innermost frame, in this process)."""
    return lambda expressions, hit: [evaluate(e, frame, hit) for e in expressions]


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

    def recorded(self, number: int | None) -> int:
        """How many values breakpoint ``number``'s watches have taken (a view that polls it
        redraws when it moved, so a passed stop does no drawing)."""
        return self._recorded.get(number or -1, 0)

    def has_watches(self, number: int | None) -> bool:
        return number is not None and bool(self._by_breakpoint.get(number))

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
        watched = [w for w in list(self._by_breakpoint.get(number, [])) if only is None or w.expression == only]
        if not watched:
            return
        values = values_of([w.expression for w in watched], hit)
        for watch, value in zip(watched, values):
            if value.error is not None:
                self._report_once(number, watch.expression, value.error)
            with self._lock:
                watch.values.append(value)
                del watch.values[:-HISTORY_LENGTH]
                self._recorded[number] = self._recorded.get(number, 0) + 1

    def load(self, number: int, watches: list[Watch]) -> None:
        """Put saved watches in (a reopened stop's book)."""
        with self._lock:
            self._by_breakpoint[number] = [w.snapshot() for w in watches]

    def _report_once(self, number: int, expression: str, error: str) -> None:
        key = (number, expression)
        with self._lock:
            if key in self._reported:
                return
            self._reported.add(key)
        notices.notice(
            f"watch {expression!r} at breakpoint {number} raised {error}; its values show the error (said once)"
        )


#: This process's watches.
LIVE = WatchBook()
