"""``watch EXPR``, ``unwatch EXPR|N`` and ``watch`` alone: watches over a breakpoint's hits.

``watch N`` prints watch N's values per hit, ``watch N leaves [HIT]`` a pytree watch's
leaf norms and ``watch diff N HIT1 HIT2`` which leaves changed between two hits
(:mod:`jaxdbg.commands.watch_tables`). A bare number is a watch's number, never an
expression to watch (a constant has one value at every hit).

Registered in the public command table, so every view has them; the watches and their
histories live in :mod:`jaxdbg.engine.watches`. A watch belongs to the breakpoint of the
stop where it was set; its value at that stop is taken at once.
"""

from __future__ import annotations

import dataclasses
import re

from jaxdbg.commands import watch_tables
from jaxdbg.commands.watch_tables import SPARK_POINTS, sparkline
from jaxdbg.engine import breakpoint_checks, watches
from jaxdbg.engine.command_table import ArgumentKind, command, error
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.engine.values.tree_summaries import byte_size

_HISTORY = re.compile(r"(\d+)(?:\s+(all|leaves)(?:\s+(\d+))?)?")
_DIFF = re.compile(r"diff\s+(\d+)\s+(\d+)\s+(\d+)")
HISTORY_USAGE = "watch N [all | leaves [HIT]] (N: the watch's number in 'watch')"
DIFF_USAGE = "watch diff N HIT1 HIT2 (N: the watch's number in 'watch')"


def book_of(s: Session) -> watches.WatchBook:
    """The session's watches: a reopened saved stop's own, else this process's."""
    return s.watch_book if s.watch_book is not None else watches.LIVE


_hit_label = watch_tables.hit_label


def describe(number: int, watched: list[watches.Watch]) -> str:
    """The watch table as text: each watch, its latest value and its history."""
    if not watched:
        return f"(no watches at breakpoint {number}; 'watch EXPR' adds one)"
    lines = [f"Watches at breakpoint {number}:"]
    for i, w in enumerate(watched, 1):
        if not w.values:
            lines.append(f"  {i}: {w.expression}  (no value yet)")
            continue
        last = w.values[-1]
        shown = f"*** {last.error}" if last.error else last.text
        lines.append(
            f"  {i}: {w.expression} = {shown}  (hit {_hit_label(last)}; "
            f"{len(w.values)} value{'s' if len(w.values) != 1 else ''})"
        )
        numbers = [n for _, n in w.numbers]
        if len(numbers) > 1:
            recent = numbers[-SPARK_POINTS:]
            lines.append(f"       {sparkline(recent)}  min {min(numbers):.6g}  max {max(numbers):.6g}")
    if any(len(w.values) > 1 for w in watched):
        lines.append("(watch N: a watch's values per hit)")
    return "\n".join(lines)


def _number_or_error(s: Session) -> int | Output:
    number = s.info.breakpoint_id
    if number is None:
        return error("this stop does not come from a numbered breakpoint; watches follow one")
    return number


def watch_table(s: Session) -> Output:
    number = _number_or_error(s)
    if isinstance(number, Output):
        return number
    watched = book_of(s).watches(number)
    return Output(OutputKind.WATCHES, describe(number, watched), watched)


def _is_expression(text: str) -> bool:
    try:
        compile(text, "<watch>", "eval")
    except SyntaxError:
        return False
    return True


def _tables(s: Session, number: int, arg: str) -> Output | None:
    """``watch N [all | leaves [HIT]]`` and ``watch diff N HIT1 HIT2``; None for an
    expression to watch."""
    history, diff = _HISTORY.fullmatch(arg), _DIFF.fullmatch(arg)
    if history is None and diff is None:
        word = arg.split()[0]
        if word == "diff" and not _is_expression(arg):
            return error(f"usage: {DIFF_USAGE}")
        if word.isdigit() and not _is_expression(arg):
            return error(f"usage: {HISTORY_USAGE}")
        return None
    watched = book_of(s).watches(number)
    index = int((history or diff).group(1))  # type: ignore[union-attr]
    if not 0 < index <= len(watched):
        listed = ", ".join(f"{i}: {w.expression}" for i, w in enumerate(watched, 1))
        return error(
            f"no watch {index} at breakpoint {number}" + (f" (watched: {listed})" if listed else " (none set)")
        )
    watch = watched[index - 1]
    if diff is not None:
        text = watch_tables.diff(number, index, watch, int(diff.group(2)), int(diff.group(3)))
    elif history is not None and history.group(2) == "leaves":
        hit = history.group(3)
        model = watch_tables.leaf_histories(number, index, watch, int(hit) if hit else None)
        if isinstance(model, str):
            return error(model)
        return Output(OutputKind.LEAF_NORMS, watch_tables.leaves_text(model), model)
    elif history is not None and history.group(3) is None:
        text = watch_tables.history(number, index, watch, every=history.group(2) == "all")
    else:
        return error(f"usage: {HISTORY_USAGE}")
    return error(text[4:]) if text.startswith("*** ") else Output(OutputKind.TEXT, text)


@command(
    "watch",
    usage="watch [expr | N [all | leaves [HIT]] | diff N HIT1 HIT2]",
    summary="Evaluate expr at every later stop of this breakpoint and keep its value per hit; alone: list the "
    "watches; N: watch N's values per hit (leaves: a pytree's leaf norms; diff: which leaves changed).",
    argument=ArgumentKind.EXPRESSION,
)
def _watch(s: Session, arg: str) -> Output:
    if not arg:
        return watch_table(s)
    number = _number_or_error(s)
    if isinstance(number, Output):
        return number
    table = _tables(s, number, arg.strip())
    if table is not None:
        return table
    book = book_of(s)
    try:
        book.add(number, arg)
    except SyntaxError as e:
        return error(f"SyntaxError: {e.msg}")
    except ValueError as e:
        return error(str(e))
    # Its value here, at once, evaluated in the innermost frame (as at every later stop).
    book.record_with(number, s.info.hit, s.watch_values, only=arg.strip())
    table, hint = watch_table(s), _statistics_hint(s, number, arg.strip())
    return dataclasses.replace(table, text=f"{table.text}\n{hint}") if hint else table


def _statistics_hint(s: Session, number: int, expression: str) -> str | None:
    """What a watch of a big local whole costs until its program is traced again: it
    crosses to the host at every stop, while a program traced with the watch set sends
    only the statistics the watch keeps (capture.screening's statistics forms)."""
    if s.info.sent_whole is None or expression not in breakpoint_checks.watched_whole(number):
        return None
    size = s.info.sent_whole(expression)
    if size is None:
        return None
    return (
        f"note: {expression} ({byte_size(size)}) crosses to the host whole at every later stop of this "
        "program, passed ones too; once the program is traced again (run the cell defining the jitted "
        "function, or call jax.clear_caches()), it sends only the statistics this watch keeps."
    )


@command(
    "unwatch",
    usage="unwatch expr|N",
    summary="Stop watching expr (or watch N of the list).",
    argument=ArgumentKind.EXPRESSION,
)
def _unwatch(s: Session, arg: str) -> Output:
    number = _number_or_error(s)
    if isinstance(number, Output):
        return number
    if not arg:
        return error("unwatch takes the expression or its number in 'watch'")
    try:
        gone = book_of(s).remove(number, arg)
    except ValueError as e:
        return error(str(e))
    table = watch_table(s)
    return Output(OutputKind.WATCHES, f"No longer watching {gone!r}.\n{table.text}", table.data)
