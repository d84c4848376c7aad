"""``watch EXPR``, ``unwatch EXPR|N`` and ``watch`` alone: watches over a breakpoint's hits.

Registered in the public command table, so every view has them; the watches and their
histories live in :mod:`jaxdbg.engine.watches`. A watch belongs to the breakpoint of the
stop where it was set; its value at that stop is taken at once.
"""

from __future__ import annotations

from jaxdbg.engine import watches
from jaxdbg.engine.command_table import ArgumentKind, command, error
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session

SPARK = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 40  # the terminal's line of a scalar's history shows its last values


def book_of(s: Session) -> watches.WatchBook:
    """The session's watches: a reopened saved stop's own, else this process's."""
    return s.watch_book if s.watch_book is not None else watches.LIVE


def sparkline(numbers: list[float]) -> str:
    """A scalar's history in block characters (``▁▃▅█``), one per value."""
    finite = [x for x in numbers if x == x and abs(x) != float("inf")]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    span = (high - low) or 1.0
    return "".join("·" if x not in finite else SPARK[int((x - low) / span * (len(SPARK) - 1))] for x in numbers)


def _hit_label(value: watches.WatchValue) -> str:
    return "-" if value.hit is None else str(value.hit)


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


@command(
    "watch",
    usage="watch [expr]",
    summary="Evaluate expr at every later stop of this breakpoint and keep its value per hit; alone: list the watches.",
    argument=ArgumentKind.EXPRESSION,
)
def _watch(s: Session, arg: str) -> Output:
    if not arg:
        return watch_table(s)
    number = _number_or_error(s)
    if isinstance(number, Output):
        return number
    book = book_of(s)
    try:
        book.add(number, arg)
    except SyntaxError as e:
        return error(f"SyntaxError: {e.msg}")
    except ValueError as e:
        return error(str(e))
    # Its value here, at once, evaluated in the innermost frame (as at every later stop).
    book.record_with(number, s.info.hit, s.watch_values, only=arg.strip())
    return watch_table(s)


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
