"""The debugger panel as it was before the one-widget panel: a composite of ipywidgets
boxes (about 160 comms per panel). Kept only so ``bench_panel.py`` can measure the
current panel against it in the same run; nothing in the package imports it.

The panel is a view only. Widget handlers never touch the session: they turn a click
or an Enter into a command tuple and hand it to ``post`` (a
:class:`~jaxdbg_widgets.pause.channel.PauseChannel` in a kernel). The thread that owns the
stop takes commands off the channel and calls :meth:`DebuggerPanel.handle`, which runs
them through ``Session.execute`` / Session methods and refreshes the widgets. Without a
``post`` function (unit tests, or a cell that already returned) commands run at once.

Commands are tuples:

``("nav", line)``              a navigation button (up, down, frame n, continue, ...)
``("execute", line)``          a line typed in the expression box
``("inspect", name)``          a click on a row of the locals table
``("more",)``                  show the newest truncated log entry in full
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Callable

import ipywidgets as W
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from jaxdbg.engine import outputs
from jaxdbg.engine import summaries
from jaxdbg.internals import ipywidgets_api
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.engine.guarded_calls import format_exception, guarded
from jaxdbg.views import html as html_view

Command = tuple

CONTEXT_LINES = 8  # source lines shown either side of the current line
LOG_CHARS = 2_000  # per log entry before "Show more"
LOG_ENTRIES = 50  # entries kept in the live log
MAX_LOCALS = 100  # rows in the locals table
MAX_SHARD_ROWS = 64

# Colours use JupyterLab's theme variables (dark themes too), with literal fallbacks
# for places without them, such as nbconvert output.
ERROR_STYLE = "color:#c62828;"
# An explicit line-height: ipywidgets gives HTML widget content the height of a whole
# widget row (28px), which would double-space source lines and the log.
_MONO = "font-family:var(--jp-code-font-family, monospace);font-size:12px;line-height:1.45;"
_FORMATTER = HtmlFormatter(nowrap=True, noclasses=True, style="default")


def esc(text: Any) -> str:
    """HTML-escape anything shown to the user; command output is never trusted markup."""
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------- log


@dataclasses.dataclass
class LogEntry:
    """One command and what it printed. ``html`` is prebuilt, already-escaped markup."""

    command: str
    text: str
    error: bool = False
    html: str | None = None
    expanded: bool = False

    @property
    def long(self) -> bool:
        return self.html is None and len(self.text) > LOG_CHARS


def render_entry(entry: LogEntry, limit: int | None = LOG_CHARS) -> str:
    """One log entry as HTML: the echoed command, then its (escaped) output."""
    parts = []
    if entry.command:
        parts.append(f'<div class="jaxdbg-in" style="color:var(--jp-content-font-color2, #555);">(jaxdbg) {esc(entry.command)}</div>')
    if entry.html is not None:
        parts.append(entry.html)
    elif entry.text:
        text, note = entry.text, ""
        if limit is not None and not entry.expanded and len(text) > limit:
            note = (f'<div class="jaxdbg-more" style="color:var(--jp-content-font-color3, #777);font-style:italic;">'
                    f"... {len(text) - limit:,} more characters (Show more)</div>")
            text = text[:limit]
        cls = "jaxdbg-out jaxdbg-error" if entry.error else "jaxdbg-out"
        style = ERROR_STYLE if entry.error else ""
        parts.append(f'<pre class="{cls}" style="margin:0;white-space:pre-wrap;{style}">'
                     f"{esc(text)}</pre>{note}")
    return f'<div class="jaxdbg-entry" style="{_MONO}margin-bottom:4px;">{"".join(parts)}</div>'


# --------------------------------------------------------------------------- source


def _highlighted_lines(lines: list[str]) -> list[str]:
    """Pygments HTML per source line (it closes spans at line ends, so lines split cleanly)."""
    lexer = PythonLexer(stripnl=False, ensurenl=True)
    body = highlight("\n".join(lines) + "\n", lexer, _FORMATTER)
    out = body.split("\n")
    return (out + [""] * len(lines))[:len(lines)]


def render_source(view: Any, heading: str) -> str:
    """The source window as HTML; the current line gets a class, an arrow and a background.

    HTML widgets run no scripts, so "scrolled into view" means the window is already
    centred on the current line.
    """
    head = f'<div class="jaxdbg-source-heading" style="font-weight:bold;">{esc(heading)}</div>'
    if view is None or not view.lines:
        return head + '<div class="jaxdbg-no-source" style="color:var(--jp-content-font-color3, #777);">(source not available)</div>'
    width = len(str(view.first_lineno + len(view.lines) - 1))
    rows = []
    for n, code in enumerate(_highlighted_lines(view.lines), start=view.first_lineno):
        current = n == view.current_lineno
        cls = "jaxdbg-line jaxdbg-current" if current else "jaxdbg-line"
        style = "background:#fff3b0;" if current else ""
        arrow = "-&gt;" if current else "&nbsp;&nbsp;"
        rows.append(f'<div class="{cls}" data-lineno="{n}" style="{style}white-space:pre;">'
                    f'<span class="jaxdbg-lineno" style="color:var(--jp-content-font-color3, #999);">{str(n).rjust(width)}</span> '
                    f'<span class="jaxdbg-arrow" style="color:#c62828;font-weight:bold;">{arrow}</span> '
                    f"{code}</div>")
    return (head + f'<div class="jaxdbg-source" style="{_MONO}overflow-x:auto;'
            f'border:1px solid var(--jp-border-color2, #ddd);padding:2px;">{"".join(rows)}</div>')


# --------------------------------------------------------------------------- locals


def _array_summary_html(row: summaries.ValueSummary) -> str:
    """The engine's statistics (NaN / Inf counts in red), plus a preview for tiny arrays."""
    parts = [f'<span style="{ERROR_STYLE}">{esc(text)}</span>' if alarming else esc(text)
             for text, alarming in row.stat_parts()]
    if row.preview:
        parts.append(esc(row.preview))
    return " ".join(parts)


