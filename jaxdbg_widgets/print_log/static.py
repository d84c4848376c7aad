"""What a print log leaves behind: the text of every row, and the static output.

When the cell ends its widget is replaced by static HTML plus a readable
``text/plain`` of every row, which is what a saved notebook and nbconvert show. The
HTML's Save link, :func:`text` and ``PrintLog.save`` carry the same text, so it is
made in one place; the HTML needs no script, so it works in an untrusted notebook.
"""

from __future__ import annotations

import base64
from pathlib import Path

from markupsafe import Markup, escape

from jaxdbg.capture.prints import PrintRow
from jaxdbg.views import theme
from jaxdbg_widgets.print_log.buffer import SHOWN_ROWS, where

__all__ = ["html", "mimebundle", "plain_summary", "save", "text"]

_MONO = theme.MONO + "margin:0;"
_MUTED = theme.MUTED
_BOX = theme.BOX
_TD = "padding:0 8px 0 0;vertical-align:top;white-space:pre;text-align:left;"


def text(rows: list[PrintRow]) -> str:
    """Every row as a line: location, batch / device, then the printed text."""
    lines = []
    for row in rows:
        at = where(row)
        lines.append(f"{row.site.location}  {at + '  ' if at else ''}| {row.text}")
    return "\n".join(lines) + ("\n" if lines else "")


def save(rows: list[PrintRow], path: str | Path) -> Path:
    """Write :func:`text` to ``path``; the path."""
    path = Path(path)
    path.write_text(text(rows), encoding="utf-8")
    return path


def mimebundle(title: str, rows: list[PrintRow]) -> dict[str, str]:
    return {"text/html": html(title, rows), "text/plain": plain_summary(title, rows)}


def plain_summary(title: str, rows: list[PrintRow]) -> str:
    count = len(rows)
    return f"jaxdbg print log ({title}, {count:,} row{'s' if count != 1 else ''})\n" + text(rows)


def html(title: str, rows: list[PrintRow]) -> str:
    count = len(rows)
    full = text(rows)
    data = base64.b64encode(full.encode("utf-8")).decode("ascii")
    filename = "".join(c if c.isalnum() or c in "._-" else "_" for c in title) + ".txt"
    hidden = count - min(count, 2 * SHOWN_ROWS)
    return Markup(
        '<div class="jaxdbg-print-log jaxdbg-static" style="{box}">'
        '<div style="margin-bottom:4px"><b>{title}</b> · {count} · '
        '<a download="{filename}" href="data:text/plain;charset=utf-8;base64,{data}">Save log</a></div>'
        "{table}{groups}{details}</div>"
    ).format(
        box=_BOX,
        title=title,
        count=_rows_label(count),
        filename=filename,
        data=data,
        table=_rows_table(rows),
        groups=_groups_html(rows),
        details=Markup('<details><summary>All {:,} rows as text</summary><pre style="{}">{}</pre></details>').format(
            count, _MONO, full
        )
        if hidden
        else "",
    )


def _rows_label(count: int) -> str:
    return f"{count:,} row{'s' if count != 1 else ''}"


def _rows_table(rows: list[PrintRow]) -> Markup:
    """The first and last SHOWN_ROWS rows with a count of those between."""
    first = rows[:SHOWN_ROWS]
    last = rows[max(SHOWN_ROWS, len(rows) - SHOWN_ROWS) :]
    hidden = len(rows) - len(first) - len(last)
    body = [_row_html(r) for r in first]
    if hidden:
        body.append(
            Markup('<tr><td colspan="3" style="{}">… {:,} more rows …</td></tr>').format(
                _MUTED + "font-style:italic;", hidden
            )
        )
    body += [_row_html(r) for r in last]
    return Markup('<table style="border-collapse:collapse">{}</table>').format(Markup("").join(body))


def _groups_html(rows: list[PrintRow]) -> Markup:
    """The static log's filter: one ``<details>`` per source line, per process of a
    jax.distributed job and per device (when there are several), each holding that
    group's rows. Plain HTML, no script, so it
    works in an untrusted notebook too."""
    parts = []
    for title, key in (
        ("by line", lambda r: r.site.location),
        ("by process", lambda r: r.site.process),
        ("by device", lambda r: r.site.device_label),
    ):
        groups: dict[str, list[PrintRow]] = {}
        for row in rows:
            name = key(row)
            if name:
                groups.setdefault(name, []).append(row)
        if len(groups) < 2:
            continue
        items = Markup("").join(
            Markup(
                '<details class="jaxdbg-pl-group"><summary style="cursor:pointer">{} · {}</summary>{}</details>'
            ).format(name, _rows_label(len(members)), _rows_table(members))
            for name, members in groups.items()
        )
        parts.append(
            Markup(
                '<div class="jaxdbg-pl-groups" style="margin-top:4px">'
                '<div style="{}">Show only the rows {}:</div>{}</div>'
            ).format(_MUTED, title, items)
        )
    return Markup("").join(parts)


def _row_html(row: PrintRow) -> Markup:
    return Markup(
        '<tr><td style="{muted}">{loc}</td><td style="{muted}">{where}</td><td style="{td}">{text}</td></tr>'
    ).format(muted=_TD + _MUTED, td=_TD, loc=row.site.location, where=where(row), text=escape(row.text))
