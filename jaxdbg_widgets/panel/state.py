"""The panel's state as plain JSON data: what the browser code draws.

Pure functions over a :class:`jaxdbg.Session` and its values; no widgets here, so
the panel widget, its tests and the benchmarks share one description of a stop.
Everything user-controlled travels as text and is put into the page with
``textContent`` by the browser code, never as markup.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import numpy as np

from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES, Token

from jaxdbg.engine import breakpoint_state, summaries
from jaxdbg.capture.frames import display_filename
from jaxdbg.views import phrases
from jaxdbg.engine.commands import TABLE as COMMANDS
from jaxdbg.engine.session import Session
from jaxdbg.views import text as text_view

COMMAND_CHARS = 300  # an echoed command beyond this is cut (a 10 MB paste stays out)
LOG_CHARS = 2_000  # a result beyond this is cut until "Show more"
MAX_CHILDREN = 200  # pytree children listed per node
HISTORY_CHARS = 10_000  # longer typed lines are not kept in the history
# Arrays above this many elements get their statistics only when the browser shows
# their row (a "stats" request), after the panel is up: a 400 MB local took 0.7 s of
# host copy and reductions before the panel could be sent. 1M float32 take ~2 ms.
LAZY_STATS_ELEMENTS = 1_000_000

_LEXER = PythonLexer(stripnl=False, ensurenl=False)


#: ``(text cut to limit characters, how many were left out)``: as every log cuts it.
clip = text_view.clip


# --------------------------------------------------------------------------- buttons

#: The command line each toolbar button of panel.js runs ("ignore" takes its count there).
BUTTON_COMMANDS = ("continue", "up", "down", "skip", "quit", "continue all", "disable", "ignore",
                   "replay", "step", "next", "return")


def button_tooltips() -> dict[str, str]:
    """The buttons' tooltips: for each button's command line, its help in the command
    table. A button whose command the table lacks is left out (the panel hides it)."""
    tips = {line: COMMANDS.summary_of(line) for line in BUTTON_COMMANDS}
    return {line: tip for line, tip in tips.items() if tip}


# --------------------------------------------------------------------------- frames


def frame_rows(session: Session) -> list[dict]:
    """One row per frame, innermost first: function, short file:line, full path."""
    return [{"function": f.function, "where": f"{display_filename(f.filename)}:{f.lineno}",
             "path": f"{f.filename}:{f.lineno}", "replay": f.replay} for f in session.frames]


# --------------------------------------------------------------------------- source


def _token_class(kind: Any) -> str:
    """The short pygments class of a token type (``k``, ``nf``, ``s2``...)."""
    while kind is not Token and kind not in STANDARD_TYPES:
        kind = kind.parent
    return STANDARD_TYPES.get(kind, "")


def highlight_lines(lines: list[str]) -> list[list[list[str]]]:
    """Each line as ``[[css class, text], ...]`` runs of pygments tokens."""
    out: list[list[list[str]]] = [[] for _ in lines]
    row = 0
    for kind, text in _LEXER.get_tokens("\n".join(lines)):
        cls = _token_class(kind)
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                row += 1
            if piece and row < len(out):
                runs = out[row]
                if runs and runs[-1][0] == cls:
                    runs[-1][1] += piece
                else:
                    runs.append([cls, piece])
    return out


def source_state(session: Session, context: int) -> dict:
    """The source window around the selected frame's line, highlighted."""
    f = session.current
    view = session.source_view(f.lineno - context, f.lineno + context)
    mark = f"  {phrases.REPLAY_MARK}" if f.replay else ""
    return {"heading": f"{display_filename(f.filename)}:{f.lineno} in {f.function}{mark}",
            "path": f.filename, "first": view.first_lineno, "current": view.current_lineno,
            "lines": highlight_lines(view.lines), "context": context}


# --------------------------------------------------------------------------- locals


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def children(value: Any) -> list[tuple[str, Any]]:
    """The labelled children of a container a variable explorer would open."""
    if isinstance(value, dict):
        return [(repr(k), v) for k, v in value.items()]
    if _is_namedtuple(value):
        return [(name, getattr(value, name)) for name in type(value)._fields]
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(fld.name, getattr(value, fld.name, None)) for fld in dataclasses.fields(value)]
    return []


