"""A checkify error as :func:`jaxdbg.show` draws it: its headline, a table of mapped
indices, each failing line in its source, and the calls that led there; as plain text,
with rich, and as HTML (registered on :class:`~jaxdbg.capture.checkify_errors.CheckifyView`
by :mod:`jaxdbg.capture.checkify_errors`, which imports this module)."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from markupsafe import Markup

from jaxdbg.views import theme

_TD = "padding:0 10px 0 0;text-align:left;vertical-align:top;"
IndexLabel = Callable[[Any], str]


def render_plain(view: Any, index_label: IndexLabel) -> str:
    lines = [view.headline()]
    if view.mapped and view.sites:
        width = max(len("index"), *(len(index_label(s.index)) for s in view.sites))
        lines.append(f"  {'index'.ljust(width)}  error  (where)")
        for s in view.sites:
            where = f"  ({s.where.location} in {s.where.function})" if s.where else ""
            lines.append(f"  {index_label(s.index).ljust(width)}  {s.message}{where}")
    for frame in view.distinct_frames():
        lines.append(f"at {frame.location} in {frame.function}")
        first, source = view.source(frame)
        for n, text in enumerate(source, start=first):
            lines.append(f"{'->' if n == frame.lineno else '  '} {n:>4} | {text}")
    for frame in view.callers():
        lines.append(f"called from {frame.location} in {frame.function}")
    if view.sites and not view.sites[0].frames:
        lines.append("(JAX recorded no user frame for this error)")
    return "\n".join(lines)


def render_rich(view: Any) -> Iterator[Any]:
    from rich.text import Text

    yield Text(str(view))


def render_html(view: Any, index_label: IndexLabel) -> str:
    parts = [
        Markup('<div class="jaxdbg-checkify" style="{}">').format(theme.BOX),
        Markup('<div style="{}"><b>{}</b></div>').format(theme.ERROR if view.sites else "", view.headline()),
    ]
    if view.mapped and view.sites:
        rows = Markup("").join(
            Markup(
                '<tr><td style="{td}">{i}</td><td style="{td}">{m}</td><td style="{td}{muted}">{w}</td></tr>'
            ).format(
                td=_TD,
                muted=theme.MUTED,
                i=index_label(s.index),
                m=s.message,
                w=f"{s.where.location} in {s.where.function}" if s.where else "",
            )
            for s in view.sites
        )
        parts.append(
            Markup(
                '<table style="border-collapse:collapse;margin:4px 0">'
                '<tr><th style="{td}">index</th><th style="{td}">error</th>'
                '<th style="{td}">where</th></tr>{rows}</table>'
            ).format(td=_TD, rows=rows)
        )
    for frame in view.distinct_frames():
        first, source = view.source(frame)
        parts.append(
            Markup('<div style="margin-top:4px">at <b>{}</b> in <code>{}</code></div>').format(
                frame.location, frame.function
            )
        )
        if source:
            parts.append(theme.highlighted_lines(source, first, frame.lineno))
    for frame in view.callers():
        parts.append(
            Markup('<div style="{}">called from {} in <code>{}</code></div>').format(
                theme.MUTED, frame.location, frame.function
            )
        )
    parts.append(Markup("</div>"))
    return str(Markup("").join(parts))
