"""HTML for a stop in Colab: location, highlighted source, frames, locals, watches, log.

Every user string is escaped with markupsafe. Colours come from Colab's theme
variables (with light fallbacks), so the view reads in light and dark mode. Buttons
carry their debugger command in ``data-jaxdbg-command``; :mod:`jaxdbg.frontends.colab` binds
them through ``google.colab.output.eval_js`` while the cell is paused. The log and
the finished stop's summary (with its text/plain twin, for saved notebooks) are the
shared notebook renderings of :mod:`jaxdbg.views.html`, recoloured here for Colab.
"""

from __future__ import annotations

import string

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from jaxdbg.engine.command_table import TABLE as COMMANDS
from jaxdbg.engine.frames import display_filename
from jaxdbg.engine.outputs import LogEntry, Output, SourceView
from jaxdbg.engine.session import Session
from jaxdbg.engine.source_window import window_lines
from jaxdbg.runtime import phrases
from jaxdbg.views import html as html_view
from jaxdbg.views import palette, watch_views
from jaxdbg.views import text as text_view

LOG_ENTRY_CHARS = 4_000  # per logged result; the full text stays available via `p`
LOG_ENTRIES = 50

# Colours are Colab's own theme variables, from the palette ($name below).
_CSS = string.Template("""
.jaxdbg-colab { font-family: var(--colab-code-font-family, monospace); font-size: 13px;
  color: $fg;
  background: $surface;
  border: 1px solid $border; border-radius: 4px; padding: 6px 8px; }
.jaxdbg-colab .jaxdbg-banner { font-weight: bold; margin-bottom: 4px; }
.jaxdbg-colab .jaxdbg-grid { display: flex; gap: 12px; flex-wrap: wrap; }
.jaxdbg-colab .jaxdbg-box { flex: 1 1 320px; min-width: 0; }
.jaxdbg-colab h4 { margin: 4px 0; font-size: 12px; color: $fg_muted; }
.jaxdbg-colab pre { margin: 0; white-space: pre; overflow-x: auto; }
.jaxdbg-colab .highlight { background: transparent; }
.jaxdbg-colab .highlight .hll, .jaxdbg-colab .jaxdbg-current {
  background: $current; display: block; }
.jaxdbg-colab table { border-collapse: collapse; }
.jaxdbg-colab td { padding: 0 8px 0 0; vertical-align: top; white-space: pre; }
.jaxdbg-colab button { font: inherit; cursor: pointer; margin: 2px 4px 2px 0;
  color: $fg;
  background: $surface_alt;
  border: 1px solid $border; border-radius: 3px; }
.jaxdbg-colab button.jaxdbg-frame { display: block; text-align: left; width: 100%; border: none; }
.jaxdbg-colab button.jaxdbg-frame.jaxdbg-current { font-weight: bold; }
.jaxdbg-colab input.jaxdbg-command { font: inherit; width: 60%;
  color: $fg;
  background: $surface;
  border: 1px solid $border; }
.jaxdbg-colab .jaxdbg-error { color: $error !important; }
.jaxdbg-colab .jaxdbg-note, .jaxdbg-colab .jaxdbg-in, .jaxdbg-colab .jaxdbg-more,
.jaxdbg-colab .jaxdbg-ended { color: $fg_muted !important; }
.jaxdbg-colab .jaxdbg-static { border-color: $border !important; }
""").substitute({name: palette.colab(name) for name in palette.COLAB_VARIABLES})


def log_entry(line: str, output: Output) -> LogEntry:
    """One command and its result, as the shared log renderer takes it."""
    return LogEntry(line, output.text, error=output.is_error)


def _pygments_css() -> str:
    """Token colours for light mode and (under Colab's dark theme) dark mode."""
    light = HtmlFormatter(style=palette.PYGMENTS_STYLES["light"]).get_style_defs(".jaxdbg-colab .highlight")
    try:
        dark = HtmlFormatter(style=palette.PYGMENTS_STYLES["dark"]).get_style_defs(
            "html[theme=dark] .jaxdbg-colab .highlight"
        )
    except Exception:
        dark = ""
    # The styles' own backgrounds would hide Colab's surface colour.
    lines = [line for line in (light + "\n" + dark).splitlines() if "{ background" not in line and ".hll" not in line]
    return "\n".join(lines)


def highlighted_source(view: SourceView) -> Markup:
    """The source lines with numbers and the current line marked."""
    code = "\n".join(view.lines)
    lines = window_lines(view)  # pygments numbers them as the other views do
    formatter = HtmlFormatter(
        linenos="inline",
        linenostart=view.first_lineno,
        hl_lines=[i for i, line in enumerate(lines, start=1) if line.current],
        wrapcode=True,
    )
    return Markup(highlight(code, PythonLexer(), formatter))


def _button(label: str, command: str, css: str = "", title: str = "") -> Markup:
    """A button that sends ``command``; its tooltip is that command's help unless given."""
    title = title or COMMANDS.summary_of(command) or command
    return Markup('<button type="button" class="{}" data-jaxdbg-command="{}" title="{}">{}</button>').format(
        css, command, title, label
    )


