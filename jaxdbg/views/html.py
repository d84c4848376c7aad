"""HTML for notebook views: the panel's static summary and the Colab view.

Every function returns ``markupsafe.Markup``: text from the program or the user
goes in through ``escape`` or ``Markup.format`` (which escapes its arguments),
so whether something is escaped is carried by its type, not by a convention.
Styles are inline (with JupyterLab theme variables and literal fallbacks) so the
HTML reads the same in a saved notebook, nbconvert output or Colab.

What is shown comes from the engine (:mod:`jaxdbg.session`): headings,
banners, summaries and outcomes are drawn here, never re-worded.
"""

from __future__ import annotations

from typing import Any, Iterable

from markupsafe import Markup, escape

from jaxdbg.outputs import LogEntry, SourceView, StopSummary
from jaxdbg.views import text as text_view

ERROR_STYLE = "color:var(--jp-error-color1, #c62828);"
MUTED_STYLE = "color:var(--jp-content-font-color2, #555);"
MONO_STYLE = ("font-family:var(--jp-code-font-family, monospace);font-size:12px;"
              "line-height:1.45;")
LOG_CHARS = 2_000  # per log entry in a summary; the rest is counted, not shown


def source(view: SourceView | None, heading: str) -> Markup:
    """A source window, highlighted by pygments with its own line numbers
    (``linenos``/``linenostart``) and the current line marked (``hl_lines``)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    head = Markup('<div class="jaxdbg-source-heading" style="font-weight:bold;">{}</div>').format(heading)
    if view is None or not view.lines:
        return head + Markup('<div class="jaxdbg-no-source" style="{}">(source not available)</div>'
                             ).format(MUTED_STYLE)
    current = view.current_lineno - view.first_lineno + 1  # hl_lines counts from the snippet
    formatter = HtmlFormatter(linenos="inline", linenostart=view.first_lineno,
                              hl_lines=[current] if 1 <= current <= len(view.lines) else [],
                              noclasses=True, style="default", cssclass="jaxdbg-source")
    lexer = PythonLexer(stripnl=False, ensurenl=True)
    # pygments escapes the code it highlights; its output is markup.
    body = Markup(highlight("\n".join(view.lines) + "\n", lexer, formatter))
    return head + Markup('<div style="{}overflow-x:auto;">{}</div>').format(MONO_STYLE, body)


def log_entry(entry: LogEntry, limit: int | None = LOG_CHARS) -> Markup:
    """One command of the log: the echoed command, then its output (or its own markup)."""
    parts = []
    if entry.command:
        parts.append(Markup('<div class="jaxdbg-in" style="{}">(jaxdbg) {}</div>')
                     .format(MUTED_STYLE, entry.command))
    if entry.html is not None:
        parts.append(entry.html if isinstance(entry.html, Markup) else escape(entry.html))
    elif entry.text:
        shown, rest = text_view.clip(entry.text, limit)
        cls = "jaxdbg-out jaxdbg-error" if entry.error else "jaxdbg-out"
        parts.append(Markup('<pre class="{}" style="margin:0;white-space:pre-wrap;{}">{}</pre>')
                     .format(cls, ERROR_STYLE if entry.error else "", shown))
        if rest:
            parts.append(Markup('<div class="jaxdbg-more" style="{}font-style:italic;">{}</div>')
                         .format(MUTED_STYLE, text_view.clipped_note(rest)))
    return Markup('<div class="jaxdbg-entry" style="{}margin-bottom:4px;">{}</div>').format(
        MONO_STYLE, Markup("").join(parts))


def log(entries: Iterable[LogEntry], limit: int | None = LOG_CHARS) -> Markup:
    return Markup("").join(log_entry(e, limit) for e in entries)


def stop_summary(summary: StopSummary, limit: int | None = LOG_CHARS) -> Markup:
    """A finished stop, self-contained: banner, the stopped-at line, the log, the outcome."""
    parts = [Markup('<div class="jaxdbg-banner" style="font-weight:bold;">{}</div>').format(summary.banner)]
    if summary.line:
        parts.append(Markup('<div class="jaxdbg-stop-line">{}: <code>{}</code></div>')
                     .format(summary.location, summary.line))
    parts.append(log(summary.log, limit))
    parts.append(Markup('<div class="jaxdbg-ended" style="{}">{}</div>').format(MUTED_STYLE, summary.outcome))
    return Markup('<div class="jaxdbg-static" style="{}border:1px solid var(--jp-border-color1, #ccc);'
                  'padding:4px;">{}</div>').format(MONO_STYLE, Markup("").join(parts))


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
