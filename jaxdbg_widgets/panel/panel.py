"""The debugger panel: one widget, drawn by its own browser code, over a Session.

The panel is a view only. The browser sends small JSON messages (a typed line, a
button's command, a request for more locals rows, a completion); the widget's
message handler only hands them to ``post`` (a
:class:`~jaxdbg_widgets.pause.channel.PauseChannel` in a kernel). The thread that owns
the stop takes each off the channel and calls :meth:`DebuggerPanel.handle`, which
runs it through the Session and updates the widget's state in one message.
Without ``post`` (unit tests, or a cell that already returned) messages run at once.

Messages from the browser (``content["type"]``; declared in
:mod:`jaxdbg_widgets.panel.protocol`, which ``panel.js`` reads its names from):

``run``       ``{id, line, typed, pretty}``: a typed line or a button's command line
``locals``    ``{frame, start, count}``: more rows of the locals table
``expand``    ``{frame, path}``: the children of a pytree row (path: name, then positions)
``stats``     ``{frame, path}``: the statistics of a big array's row, sent ``pending``
              (the browser asks when it shows the row; see ``panel_model.local_row``)
``picture``   ``{frame, path}``: the small picture of an array row now shown
``view``      ``{frame, path, axes, indices, sampling}``: the large view of an array (the
              slice: the two axes shown, the index of each other axis; how a big slice is
              sampled, "strided" or "edges"; see ``array_view``)
``complete``  ``{id, text}``: Tab completion of the input
``more``      ``{entry}``: show a cut log entry in full
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxdbg.engine import breakpoint_state, evaluation, library_frames, outputs
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.engine.values import array_picture
from jaxdbg.runtime import notices, phrases
from jaxdbg.views import html as html_view
from jaxdbg_widgets.panel import array_view
from jaxdbg_widgets.panel import state as model
from jaxdbg_widgets.panel.log import LogEntry, html_of
from jaxdbg_widgets.panel.protocol import PRESENCE, TYPE, ToBrowser, ToKernel, message
from jaxdbg_widgets.panel.widget import PanelWidget

Command = Any  # a message dict from the browser

CONTEXT_LINES = phrases.PANEL_CONTEXT  # source lines shown either side of the current line
LOG_ENTRIES = 100  # entries kept in the live log (each one is cut to LOG_CHARS)
FIRST_LOCALS = 20  # locals rows sent with a frame (the box shows ~12); the browser asks for the rest
MAX_PAGE = 500  # rows sent for one request
HISTORY_LENGTH = 500

#: Lines typed in any panel of this kernel, oldest first (↑ / ↓ across stops).
HISTORY: list[str] = []


def _for_breakpoint(s: Session) -> bool:
    """Whether the stop is a live numbered breakpoint's, so that Continue all, Disable
    and Ignore mean something (not a post-mortem, a NaN stop or a reopened saved stop)."""
    number = s.info.breakpoint_id
    return s.watch_book is None and number is not None and breakpoint_state.exists(number)


class DebuggerPanel:
    """Frames, source, locals, a console and buttons over one stop's Session.

    ``panel.widget`` is the widget to display. ``before_open(widget)`` runs before the
    frontend hears of the widget (the pause channel routes its comm there).
    """

    def __init__(
        self,
        session: Session,
        *,
        post: Callable[[Command], None] | None = None,
        context: int = CONTEXT_LINES,
        before_open: Callable[[Any], None] | None = None,
    ) -> None:
        self.session = session
        self.context = context
        self._post = post
        self.log: list[LogEntry] = []
        self._entries = 0
        self.finished_html: str | None = None
        #: The static summary (jaxdbg.views.html: HTML with a text/plain twin), once finished.
        self.finished_display: html_view.Rendered | None = None
        self._finished_summary: outputs.StopSummary | None = None
        self._names: dict[int, list[str]] = {}
        self._rows: dict[int, dict[int, dict]] = {}
        self._most: int | None = None
        self._frames_shown = session.frames  # a replay swaps the list: then all is redrawn
        self._tooltips = model.button_tooltips()

        if before_open is None:  # no pause channel: messages come on this thread, later
            self.widget = PanelWidget(**self._initial_state())
            self.widget.on_msg(self._on_message)
        else:
            hook = before_open

            def prepare(widget: PanelWidget) -> None:
                # The handler is in place before the frontend hears of the comm: a click
                # sent the moment the panel appears may be handled on the subshell's
                # thread while this constructor has not even returned.
                widget.on_msg(self._on_message)
                hook(widget)

            self.widget = PanelWidget(before_open=prepare, **self._initial_state())
        self.widget.text_form = self.text_form("the panel needs a Jupyter frontend that draws widgets")

    def text_form(self, next_step: str) -> str:
        """The panel as a frontend without widgets prints it: the stop, and what happens next."""
        frame = self.session.stop_frames[0]
        return notices.phrase(f"paused at {frame.location} in {frame.function}; {next_step}")

    # -- state ------------------------------------------------------------------------

    def _initial_state(self) -> dict:
        return {
            "frames": model.frame_rows(self.session),
            "selected": self.session.index,
            "source": model.source_state(self.session, self.context),
            "locals_page": self._locals_page(),
            "log": [],
            "status": self._status(),
            "history": HISTORY[-HISTORY_LENGTH:],
            "tooltips": self._tooltips,
            "watches": model.watch_state(self.session),
            "breakpoints": model.breakpoint_rows(),
        }

    def _status(self) -> dict:
        s = self.session
        # The reason has a line of its own under the banner: said once.
        return {
            "banner": s.banner(reason=False),
            "reason": s.info.reason or "",
            "note": s.info.note or "",
            "for_breakpoint": _for_breakpoint(s),
            "can_replay": s.current.code is not None,
            "finished": s.finished,
            "ended": "" if not s.finished else str(s.resume),
            "batched": s.info.batched,
            "replaying": s.replay is not None,
            # Up / Down step over library frames: greyed where only those are left.
            "oldest": library_frames.step(s.frames, s.index, 1, older=True) is None,
            "newest": s.index == 0,
        }

    def refresh_header(self) -> bool:
        """Redraw the banner if it changed (the count of waiting stops moves); cheap."""
        status = self._status()
        if status == self.widget.status:
            return False
        self.widget.status = status
        return True

    def refresh(self, done: str | None = None) -> None:
        """Bring the widget up to date with the session (two update messages); ``done``
        is the id of the command this answers (the browser's busy indicator)."""
        if self.finished_html is not None:
            return
        w = self.widget
        frames_changed = self.session.frames is not self._frames_shown
        if frames_changed:  # a replay paused, or ended: other frames, other locals
            self._frames_shown = self.session.frames
            self._names, self._rows, self._most = {}, {}, None
        with w.hold_sync():  # what moved first: the selected frame and its source
            rows = model.frame_rows(self.session)
            if frames_changed or rows != w.frames:  # a selected library frame unfolds its run
                w.frames = rows
            w.selected = self.session.index
            w.source = model.source_state(self.session, self.context)
            w.status = self._status()
        with w.hold_sync():  # then its locals (summarised now) and the log
            w.locals_page = self._locals_page()
            w.log = self._log_state()
            w.watches = model.watch_state(self.session)
            w.breakpoints = model.breakpoint_rows()
            if done is not None:
                w.done = done

    # -- locals -----------------------------------------------------------------------

    def _names_of(self, frame: int) -> list[str]:
        if frame not in self._names:
            self._names[frame] = self.session.local_names()
        return self._names[frame]

    def locals_rows(self, start: int, count: int) -> list[dict]:
        """Rows ``start`` .. ``start + count`` of the selected frame's table, summarised
        once each and only when asked for (a frame may hold thousands). The session
        makes them: a remote stop's come from the process that holds the values."""
        frame = self.session.index
        names = self._names_of(frame)
        cache = self._rows.setdefault(frame, {})
        wanted = range(max(start, 0), min(start + count, len(names)))
        missing = [i for i in wanted if i not in cache]
        if missing:
            first = missing[0]
            for offset, row in enumerate(self.session.local_rows(first, missing[-1] + 1 - first)):
                cache.setdefault(first + offset, row)
        return [cache[i] for i in wanted if i in cache]

    def _most_locals(self) -> int:
        """The longest table of any frame: the browser sizes the box for it, so moving
        between frames never moves what is below."""
        if self._most is None:
            here = self.session.index
            try:
                most = 0
                for i in range(len(self.session.frames)):
                    self.session.index = i
                    most = max(most, len(self._names_of(i)))
            finally:
                self.session.index = here
            self._most = most
        return self._most

    def _locals_page(self) -> dict:
        names = self._names_of(self.session.index)
        return {
            "frame": self.session.index,
            "total": len(names),
            "most": self._most_locals(),
            "rows": self.locals_rows(0, FIRST_LOCALS),
        }

    # -- messages ---------------------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any = None) -> None:
        """The widget's message handler: only queue (it may run on another thread)."""
        if not isinstance(content, dict):
            return  # not ours (malformed messages are ignored)
        kind = content.get(TYPE)
        if kind not in _HANDLERS and kind not in PRESENCE:
            return
        if self._post is None:
            self.handle(content)
        else:
            self._post(content)

    def send(self, content: dict) -> None:
        """Post a message as if the browser had sent it (tests, benchmarks)."""
        self._on_message(self.widget, content)

    def handle(self, command: Command) -> Output | None:
        """Run one browser message on the stop's thread and update the view."""
        if self.finished_html is not None or not isinstance(command, dict):
            return None
        kind = command.get(TYPE)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return None
        try:
            output = handler(self, command)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # a bad message must not end the stop
            self._add("", f"*** panel message failed: {evaluation.format_exception(e)}", error=True)
            self.widget.log = self._log_state()
            output = None
        if command.get(TYPE) == ToKernel.RUN:
            if self.session.finished:
                self.finish()
            else:
                self.refresh(done=str(command.get("id", "")))
        return output

    def _run(self, command: dict) -> Output | None:
        line = command.get("line")
        if not isinstance(line, str):
            self._add("", "*** panel message without a command line", error=True)
            return None
        if command.get("typed"):
            pretty = bool(command.get("pretty"))
            remember(line)
            output = self.session.execute(line, pretty=pretty)
            self._add_output(line, output, pretty=pretty, typed=True)
        else:
            output = self.session.execute(line)
            self._log_button(line, output)
        return output

    def _more_locals(self, command: dict) -> None:
        frame = command.get("frame")
        if frame != self.session.index:
            return  # the user has moved on; the browser asks again for the new frame
        start, count = int(command.get("start", 0)), min(int(command.get("count", 100)), MAX_PAGE)
        self.widget.send(message(ToBrowser.LOCALS, frame=frame, start=start, rows=self.locals_rows(start, count)))

    def _row_path(self, command: dict) -> tuple[int, list] | None:
        """The frame and path a row message names; None when the user has moved to
        another frame (the browser asks again there) or it names no row."""
        frame, path = command.get("frame"), command.get("path")
        if frame != self.session.index or not isinstance(path, list) or not path:
            return None
        return frame, path

    # Opening a row: the session makes what it shows (a remote stop's owner, where the values are).
    def _expand(self, command: dict) -> None:
        found = self._row_path(command)
        if found is None:
            return
        frame, path = found
        rows, total = self.session.row_children(path, model.MAX_CHILDREN)
        self.widget.send(message(ToBrowser.CHILDREN, frame=frame, path=path, rows=rows, total=total))

    def _stats(self, command: dict) -> None:
        """A shown row's big array: its statistics now (taken once, see
        ``summaries.array_stats``), sent as the row in full."""
        found = self._row_path(command)
        if found is None:
            return
        frame, path = found
        if len(path) == 1:
            # The table's own row: the session's (a redraw of this frame shows it too).
            names = self._names_of(frame)
            if str(path[0]) not in names:
                return
            index = names.index(str(path[0]))
            rows = self.session.local_rows(index, 1, lazy=False)
            if rows:
                self._rows.setdefault(frame, {})[index] = rows[0]
                self.widget.send(message(ToBrowser.STATS, frame=frame, path=path, row=rows[0]))
            return
        self.widget.send(message(ToBrowser.STATS, frame=frame, path=path, row=self.session.row_in_full(path)))

    def _picture(self, command: dict) -> None:
        """A shown array row's small picture (made only when the browser shows the row)."""
        found = self._row_path(command)
        if found is None:
            return
        frame, path = found
        try:
            _label, pic, _stats = self.session.row_picture(path)
        except array_picture.PictureError as e:
            self.widget.send(array_view.thumbnail_error(frame, path, str(e)))
            return
        content, buffers = array_view.thumbnail_message(frame, path, pic)
        self.widget.send(content, buffers=buffers)

    def _view(self, command: dict) -> None:
        """The large view of an array row, at the slice the browser chose."""
        found = self._row_path(command)
        if found is None:
            return
        frame, path = found
        label = str(path[-1])
        try:
            label, pic, stats = self.session.row_picture(
                path,
                large=True,
                axes=array_view.axes_of(command.get("axes")),
                indices=array_view.indices_of(command.get("indices")),
                sampling=array_view.sampling_of(command.get("sampling")),
            )
        except array_picture.PictureError as e:
            self.widget.send(array_view.view_error(frame, path, label, str(e)))
            return
        content, buffers = array_view.view_message(frame, path, label, pic, stats)
        self.widget.send(content, buffers=buffers)

    def _complete(self, command: dict) -> None:
        text = command.get("text")
        if not isinstance(text, str):
            return
        self.widget.send(
            message(ToBrowser.COMPLETIONS, id=command.get("id"), text=text, matches=self.complete(text)[:200])
        )

    def complete(self, text: str) -> list[str]:
        """Completions of ``text`` as whole lines: the Session's, which the terminal's
        readline completion uses too."""
        try:
            return list(self.session.complete(text))
        except Exception:  # completion must never end the stop
            return []

    def _more(self, command: dict) -> None:
        number = command.get("entry")
        for entry in self.log:
            if entry.number == number:
                entry.expanded = True
        self.widget.log = self._log_state()

    # -- log ----------------------------------------------------------------------------

    def _log_state(self) -> list[dict]:
        return [e.state() for e in self.log[-LOG_ENTRIES:]]

    def _add(self, command: str, text: str, **kw: Any) -> None:
        self._entries += 1
        self.log.append(LogEntry(self._entries, command, text, **kw))

    def _add_output(self, command: str, output: Output, **kw: Any) -> None:
        text = output.text
        if output.kind is OutputKind.VALUE and not text:
            text = "''"
        self._add(command, text, error=output.is_error, html=html_of(output), **kw)

    def _log_button(self, line: str, output: Output) -> None:
        if output.resume:  # the static summary's last line says how the stop ended
            self._add(line, "")
        elif output.kind is OutputKind.SOURCE and not output.is_error:
            f = self.session.current
            said = "\n".join(t for t in (output.printed, output.note) if t)  # a replay's prints, banner
            where = f"frame {self.session.index}: {f.function} at {f.location}"
            self._add(line, f"{said}\n{where}" if said else where)
        else:
            self._add_output(line, output)

    # -- the end of the stop ------------------------------------------------------

    def summary(self) -> outputs.StopSummary:
        """The finished stop as the engine's data: this panel's log, the engine's phrases."""
        log = [outputs.LogEntry(e.echo(), e.full_text, e.error) for e in self.log[-LOG_ENTRIES:]]
        return self.session.summary(log)

    def summary_display(self) -> html_view.Rendered:
        """The static summary as it reads now (the watches' values taken since the end);
        once finished, only the watches are read again (not the pictures)."""
        if self._finished_summary is None:
            summary = self.summary()
        else:
            summary = dataclasses.replace(self._finished_summary, watches=tuple(self.session.watched()))
        return html_view.stop_summary_display(summary, html_view.LOG_CHARS)

    def static_html(self) -> str:
        return str(html_view.stop_summary(self.summary(), html_view.LOG_CHARS))

    def finish(self, note: str | None = None) -> str:
        """End the live view: the widget shows the stop has ended (and takes no more
        commands); returns the static summary's HTML. :attr:`finished_display` is the
        summary to put in the cell's output (with a readable ``text/plain``)."""
        if self.finished_html is not None:
            return self.finished_html
        if note:
            self._add("", note, error=True)
        summary = self._finished_summary = self.summary()
        self.finished_display = html_view.stop_summary_display(summary, html_view.LOG_CHARS)
        self.finished_html = str(self.finished_display.html)
        status = self._status()
        status.update(finished=True, ended=summary.outcome)
        with self.widget.hold_sync():
            self.widget.log = self._log_state()
            self.widget.status = status
        return self.finished_html

    def close(self) -> None:
        """Close the widget's comms, its own and its Layout's (after the cell's output
        shows the static summary)."""
        for widget in (self.widget, getattr(self.widget, "layout", None)):
            try:
                if widget is not None:
                    widget.close()
            except Exception:
                pass

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


_HANDLERS: dict[str, Callable[[DebuggerPanel, dict], Any]] = {
    ToKernel.RUN: DebuggerPanel._run,
    ToKernel.LOCALS: DebuggerPanel._more_locals,
    ToKernel.EXPAND: DebuggerPanel._expand,
    ToKernel.STATS: DebuggerPanel._stats,
    ToKernel.COMPLETE: DebuggerPanel._complete,
    ToKernel.PICTURE: DebuggerPanel._picture,
    ToKernel.VIEW: DebuggerPanel._view,
    ToKernel.MORE: DebuggerPanel._more,
}


def remember(line: str) -> None:
    """Add a typed line to the kernel-wide history (not repeats, not huge pastes)."""
    line = line.strip()
    if not line or len(line) > model.HISTORY_CHARS or (HISTORY and HISTORY[-1] == line):
        return
    HISTORY.append(line)
    del HISTORY[:-HISTORY_LENGTH]
