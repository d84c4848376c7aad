"""The panel's state as plain JSON data: what the browser code draws.

Pure functions over a :class:`jaxdbg.Session` and its values; no widgets here, so
the panel widget, its tests and the benchmarks share one description of a stop.
Everything user-controlled travels as text and is put into the page with
``textContent`` by the browser code, never as markup.
"""

from __future__ import annotations

from typing import Any, Iterable

from pygments.token import STANDARD_TYPES, Token

from jaxdbg.engine import breakpoint_state, library_frames
from jaxdbg.engine.command_table import TABLE as COMMANDS
from jaxdbg.engine.frames import display_filename
from jaxdbg.engine.session import Session
from jaxdbg.engine.values import local_rows, summaries
from jaxdbg.runtime import phrases
from jaxdbg.views import source_tokens
from jaxdbg.views import text as text_view

COMMAND_CHARS = 300  # an echoed command beyond this is cut (a 10 MB paste stays out)
LOG_CHARS = 2_000  # a result beyond this is cut until "Show more"
MAX_CHILDREN = 200  # pytree children listed per node
HISTORY_CHARS = 10_000  # longer typed lines are not kept in the history


#: ``(text cut to limit characters, how many were left out)``: as every log cuts it.
clip = text_view.clip


# --------------------------------------------------------------------------- buttons

#: The command line each toolbar button of panel.js runs ("ignore" takes its count there).
BUTTON_COMMANDS = (
    "continue",
    "up",
    "down",
    "skip",
    "quit",
    "continue all",
    "disable",
    "ignore",
    "replay",
    "step",
    "next",
    "return",
)


def button_tooltips() -> dict[str, str]:
    """The buttons' tooltips: for each button's command line, its help in the command
    table. A button whose command the table lacks is left out (the panel hides it)."""
    tips = {line: COMMANDS.summary_of(line) for line in BUTTON_COMMANDS}
    return {line: tip for line, tip in tips.items() if tip}


# --------------------------------------------------------------------------- frames


def frame_rows(session: Session) -> list[dict]:
    """One row per frame, innermost first: its index, function, short file:line, full
    path; a run of installed libraries' frames is one ``fold`` row (``… 5 frames in flax``,
    ``index``: its first frame) unless they are shown (:mod:`jaxdbg.engine.library_frames`)."""
    rows = []
    for item in session.frame_layout():
        if isinstance(item, library_frames.Fold):
            rows.append(
                {"index": item.first, "function": item.text, "where": "", "path": "", "replay": False}
                | {"fold": item.text, "count": item.count}
            )
            continue
        f = session.frames[item]
        rows.append(
            {
                "index": item,
                "function": f.function,
                "where": f"{display_filename(f.filename)}:{f.lineno}",
                "path": f"{f.filename}:{f.lineno}",
                "replay": f.replay,
            }
        )
    return rows


# --------------------------------------------------------------------------- source


def _token_class(kind: Any) -> str:
    """The short pygments class of a token type (``k``, ``nf``, ``s2``...)."""
    while kind is not Token and kind not in STANDARD_TYPES:
        kind = kind.parent
    return STANDARD_TYPES.get(kind, "")


def highlight_lines(lines: list[str]) -> list[list[list[str]]]:
    """Each line as ``[[css class, text], ...]`` runs of pygments tokens, neighbours of one
    class joined."""
    out: list[list[list[str]]] = []
    for tokens in source_tokens.token_lines(lines):
        runs: list[list[str]] = []
        for kind, text in tokens:
            cls = _token_class(kind)
            if runs and runs[-1][0] == cls:
                runs[-1][1] += text
            else:
                runs.append([cls, text])
        out.append(runs)
    return out


def source_state(session: Session, context: int) -> dict:
    """The source window around the selected frame's line, highlighted."""
    f = session.current
    view = session.source_view(f.lineno - context, f.lineno + context)
    mark = f"  {phrases.REPLAY_MARK}" if f.replay else ""
    return {
        "heading": f"{display_filename(f.filename)}:{f.lineno} in {f.function}{mark}",
        "path": f.filename,
        "first": view.first_lineno,
        "current": view.current_lineno,
        "lines": highlight_lines(view.lines),
        "context": context,
    }


# --------------------------------------------------------------------------- locals


#: One row of the locals table: the Session makes it (a remote stop's comes from the
#: process that owns it), so the summaries are cut as every view cuts them.
local_row = local_rows.local_row
children = local_rows.children
expandable = local_rows.expandable
LAZY_STATS_ELEMENTS = local_rows.LAZY_STATS_ELEMENTS


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

    return {
        "min": real(stats.min),
        "max": real(stats.max),
        "mean": real(stats.mean),
        "nan": stats.nan_count,
        "inf": stats.inf_count,
    }


def watch_state(session: Session) -> dict:
    """The Watch box and table: each watch with its latest values over hits (a number
    per value for a scalar's plot, statistics for an array's) and its first and last
    values and range, written beside the plot."""
    number = session.info.breakpoint_id
    rows = []
    for w in session.watched():
        values = w.values[-WATCH_POINTS:]
        rows.append(
            {
                "expression": w.expression,
                "total": len(w.values),
                "overview": w.overview_parts(),  # written beside the plot: first, last, range
                "leaves": bool(w.values) and w.values[-1].leaves is not None,  # a pytree's: its leaves button
                "values": [
                    {
                        "hit": v.hit,
                        "text": v.text[:200],
                        "error": v.error or "",
                        "number": v.number
                        if v.number is None or v.number == v.number and abs(v.number) != float("inf")
                        else None,
                        "stats": _stats_json(v.stats),
                    }
                    for v in values
                ],
            }
        )
    return {"breakpoint": number, "watches": rows}


def breakpoint_rows() -> list[dict]:
    """The ``breakpoints`` table: hits, enabled, ignore count, condition, log template."""
    return [
        {
            "number": r.number,
            "where": r.location,
            "function": r.function,
            "hits": r.hits,
            "enabled": r.enabled,
            "ignore": r.ignore,
            "condition": r.condition,
            "log": r.log_template,
            "continuing": r.continuing,
        }
        for r in breakpoint_state.rows()
    ]