def expandable(value: Any) -> bool:
    try:
        if summaries.is_array(value) or isinstance(value, (str, bytes)):
            return False
        return bool(children(value))
    except Exception:
        return False


def _summary_text(row: summaries.ValueSummary) -> tuple[str, bool]:
    """The summary column (the statistics text ``locals`` shows too), and whether
    its statistics leave out NaN / Inf values."""
    if not row.is_array:
        return row.preview, False
    if row.shape == ():  # a scalar: its value (the preview) says it all
        return row.preview, False
    return row.details(), row.nonfinite


def _big_array(value: Any) -> bool:
    try:
        return summaries.is_array(value) and int(np.prod(value.shape)) > LAZY_STATS_ELEMENTS
    except Exception:
        return False


def local_row(name: str, value: Any, sharding: str | None = None, *, lazy: bool = False) -> dict:
    """One row of the locals table (or of an opened pytree node). ``sharding``: the
    value's layout in the program, as ``locals`` names it (Session.program_shardings).
    ``lazy``: a big array's statistics are left out and the row is marked ``pending``;
    the browser asks for them when it shows the row."""
    pending = lazy and _big_array(value)
    try:
        row = summaries.summarize(name, value, sharding, with_stats=not pending)
    except BaseException as e:  # a value's own code must not end the stop
        if isinstance(e, KeyboardInterrupt):
            raise
        row = summaries.ValueSummary(name, type(value).__name__,
                                     preview=f"<summary failed: {type(e).__name__}>")
    summary, partial = _summary_text(row)
    return {
        "name": name, "type": row.type_name, "array": row.array_type,
        "sharding": (row.sharding or "") if row.is_array else "",
        "summary": summary, "finite_only": partial,
        "nonfinite": row.nonfinite,
        "expandable": expandable(value), "pending": row.stats_pending,
        # An array with elements gets a small picture, asked for when the row is shown.
        "picture": bool(row.is_array and row.shape and _has_elements(row.shape)),
    }


def _has_elements(shape: tuple[int, ...]) -> bool:
    return all(n > 0 for n in shape)


def resolve(root: Any, path: Iterable[int]) -> Any:
    """The value at ``path`` (child positions) below ``root``."""
    value = root
    for index in path:
        value = children(value)[int(index)][1]
    return value


def child_rows(value: Any) -> tuple[list[dict], int]:
    """Rows for a node's children (at most MAX_CHILDREN), and how many there are; big
    arrays among them are ``pending`` (see :func:`local_row`)."""
    kids = children(value)
    return [local_row(label, v, lazy=True) for label, v in kids[:MAX_CHILDREN]], len(kids)




# --------------------------------------------------------------------------- watches

WATCH_POINTS = 500  # the latest values of each watch sent to the browser


def _stats_json(stats: summaries.ArrayStats | None) -> dict | None:
    if stats is None:
        return None

    def real(x: Any) -> float | None:
        return None if x is None or isinstance(x, complex) else float(x)
    return {"min": real(stats.min), "max": real(stats.max), "mean": real(stats.mean),
            "nan": stats.nan_count, "inf": stats.inf_count}


def watch_state(session: Session) -> dict:
    """The Watch box and table: each watch with its latest values over hits (a number
    per value for a scalar's plot, statistics for an array's)."""
    number = session.info.breakpoint_id
    rows = []
    for w in session.watched():
        values = w.values[-WATCH_POINTS:]
        rows.append({"expression": w.expression, "total": len(w.values),
                     "values": [{"hit": v.hit, "text": v.text[:200], "error": v.error or "",
                                 "number": v.number if v.number is None or v.number == v.number
                                 and abs(v.number) != float("inf") else None,
                                 "stats": _stats_json(v.stats)} for v in values]})
    return {"breakpoint": number, "watches": rows}


def breakpoint_rows() -> list[dict]:
    """The ``breakpoints`` table: hits, enabled, ignore count, condition, log template."""
    return [{"number": r.number, "where": r.location, "function": r.function, "hits": r.hits,
             "enabled": r.enabled, "ignore": r.ignore, "condition": r.condition,
             "log": r.log_template, "continuing": r.continuing} for r in breakpoint_state.rows()]