def local_cells(row: summaries.ValueSummary) -> list[str]:
    """HTML for the type, array (``float32[3]``), sharding and summary columns of one local."""
    if not row.is_array:
        return [esc(row.type_name), "", "", esc(row.preview)]
    return [esc(row.type_name), esc(row.array_type), esc(row.sharding or ""),
            _array_summary_html(row)]


LOCAL_COLUMNS = ("name", "type", "array", "sharding", "summary")

# The columns after the name are drawn inside one HTML widget per row (a widget
# per cell would cost a comm_open each); fixed widths keep them aligned.
_DETAIL_GRID = ("display:grid;grid-template-columns:72px 120px 180px minmax(0,1fr);"
                "column-gap:10px;align-items:center;white-space:nowrap;")


def local_details_html(cells: list[str]) -> str:
    """One row's type, shape, dtype, sharding and summary cells (already HTML)."""
    spans = "".join(f'<span style="overflow:hidden;text-overflow:ellipsis;">{c}</span>'
                    for c in cells)
    return f'<div class="jaxdbg-local" style="{_DETAIL_GRID}">{spans}</div>'


def is_multi_device(value: Any) -> bool:
    try:
        return summaries.is_array(value) and len(value.sharding.device_set) > 1
    except Exception:
        return False


def sharding_table(name: str, value: Any) -> str:
    """Which device holds which slice of a sharded array, as an HTML table."""
    try:
        mapping = value.sharding.devices_indices_map(tuple(value.shape))
    except Exception as e:
        return f'<div style="{ERROR_STYLE}">*** could not read the sharding: {esc(e)}</div>'

    def fmt(index: tuple) -> str:
        return "[" + ", ".join(f"{s.start or 0}:{s.stop if s.stop is not None else n}"
                               if isinstance(s, slice) else str(s)
                               for s, n in zip(index, value.shape)) + "]"

    rows = [f"<tr><td>{esc(d)}</td><td>{esc(fmt(ix))}</td></tr>"
            for d, ix in sorted(mapping.items(), key=lambda kv: kv[0].id)[:MAX_SHARD_ROWS]]
    summary = summaries.summarize(name, value)
    return (f'<div class="jaxdbg-sharding" style="{_MONO}"><div>{esc(name)}: '
            f"{esc(summary.array_type)} {esc(summary.sharding or '')}</div>"
            f'<table style="border-collapse:collapse;"><tr><th style="text-align:left;">device</th>'
            f'<th style="text-align:left;">slice</th></tr>{"".join(rows)}</table></div>')


