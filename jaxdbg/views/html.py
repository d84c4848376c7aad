"""HTML for notebook views: the panel's static summary and the Colab view.

Every function returns ``markupsafe.Markup``: text from the program or the user
goes in through ``escape`` or ``Markup.format`` (which escapes its arguments),
so whether something is escaped is carried by its type, not by a convention.
Styles are inline (JupyterLab theme variables, fallbacks relative to the text colour:
:mod:`jaxdbg.views.theme`) so the HTML reads the same in a saved notebook, nbconvert
output, an untrusted notebook or Colab, on light and dark pages.

What is shown comes from the engine (:mod:`jaxdbg.engine.session`): headings,
banners, summaries and outcomes are drawn here, never re-worded.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from markupsafe import Markup, escape

from jaxdbg.engine.outputs import LogEntry, SourceView, StopSummary
from jaxdbg.runtime import phrases
from jaxdbg.views import array_picture_view, theme, watch_views
from jaxdbg.views import text as text_view

ERROR_STYLE = theme.ERROR
MUTED_STYLE = theme.MUTED
MONO_STYLE = theme.MONO
LOG_CHARS = 2_000  # per log entry in a summary; the rest is counted, not shown


def source(view: SourceView | None, heading: str) -> Markup:
    """A source window: highlighted in the theme's editor colours, numbered, the current
    line marked (:func:`jaxdbg.views.theme.highlighted_lines`)."""
    head = Markup('<div class="jaxdbg-source-heading" style="font-weight:bold;">{}</div>').format(heading)
    if view is None or not view.lines:
        return head + Markup('<div class="jaxdbg-no-source" style="{}">{}</div>').format(MUTED_STYLE, phrases.NO_SOURCE)
    return head + theme.highlighted_lines(view.lines, view.first_lineno, view.current_lineno)


def log_entry(entry: LogEntry, limit: int | None = LOG_CHARS) -> Markup:
    """One command of the log: the echoed command, then its output (or its own markup)."""
    parts = []
    if entry.command:
        parts.append(
            Markup('<div class="jaxdbg-in" style="{}">{}</div>').format(MUTED_STYLE, phrases.echo(entry.command))
        )
    if entry.html is not None:
        parts.append(entry.html if isinstance(entry.html, Markup) else escape(entry.html))
    elif entry.text:
        shown, rest = text_view.clip(entry.text, limit)
        cls = "jaxdbg-out jaxdbg-error" if entry.error else "jaxdbg-out"
        parts.append(
            Markup('<pre class="{}" style="margin:0;white-space:pre-wrap;{}">{}</pre>').format(
                cls, ERROR_STYLE if entry.error else "", shown
            )
        )
        if rest:
            parts.append(
                Markup('<div class="jaxdbg-more" style="{}font-style:italic;">{}</div>').format(
                    MUTED_STYLE, text_view.clipped_note(rest)
                )
            )
    return Markup('<div class="jaxdbg-entry" style="{}margin-bottom:4px;">{}</div>').format(
        MONO_STYLE, Markup("").join(parts)
    )


def log(entries: Iterable[LogEntry], limit: int | None = LOG_CHARS) -> Markup:
    return Markup("").join(log_entry(e, limit) for e in entries)


# A summary stays compact however long the session was: the last few commands, each
# result cut to its first lines; the rest is folded under <details> (no script, so it
# opens in an untrusted notebook too).
SUMMARY_ENTRIES = 5
SUMMARY_LINES = 3
SUMMARY_LINE_CHARS = 160


def _first_lines(text: str) -> tuple[str, int]:
    """``(the first SUMMARY_LINES lines, each cut to SUMMARY_LINE_CHARS; lines left out)``."""
    lines = text.splitlines()
    keep = len(lines) if len(lines) <= SUMMARY_LINES + 1 else SUMMARY_LINES  # never fold one line
    shown = [line if len(line) <= SUMMARY_LINE_CHARS else line[:SUMMARY_LINE_CHARS] + " …" for line in lines[:keep]]
    return "\n".join(shown), len(lines) - len(shown)


def _folded(label: str, body: Markup) -> Markup:
    return Markup('<details class="jaxdbg-more"><summary style="{}cursor:pointer;">{}</summary>{}</details>').format(
        MUTED_STYLE, label, body
    )


def summary_entry(entry: LogEntry, limit: int | None = LOG_CHARS) -> Markup:
    """One command in a summary: its first lines shown, the whole (up to ``limit``) folded."""
    if entry.html is not None or not entry.text:
        return log_entry(entry, limit)
    head, more_lines = _first_lines(entry.text)
    if head == entry.text:
        return log_entry(entry, limit)
    shown = dataclasses.replace(entry, text=head)
    label = f"… {more_lines:,} more line{'s' if more_lines != 1 else ''}" if more_lines else "… the whole result"
    return log_entry(shown, None) + _folded(label, log_entry(dataclasses.replace(entry, command=""), limit))


def stop_summary(summary: StopSummary, limit: int | None = LOG_CHARS) -> Markup:
    """A finished stop, self-contained and compact: banner, the stopped-at line, the last
    commands with their results cut to a few lines (the earlier ones and the rest of each
    result folded under ``<details>``), the outcome."""
    parts = [Markup('<div class="jaxdbg-banner" style="font-weight:bold;">{}</div>').format(summary.banner)]
    if summary.line:
        parts.append(
            Markup('<div class="jaxdbg-stop-line">{}: <code>{}</code></div>').format(summary.location, summary.line)
        )
    entries = list(summary.log)
    earlier, last = entries[:-SUMMARY_ENTRIES], entries[-SUMMARY_ENTRIES:]
    if earlier:
        parts.append(
            _folded(
                f"{len(earlier):,} more command{'s' if len(earlier) != 1 else ''}",
                Markup("").join(summary_entry(e, limit) for e in earlier),
            )
        )
    parts.extend(summary_entry(e, limit) for e in last)
    if summary.pictures:
        parts.append(
            Markup('<div class="jaxdbg-pictures">{}</div>').format(
                Markup("").join(
                    Markup('<div class="jaxdbg-picture-row"><code>{}</code> {}</div>').format(
                        name, array_picture_view.render_html(pic)
                    )
                    for name, pic in summary.pictures
                )
            )
        )
    parts.append(watch_views.table_html(summary.watches))
    parts.append(Markup('<div class="jaxdbg-ended" style="{}">{}</div>').format(MUTED_STYLE, summary.outcome))
    return Markup('<div class="jaxdbg-static" style="{}{}padding:4px;">{}</div>').format(
        MONO_STYLE, theme.BORDER, Markup("").join(parts)
    )


class Rendered:
    """HTML with a readable ``text/plain`` twin, for ``display()``: a saved notebook,
    nbconvert's text output and consoles without HTML all show something useful."""

    def __init__(self, html: Markup, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text, "text/html": str(self.html)}

    def _repr_html_(self) -> str:
        return str(self.html)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def stop_summary_display(summary: StopSummary, limit: int | None = LOG_CHARS) -> Rendered:
    """The static summary of a finished stop as HTML plus its text/plain twin."""
    return Rendered(stop_summary(summary, limit), text_view.stop_summary(summary, limit))