def _frames(session: Session, live: bool) -> Markup:
    """Innermost first; buttons while the stop waits for commands, text afterwards."""
    rows = session.where().frames
    parts = []
    for row in rows:
        if row.folded:  # a run of installed libraries' frames: "… 5 frames in flax"
            parts.append(Markup('<div class="jaxdbg-frame jaxdbg-folded">{}</div>').format(row.function))
            continue
        label = f"{row.index:>2} {row.function}  {display_filename(row.filename)}:{row.lineno}"
        css = "jaxdbg-frame" + (" jaxdbg-current" if row.current else "")
        if live:
            parts.append(_button(label, f"frame {row.index}", css, row.line))
        else:
            parts.append(Markup('<div class="{}" title="{}">{}</div>').format(css, row.line, label))
    return Markup("").join(parts)


def _locals(session: Session) -> Markup:
    rows = session.locals_table().locals
    if not rows:
        return Markup('<span class="jaxdbg-note">{}</span>').format(phrases.NO_LOCALS)
    cells = [
        Markup("<tr><td>{}</td><td>{}</td><td>{}</td></tr>").format(r.name, r.type_name, r.describe_with_sharding())
        for r in rows
    ]
    return Markup("<table>") + Markup("").join(cells) + Markup("</table>")


def _log(entries: list[LogEntry]) -> Markup:
    return html_view.log(entries[-LOG_ENTRIES:], LOG_ENTRY_CHARS)


def _controls(session: Session) -> Markup:
    buttons = [_button("Up", "up"), _button("Down", "down"), _button("Continue", "continue")]
    if session.info.batched:
        buttons.append(_button("Skip batch", "skip"))
    buttons.append(_button("Quit", "quit"))
    box = Markup(
        '<input class="jaxdbg-command" type="text" '
        'placeholder="p expr, pp expr, up, where, help ... (Enter)" spellcheck="false">'
    )
    return Markup("<div>") + Markup("").join(buttons) + box + Markup("</div>")


def render_stop(
    session: Session,
    log: list[LogEntry],
    view_id: str,
    sequence: int,
    *,
    live: bool,
    note: str = "",
    context: int = phrases.DEFAULT_CONTEXT,
) -> str:
    """The whole stop as one HTML fragment (``live``: with buttons and the command box)."""
    frame = session.current
    view = session.source_view(frame.lineno - context, frame.lineno + context)
    source = (
        highlighted_source(view)
        if view.lines
        else Markup('<span class="jaxdbg-note">{}</span>').format(phrases.no_source(frame.location))
    )
    parts = [
        Markup("<style>{}</style>").format(Markup(_CSS + _pygments_css())),
        Markup('<div class="jaxdbg-colab" data-jaxdbg-view="{}" data-jaxdbg-render="{}">').format(view_id, sequence),
        Markup('<div class="jaxdbg-banner">{}</div>').format(session.banner()),
        Markup('<div class="jaxdbg-grid"><div class="jaxdbg-box"><h4>{}</h4>{}</div>').format(
            f"{frame.location} in {frame.function}", source
        ),
        Markup('<div class="jaxdbg-box"><h4>frames</h4>{}<h4>locals</h4>{}</div></div>').format(
            _frames(session, live), _locals(session)
        ),
    ]
    watched = watch_views.table_html(session.watched())  # the static summary's table and plot
    if watched:
        parts.append(Markup('<div class="jaxdbg-watches-box">{}</div>').format(watched))
    parts.append(Markup('<h4>log</h4><div class="jaxdbg-log">{}</div>').format(_log(log)))
    if live:
        parts.append(_controls(session))
    if note:
        parts.append(Markup('<div class="jaxdbg-note">{}</div>').format(note))
    parts.append(Markup("</div>"))
    return str(Markup("").join(parts))


def render_finished(
    session: Session, log: list[LogEntry], view_id: str, sequence: int, note: str = ""
) -> html_view.Rendered:
    """The ended stop: the shared static summary (banner, line, log, outcome) in Colab's
    colours, with its text/plain twin for saved notebooks and text-only viewers."""
    summary = session.summary(log)
    body = html_view.stop_summary(summary, LOG_ENTRY_CHARS)
    if note:
        body += Markup('<div class="jaxdbg-note">{}</div>').format(note)
    html = Markup(
        '<style>{}</style><div class="jaxdbg-colab" data-jaxdbg-view="{}" data-jaxdbg-render="{}">{}</div>'
    ).format(Markup(_CSS), view_id, sequence, body)
    text = text_view.stop_summary(summary, LOG_ENTRY_CHARS) + (f"\n{note}" if note else "")
    return html_view.Rendered(html, text)


def render_text(session: Session, context: int = phrases.DEFAULT_CONTEXT) -> str:
    """The stop's banner and source as plain text, for when HTML cannot be drawn."""
    return "\n".join([session.banner(), session.source_around(context).text])