# --------------------------------------------------------------------------- panel


class _PanelBox(W.VBox):
    """The panel's outer box, with a short repr.

    ipywidgets puts ``repr(widget)`` (cut to 110 characters) in the text/plain part of
    every display, and the default repr walks every child: hundreds of widgets, tens
    of milliseconds at each stop.
    """

    def __repr__(self) -> str:
        return f"<jaxdbg debugger panel, {len(self.children)} parts>"


class DebuggerPanel:
    """Frames, source, locals, an expression box and buttons over one stop's Session.

    ``panel.widget`` is the box to display. ``post`` receives command tuples from the
    widget handlers; the stop's thread passes each to :meth:`handle`.
    """

    def __init__(self, session: Session, *, post: Callable[[Command], None] | None = None,
                 context: int = CONTEXT_LINES) -> None:
        self.session = session
        self.context = context
        self._post = post
        self.log: list[LogEntry] = []
        self.finished_html: str | None = None
        self.finished_display: html_view.Rendered | None = None  # HTML + text/plain
        self._locals_cache: dict[int, list[summaries.ValueSummary]] = {}
        self._local_rows: list[tuple[W.Button, list[W.HTML]]] = []
        self._last_header = ""
        # Every widget opens a comm, and so do its own Layout and style; widgets that
        # look alike share one of each (a panel over 50 locals would otherwise send
        # three times as many comm_open messages). None of these is changed later.
        self._cell_layout, self._cell_style = W.Layout(), ipywidgets_api.html_style()
        self._name_layout, self._button_style = W.Layout(width="auto"), W.ButtonStyle()
        self._wide_layout = W.Layout(width="100%")
        self._column_heads = [self._cell("<b>name</b>"), self._cell(
            local_details_html([f"<b>{c}</b>" for c in LOCAL_COLUMNS[1:]]))]

        self.header = self._cell(layout=self._wide_layout)
        self.frame_buttons = [self._frame_button(i) for i in range(len(session.frames))]
        self.frames_box = W.VBox(self.frame_buttons, layout=self._wide_layout)
        self.source = self._cell(layout=self._wide_layout)
        self.locals_grid = W.GridBox(layout=W.Layout(
            grid_template_columns="max-content minmax(0, 1fr)", grid_gap="0px 12px", width="100%"))
        self.locals_note = self._cell()
        self.expression = W.Text(placeholder="expression, statement or command; Enter runs it",
                                 continuous_update=True, layout=W.Layout(flex="1 1 auto"))
        self.expression.on_msg(self._on_text_message)
        self.pretty = W.ToggleButton(value=False, description="pp", tooltip="pretty-print results (pp)",
                                     layout=W.Layout(width="48px"))
        self.log_html = self._cell(layout=self._wide_layout)
        self.more_button = self._button("Show more", ("more",), "show the newest long result in full",
                                        layout=W.Layout())  # its own: display toggles
        self.more_button.layout.display = "none"
        self.up_button = self._button("Up", ("nav", "up"), "older (calling) frame")
        self.down_button = self._button("Down", ("nav", "down"), "newer (called) frame")
        self.continue_button = self._button("Continue", ("nav", "continue"), "leave the debugger",
                                            style="success")
        self.quit_button = self._button("Quit", ("nav", "quit"), "stop the computation", style="danger")
        self.skip_button = (self._button("Skip batch", ("nav", "skip"),
                                         "continue and skip the rest of this vmap batch", style="warning")
                            if session.info.batched else None)
        controls = [self.up_button, self.down_button, self.continue_button]
        if self.skip_button is not None:
            controls.append(self.skip_button)
        controls.append(self.quit_button)
        self.buttons = W.HBox(controls, layout=self._cell_layout)
        self.widget = _PanelBox([
            self.header, self.buttons,
            W.HBox([W.VBox([self._cell("<b>Frames</b>"), self.frames_box],
                           layout=W.Layout(width="34%", min_width="200px")),
                    W.VBox([self.source], layout=W.Layout(width="66%"))],
                   layout=self._wide_layout),
            self._cell("<b>Locals</b>"), self.locals_grid, self.locals_note,
            W.HBox([self.expression, self.pretty], layout=self._wide_layout),
            self.log_html, self.more_button,
        ], layout=W.Layout(border="1px solid #ccc", padding="4px", width="100%"))
        self.widget.add_class("jaxdbg-panel")
        self.refresh()

    # -- widgets -----------------------------------------------------------------

    def _button(self, label: str, command: Command, tooltip: str, style: str = "",
                layout: W.Layout | None = None) -> W.Button:
        button = W.Button(description=label, tooltip=tooltip, button_style=style,
                          layout=self._cell_layout if layout is None else layout,
                          style=self._button_style)
        button.on_click(lambda _b: self.send(command))
        return button

    def _frame_button(self, index: int) -> W.Button:
        frame = self.session.frames[index]
        button = W.Button(description=f"{index}  {frame.function}  {frame.location}",
                          tooltip=f"{frame.filename}:{frame.lineno}",
                          layout=self._wide_layout, style=self._button_style)
        button.on_click(lambda _b: self.send(("nav", f"frame {index}")))
        return button

    def _cell(self, value: str = "", layout: W.Layout | None = None) -> W.HTML:
        style = {} if self._cell_style is None else {"style": self._cell_style}
        return W.HTML(value, layout=self._cell_layout if layout is None else layout, **style)

    def _local_row(self, row: summaries.ValueSummary) -> tuple[W.Button, list[W.HTML]]:
        """A pooled locals row, opened with ``row``'s values (no update message follows);
        rows are reused across frames to avoid comm churn."""
        name = W.Button(description=row.name, layout=self._name_layout, style=self._button_style,
                        tooltip="show the value")
        # The label is the name the user saw and clicked, whatever the rows show now.
        name.on_click(lambda b: self.send(("inspect", b.description)))
        return name, [self._cell(local_details_html(local_cells(row)), layout=self._wide_layout)]

    # -- the handler side: cheap, only enqueue -----------------------------------

    def send(self, command: Command) -> None:
        """What every widget handler calls: hand the command to the stop's thread."""
        if self.finished_html is not None:
            return
        if self._post is None:
            self.handle(command)
        else:
            self._post(command)

    def _on_text_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # ipywidgets 8 frontends send {"event": "submit"} on Enter (on_submit is deprecated).
        if isinstance(content, dict) and content.get("event") == "submit":
            self.submit()

    def submit(self, text: str | None = None) -> None:
        """Enter in the expression box: post what it holds, in the current p/pp mode."""
        line = (self.expression.value if text is None else text).strip()
        if line:
            self.send(("execute", line, bool(self.pretty.value)))

    # -- the stop's side: run through the Session, then redraw --------------------

    def handle(self, command: Command) -> Output | None:
        """Run one posted command against the session and refresh the view.

        Never raises (KeyboardInterrupt excepted): a failure is shown in the log and
        the stop goes on.
        """
        def failed(e: BaseException) -> None:
            self.add_log(LogEntry("", f"*** the panel failed: {format_exception(e)}", error=True))
            guarded(self.refresh, lambda e: None)

        return guarded(lambda: self._handle(command), failed)

    def _handle(self, command: Command) -> Output | None:
        kind = command[0] if command else None
        output: Output | None = None
        if kind == "nav":
            output = self.session.execute(command[1])
            self._log_nav(command[1], output)
        elif kind == "execute":
            pretty = bool(command[2]) if len(command) > 2 else False
            output = self._run_typed(command[1], pretty)
            self.expression.value = ""
        elif kind == "inspect":
            output = self._inspect(command[1])
        elif kind == "more":
            for entry in reversed(self.log):
                if entry.long and not entry.expanded:
                    entry.expanded = True
                    break
        else:
            self.add_log(LogEntry("", f"*** unknown panel command {command!r}", error=True))
        if self.session.finished:
            self.finish()  # continue / skip / quit: nothing left to click
        else:
            self.refresh()
        return output

    def _run_typed(self, line: str, pretty: bool) -> Output:
        """A typed line; a word naming a variable shows it rather than acting as a command."""
        output = self.session.execute(line, pretty=pretty)
        self.add_output(line, output)
        return output

    def _inspect(self, name: str) -> Output | None:
        value = self.session.current.locals.get(name)
        if is_multi_device(value):
            self.add_log(LogEntry(f"sharding of {name}", "", html=sharding_table(name, value)))
            return None
        output = self.session.evaluate(name, pretty=True, expression_only=True)
        self.add_output(f"pp {name}", output)
        return output

    def _log_nav(self, line: str, output: Output) -> None:
        if output.resume:  # the static summary's last line says how the stop ended
            self.add_log(LogEntry(line, ""))
            return
        if output.kind is OutputKind.SOURCE and not output.is_error:
            self.add_log(LogEntry(line, self.session.frame_label()))
        else:
            self.add_output(line, output)

    # -- log -------------------------------------------------------------------------

    def add_output(self, command: str, output: Output) -> None:
        text = output.text
        if output.kind is OutputKind.VALUE and not text:
            text = "''"
        self.add_log(LogEntry(command, text, error=output.is_error))

    def add_log(self, entry: LogEntry) -> None:
        self.log.append(entry)

    def log_html_text(self, newest_first: bool = True, limit: int | None = LOG_CHARS) -> str:
        entries = self.log[-LOG_ENTRIES:]
        if newest_first:
            entries = entries[::-1]
        return "".join(render_entry(e, limit) for e in entries)

    # -- redraw ------------------------------------------------------------------------

    def header_html(self) -> str:
        s = self.session
        lines = [f'<div class="jaxdbg-banner" style="font-weight:bold;">{esc(s.banner())}</div>']
        if s.info.reason:
            lines.append(f'<div class="jaxdbg-reason" style="{ERROR_STYLE}">{esc(s.info.reason)}</div>')
        if s.index:
            lines.append(f'<div class="jaxdbg-viewing">viewing {esc(s.frame_label())}</div>')
        return "".join(lines)

    def refresh_header(self) -> bool:
        """Redraw the header if it changed (the count of waiting stops moves); cheap."""
        text = self.header_html()
        if text == self._last_header:
            return False
        self._last_header = self.header.value = text
        return True

    def refresh(self, output: Output | None = None) -> None:
        """Bring every part of the view up to date with the session."""
        if self.finished_html is not None:
            return
        s = self.session
        self.refresh_header()
        for i, button in enumerate(self.frame_buttons):
            button.button_style = "info" if i == s.index else ""
        self.up_button.disabled = s.index >= len(s.frames) - 1
        self.down_button.disabled = s.index == 0
        self.source.value = self.source_html()
        self._refresh_locals()
        self.log_html.value = self.log_html_text()
        has_more = any(e.long and not e.expanded for e in self.log[-LOG_ENTRIES:])
        self.more_button.layout.display = None if has_more else "none"

    def source_html(self) -> str:
        s = self.session
        f = s.current
        view = s.source_view(f.lineno - self.context, f.lineno + self.context)
        return render_source(view, s.heading())

    def locals_cells(self) -> list[list[str]]:
        """The table as shown: name, then the HTML of each further column, per row."""
        return [[row.name, *local_cells(row)] for row in self.locals_rows()[:MAX_LOCALS]]

    def locals_rows(self) -> list[summaries.ValueSummary]:
        """Summaries of the current frame's locals, computed once per frame."""
        index = self.session.index
        if index not in self._locals_cache:  # the table survives odd values itself
            self._locals_cache[index] = list(self.session.locals_table().data or [])
        return self._locals_cache[index]

    def _refresh_locals(self) -> None:
        rows = self.locals_rows()
        shown = rows[:MAX_LOCALS]
        children: list[W.Widget] = list(self._column_heads)
        for i, row in enumerate(shown):
            if i == len(self._local_rows):  # a new row opens with its values
                self._local_rows.append(self._local_row(row))
                name_button, cells = self._local_rows[i]
            else:
                name_button, cells = self._local_rows[i]
                name_button.description = row.name
                cells[0].value = local_details_html(local_cells(row))
            children += [name_button, *cells]
        self.locals_grid.children = tuple(children) if shown else ()
        hidden = len(rows) - len(shown)
        self.locals_note.value = ("(no locals)" if not rows else
                                  f"... {hidden} more; type <code>locals</code> to list all" if hidden else "")

    # -- the end of the stop ------------------------------------------------------

    def summary(self) -> outputs.StopSummary:
        """The finished stop as the engine's data: this panel's log, the engine's phrases."""
        log = [outputs.LogEntry(e.command, e.text, e.error,
                                Markup(e.html) if e.html is not None else None)
               for e in self.log[-LOG_ENTRIES:]]
        return self.session.summary(log)

    def static_html(self) -> str:
        """Self-contained HTML for the finished stop (jaxdbg.views.html): where it
        stopped, the log, how it ended; reads the same in a saved notebook."""
        return html_view.stop_summary(self.summary(), LOG_CHARS)

    def finish(self, note: str | None = None) -> str:
        """Collapse to a static summary: one HTML widget replaces the live ones.

        Returns the summary HTML (the backend also puts it in the cell's output as
        plain text/html, which survives saving the notebook without widget state).
        """
        if self.finished_html is not None:
            return self.finished_html
        if note:
            self.add_log(LogEntry("", note, error=True))
        self.finished_display = html_view.stop_summary_display(self.summary(), LOG_CHARS)
        html_text = self.finished_display.html
        self.finished_html = html_text
        old = list(self.widget.children) + list(self._column_heads)
        old += [w for button, cells in self._local_rows for w in (button, *cells)]
        self.widget.children = (W.HTML(html_text),)
        for child in old:
            _close_tree(child)
        return html_text

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _close_tree(widget: W.Widget) -> None:
    """Close a widget and its children (frees their comms)."""
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    try:
        widget.close()
    except Exception:
        pass


def run_legacy_debugger(session: Session, **options: Any) -> None:
    """The widget backend's loop as it served this panel (no fallbacks): for the benchmark."""
    from IPython.display import HTML, display

    from jaxdbg.engine.outputs import Resume as _Resume
    from jaxdbg_widgets.pause.channel import CLOSED, UNRESPONSIVE, PauseChannel

    with PauseChannel() as channel:
        panel = DebuggerPanel(session, post=channel.post)
        channel.attach(panel.widget)
        handle = display(panel.widget, display_id=True)
        while not session.finished:
            command = channel.wait(timeout=0.5)
            if command is None:
                panel.refresh_header()
                continue
            if command is CLOSED or command is UNRESPONSIVE:
                session.end(_Resume.CONTINUE)
                break
            panel.handle(command)
            channel.attach(panel.widget)
        handle.update(HTML(panel.finish()))
