"""Watches drawn for a stop's static summary: a table of values over hits, as HTML and text;
and ``watch N leaves`` as a plot per leaf (the panel's console draws it).

A scalar's history is a small line plot (inline SVG, one point per value, so a saved
notebook shows it) and, in text, a line of block characters; an array's is its
statistics at the first and the latest hit. The data is the engine's
(:class:`jaxdbg.engine.watches.Watch`); nothing is re-worded here.
"""

from __future__ import annotations

import math
from typing import Sequence

from markupsafe import Markup

from jaxdbg.commands import watch_tables
from jaxdbg.commands import watches as watch_commands
from jaxdbg.commands.watch_tables import hit_label
from jaxdbg.engine.watches import Watch, WatchValue
from jaxdbg.views import palette, theme

PLOT_WIDTH = 220
PLOT_HEIGHT = 46
PLOT_POINTS = 500  # the latest values a plot draws
LABEL_SIZE = 9  # the axis labels' font size, in pixels
LABEL_CHAR = 5.4  # about the width of one of their characters


def plot_points(
    numbers: Sequence[tuple[int, float]], width: int = PLOT_WIDTH, height: int = PLOT_HEIGHT
) -> list[tuple[float, float]]:
    """``(x, y)`` in a ``width`` x ``height`` box for each finite ``(position, value)``."""
    finite = [(i, v) for i, v in numbers[-PLOT_POINTS:] if v == v and abs(v) != float("inf")]
    if not finite:
        return []
    first, last = finite[0][0], finite[-1][0]
    low, high = min(v for _, v in finite), max(v for _, v in finite)
    dx = (width - 4) / max(last - first, 1)
    if high == low:  # a flat history (or a single value) is drawn across the middle
        return [(2 + (i - first) * dx, height / 2) for i, _ in finite]
    dy = (height - 4) / (high - low)
    return [(2 + (i - first) * dx, height - 2 - (v - low) * dy) for i, v in finite]


def plot_svg(watch: Watch) -> Markup:
    """A number watch's values over hits as an inline SVG line with a dot per value, each
    dot titled with its hit and value (the tooltip a saved notebook keeps), on axes
    labelled with the lowest and highest value and the first and last hit."""
    values = watch.values[-PLOT_POINTS:]
    offset = len(watch.values) - len(values)
    positions = [(offset + i, v.number, v) for i, v in enumerate(values, 1) if v.number is not None]
    positions = [(i, n, v) for i, n, v in positions if math.isfinite(n)]
    if not positions:
        return Markup("")
    shown = [v for _, _, v in positions]
    numbers = [n for _, n, _ in positions]
    high, low = f"{max(numbers):.4g}", f"{min(numbers):.4g}"
    left = 4 + LABEL_CHAR * max(len(high), len(low))  # the y labels' column
    top, bottom = 5, PLOT_HEIGHT - LABEL_SIZE - 4  # room for the x labels under the axis
    box = plot_points([(i, n) for i, n, _ in positions], round(PLOT_WIDTH - left - 4), bottom - top)
    points = [(left + x, top + y) for x, y in box]
    stroke, muted = palette.themed("accent"), palette.themed("fg_muted")
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = Markup("").join(
        Markup('<circle cx="{:.1f}" cy="{:.1f}" r="1.5" fill="{}"><title>hit {}: {}</title></circle>').format(
            x, y, stroke, hit_label(v), _shown(v)
        )
        for (x, y), v in zip(points, shown)
    )
    text = Markup('<text x="{:.1f}" y="{:.1f}" text-anchor="{}" font-size="{}" fill="{}">{}</text>')
    # A flat history has one value to label, at the middle; a single point one hit.
    if high == low:
        labels = [text.format(left - 3, (top + bottom + LABEL_SIZE) / 2 - 1, "end", LABEL_SIZE, muted, high)]
    else:
        labels = [
            text.format(left - 3, top + LABEL_SIZE - 2, "end", LABEL_SIZE, muted, high),
            text.format(left - 3, bottom, "end", LABEL_SIZE, muted, low),
        ]
    labels.append(text.format(left, PLOT_HEIGHT - 2, "start", LABEL_SIZE, muted, f"hit {hit_label(shown[0])}"))
    if len(shown) > 1:
        labels.append(text.format(PLOT_WIDTH - 2, PLOT_HEIGHT - 2, "end", LABEL_SIZE, muted, hit_label(shown[-1])))
    axes = Markup(
        '<polyline class="jaxdbg-watch-axis" points="{l},{t} {l},{b} {r},{b}" fill="none" stroke="{c}" stroke-width="0.8"/>'
    ).format(l=left - 1, t=top - 2, b=bottom + 1, r=PLOT_WIDTH - 2, c=muted)
    return Markup(
        '<svg class="jaxdbg-watch-plot" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'style="vertical-align:middle" role="img" aria-label="{label}">{axes}{labels}<polyline points="{line}" fill="none" '
        'stroke="{stroke}" stroke-width="1.2"/>{dots}</svg>'
    ).format(
        w=PLOT_WIDTH,
        h=PLOT_HEIGHT,
        label=f"{watch.expression} over {len(points)} hits",
        axes=axes,
        labels=Markup("").join(labels),
        line=line,
        stroke=stroke,
        dots=dots,
    )


def _shown(value: WatchValue) -> str:
    return f"*** {value.error}" if value.error else value.text


def _history_text(watch: Watch) -> str:
    """A scalar's history as block characters; an array's first and latest statistics."""
    numbers = [v for _, v in watch.numbers]
    if len(numbers) > 1:
        return watch_commands.sparkline(numbers[-watch_commands.SPARK_POINTS :])
    if len(watch.values) > 1 and watch.values[0].stats is not None:
        return f"first: {_shown(watch.values[0])}"
    return ""


# Every row and cell carries the same inline style: a notebook's own table rules (Lab
# right-aligns cells, shades every other row and boxes <code>) must not make two
# watches look different. Inline styles win over those rules and stay in a saved file.
_TABLE = "border-collapse:collapse;border:none;margin:2px 0;table-layout:auto;"
_ROW = "background:transparent;border:none;"
_CELL = "text-align:left;vertical-align:middle;border:none;line-height:normal;padding:0 6px 0 0;"
_CODE = "background:transparent;padding:0;"


def _with_overview(history: Markup, watch: Watch) -> Markup:
    """A history's drawing with what its plot says, readable without hovering, written
    beside it: the first and last values, then the range."""
    parts = watch.overview_parts() if len(watch.values) > 1 else []
    if not parts:
        return history
    return Markup(
        '{}<span class="jaxdbg-watch-overview" style="{}display:inline-block;vertical-align:middle;'
        'white-space:nowrap;font-size:11px;margin-left:6px">{}<br>{}</span>'
    ).format(history, theme.MUTED, " · ".join(parts[:2]), " · ".join(parts[2:]))


def table_html(watches: Sequence[Watch]) -> Markup:
    """The watches of a stop's breakpoint: expression, latest value, hits, history."""
    if not watches:
        return Markup("")
    rows = []
    for w in watches:
        last = w.values[-1] if w.values else None
        history = _with_overview(plot_svg(w) or Markup("{}").format(_history_text(w)), w)
        rows.append(
            Markup(
                '<tr class="jaxdbg-watch" style="{row}"><td style="{cell}"><code style="{code}">{}</code>'
                '</td><td style="{cell}{}">{}</td><td style="{cell}{}">{}</td>'
                '<td style="{cell}">{}</td></tr>'
            ).format(
                w.expression,
                theme.ERROR if last is not None and last.error else "",
                "" if last is None else _shown(last),
                theme.MUTED,
                f"{len(w.values)} hit{'s' if len(w.values) != 1 else ''}",
                history,
                row=_ROW,
                cell=_CELL,
                code=_CODE,
            )
        )
    return Markup(
        '<table class="jaxdbg-watches" style="{}"><caption style="text-align:left;{}">watches'
        "</caption><tbody>{}</tbody></table>"
    ).format(_TABLE, theme.MUTED, Markup("").join(rows))


def table_text(watches: Sequence[Watch]) -> str:
    """The same table as lines of text (the summary's text/plain twin)."""
    lines = []
    for w in watches:
        last = _shown(w.values[-1]) if w.values else "(no value yet)"
        history = "  ".join(part for part in (_history_text(w), w.overview() if len(w.values) > 1 else "") if part)
        lines.append(f"watch {w.expression} = {last}  ({len(w.values)} hits)" + (f"  {history}" if history else ""))
    return "\n".join(lines)


# -- ``watch N leaves``: a plot per leaf ------------------------------------------------
LEAF_PLOTS = 32  # leaves drawn as plots; the next ones get their block characters
LEAF_ROWS = 200  # leaves listed at all; the rest are counted (the prompt lists each)


def leaves_html(model: watch_tables.LeafHistories) -> Markup:
    """A pytree watch's float leaves at one hit: each leaf's norm and NaN / Inf counts,
    and its norm over the hits kept as a plot with axes, its first and last values and
    range written beside it (as the watch table draws a watch's global norm)."""
    rows = []
    for i, path in enumerate(model.paths[:LEAF_ROWS]):
        norm, nans, infs = model.numbers(i)
        history = model.history(i, PLOT_POINTS)
        drawn = (plot_svg(history) if i < LEAF_PLOTS else Markup("")) or Markup("{}").format(
            watch_commands.sparkline([n for _, n in history.numbers][-watch_commands.SPARK_POINTS :])
        )
        alarm = theme.ERROR if nans or infs else ""
        rows.append(
            Markup(
                '<tr class="jaxdbg-leaf" style="{row}"><td style="{cell}"><code style="{code}">{}</code></td>'
                '<td style="{cell}">{}</td><td style="{cell}{alarm}">{}</td><td style="{cell}{alarm}">{}</td>'
                '<td style="{cell}">{}</td></tr>'
            ).format(
                path,
                f"{norm:.6g}",
                nans,
                infs,
                _with_overview(drawn, history),
                row=_ROW,
                cell=_CELL,
                code=_CODE,
                alarm=alarm,
            )
        )
    more = len(model.paths) - LEAF_ROWS
    if more > 0:
        rows.append(
            Markup(
                '<tr style="{}"><td colspan="5" style="{}{}">… {} more (the prompt lists every leaf)</td></tr>'
            ).format(_ROW, _CELL, theme.MUTED, watch_tables.leaf_count(more))
        )
    head = Markup("").join(
        Markup('<th style="{}{}font-weight:normal">{}</th>').format(_CELL, theme.MUTED, text)
        for text in ("leaf", "‖·‖", "NaN", "Inf", f"over the last {len(model.kept[-PLOT_POINTS:])} hits")
    )
    return Markup(
        '<table class="jaxdbg-leaf-plots" style="{}"><caption style="text-align:left;{}">{}</caption>'
        '<thead><tr style="{}">{}</tr></thead><tbody>{}</tbody></table>'
    ).format(_TABLE, theme.MUTED, model.title(), _ROW, head, Markup("").join(rows))


watch_tables.LeafHistories.register_drawing(plain=watch_tables.leaves_text, html=leaves_html)
