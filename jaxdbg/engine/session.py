"""The UI-agnostic debugger engine: frames, the current frame, and commands.

Backends are views: they feed lines (or button presses, which are lines too)
to :meth:`Session.execute` and render the :class:`Output` it returns. Command
semantics live here once, as ``bdb`` is to ``pdb``; the commands themselves are in
:mod:`jaxdbg.commands`, registered in the public table of
:mod:`jaxdbg.engine.command_table` that ``execute`` dispatches through.
"""

from __future__ import annotations

import dataclasses
import inspect
import pprint
import re
import types
from typing import Any, Callable, MutableMapping

from jaxdbg.engine import command_output, completion, evaluation, library_frames, watches
from jaxdbg.engine import source_window as source_lines
from jaxdbg.engine.command_table import TABLE as COMMANDS
from jaxdbg.engine.command_table import Command, error, split_command, unknown_word_hint
from jaxdbg.engine.frames import Frame, display_filename
from jaxdbg.engine.outputs import (
    ENDED_OTHERWISE,
    INTERRUPTED,
    FrameRow,
    LogEntry,
    Output,
    OutputKind,
    Resume,
    SourceView,
    StopSummary,
    resume_said,
)
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import (
    array_picture,
    local_rows,
    picture_sets,
    summaries,
    tree_glance,
    tree_outline,
    tree_summaries,
)
from jaxdbg.runtime import interrupts, phrases
from jaxdbg.runtime.guarded_calls import format_exception, guarded
from jaxdbg.runtime.lazy_values import hint_of

MAX_RESULT_CHARS = 20_000
DEFAULT_CONTEXT = phrases.DEFAULT_CONTEXT  # source lines either side of the current line
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def truncate(text: str, limit: int = MAX_RESULT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return (f"{text[:limit]}\n... [output truncated: {phrases.more_characters(len(text) - limit)}]", True)


class Session:
    """Debugger state for one stop: the frames, which one is selected, and scratch names."""

    def __init__(self, frames: list[Frame], info: StopInfo | None = None, context: int = DEFAULT_CONTEXT) -> None:
        if not frames:
            raise ValueError("a debugger session needs at least one frame")
        self.frames = frames
        self.info = info or StopInfo()
        self.context = context  # lines either side of the current line in source views
        self.index = 0
        self.scratch: dict[str, Any] = {}
        self.resume: Resume | None = None  # set once the stop ends
        self.last_line = ""
        self._previous_line = ""
        self._listed: tuple[int, int] | None = None  # (frame index, next line) after a list
        #: A view's way to end itself when an interrupted command cannot be stopped at
        #: once (see :func:`jaxdbg.runtime.interrupts.running_command`); called on another thread.
        self.on_stuck_command: Callable[[], None] | None = None
        self.interrupted = False  # ended by an interrupt rather than a command
        #: Where what a command prints also goes, as it is written (the terminal's
        #: stream, so a long command is seen while it runs); None: only into its Output.
        self.echo_printed: Any = None
        #: The replay running from this stop (jaxdbg.replay.stepping.ReplayRun), whose frames
        #: are shown above the stop's; continue and quit go to it while it runs.
        self.replay: Any = None
        #: The watches this stop shows: a reopened saved stop's own; None: this process's.
        self.watch_book: watches.WatchBook | None = None

    # -- state ---------------------------------------------------------------
    @property
    def current(self) -> Frame:
        return self.frames[self.index]

    @property
    def finished(self) -> bool:
        return self.resume is not None

    def banner(self, reason: bool = True) -> str:
        """One line saying where we stopped and why (``reason=False``: without the
        breakpoint's reason, for a view that shows the reason on a line of its own)."""
        frame = self.stop_frames[0]
        parts = [f"Stopped at {frame.location} in {frame.function}"]
        details = self.info.details(reason=reason)
        if details:
            parts.append(f"({details})")
        text = " ".join(parts)
        if self.replay is not None:  # the replay's own place, after the stop's
            now = self.frames[0]
            text += f"; replaying {self.replay.frame.function}, now at {now.location} in {now.function}"
        return text

    @property
    def stop_frames(self) -> list[Frame]:
        """The stop's own frames (without those of a replay shown above them)."""
        return self.replay.stop_frames if self.replay is not None else self.frames

    # -- dispatch ------------------------------------------------------------
    def execute(self, line: str, *, pretty: bool = False) -> Output:
        """Run one command line; never raises for bad input (KeyboardInterrupt excepted).

        pdb's rule: a line that starts with a command word is that command, even
        where a local has the same name (``p l``, ``p(l)`` print ``l``); ``!``
        makes the line Python (``!p = 3``, ``!c``). Any other line is evaluated
        (``pp`` style when ``pretty``).
        """
        if self.finished:
            return error(f"the session has already ended ({self.resume})")
        with interrupts.running_command(self.on_stuck_command):  # an interrupt ends it, on any thread
            return self._execute(line, pretty=pretty)

    def _execute(self, line: str, *, pretty: bool) -> Output:
        stripped = line.strip()
        if not stripped:
            if not self.last_line:
                return Output(OutputKind.TEXT, "")
            stripped = self.last_line
        self._previous_line, self.last_line = self.last_line, stripped
        with command_output.captured(echo=self.echo_printed) as printed:  # print(x) belongs to this command
            output = self._dispatch(stripped, pretty)
        return _with_printed(output, printed.getvalue())

    def _dispatch(self, stripped: str, pretty: bool) -> Output:
        if stripped.startswith("!"):
            return self.evaluate(stripped[1:], pretty=pretty)
        name, arg = split_command(stripped)
        found = COMMANDS.get(name)
        if found is None:
            output = self.evaluate(stripped, pretty=pretty)
            hint = unknown_word_hint(name, output.text)  # None at once for a line that ran
            if hint is None or self._is_bound(name):
                return output
            return dataclasses.replace(output, text=f"{output.text}\n    ({hint}.)")
        refusal = found.argument_error(name, arg)
        if refusal is not None:
            output = error(refusal)
        else:
            run = found.runner(arg)
            # A bug in a command, or user code it calls, must not end the stop.
            output = guarded(lambda: run(self, arg), lambda e: error(f"{name} failed: {format_exception(e)}"))
        if output.kind is OutputKind.ERROR and arg and self._meant_python(name, arg):
            output = dataclasses.replace(
                output, text=f"{output.text}\n    ({_BANG_RULE} Type !{stripped} to run it as Python.)"
            )
        return output

    def _meant_python(self, name: str, arg: str) -> bool:
        """Whether a failed command line was likely Python about a variable of its name."""
        return self._is_bound(name) or bool(_PYTHON_AFTER_NAME.match(arg))

    def _is_bound(self, name: str) -> bool:
        frame = self.current
        return name in frame.locals or name in frame.globals or name in self.scratch

    def commands(self) -> list[Command]:
        """Every command of the table, once each, in the order ``help`` lists them."""
        return COMMANDS.commands()

    # -- navigation ----------------------------------------------------------
    def select(self, index: int) -> Output:
        if not 0 <= index < len(self.frames):
            return error(f"no frame {index}; frames are 0 (innermost) to {len(self.frames) - 1}")
        self.index = index
        return self.source_around()

    def up(self, count: int = 1) -> Output:
        """``count`` frames older, installed libraries' frames stepped over (unless shown)."""
        target = library_frames.step(self.frames, self.index, count, older=True)
        return error("Oldest frame") if target is None else self.select(target)

    def down(self, count: int = 1) -> Output:
        target = library_frames.step(self.frames, self.index, count, older=False)
        return error("Newest frame") if target is None else self.select(target)

    def where(self) -> Output:
        """The stack, innermost first; each run of library frames one row (``… 5 frames in flax``)."""
        rows = []
        for item in self.frame_layout():
            if isinstance(item, library_frames.Fold):
                rows.append(FrameRow(item.first, item.text, "", 0, "", False, folded=item.count))
                continue
            f = self.frames[item]
            rows.append(
                FrameRow(item, f.function, f.filename, f.lineno, f.line().strip(), item == self.index, f.replay)
            )
        text = "\n".join(
            f"       {r.function}"
            if r.folded
            else f"{'>' if r.current else ' '} {r.index:>2}  {r.function}  {display_filename(r.filename)}:{r.lineno}"
            + (f"  {phrases.REPLAY_MARK}" if r.replay else "")
            + (f"\n        {r.line}" if r.line else "")
            for r in rows
        )
        return Output(OutputKind.WHERE, text, rows)

    def frame_layout(self) -> list[int | library_frames.Fold]:
        """The frame list's rows: frame indices, and folds of library frames."""
        return library_frames.layout(self.frames, self.index)

    # -- source --------------------------------------------------------------
    def source_view(self, first: int, last: int) -> SourceView:
        frame = self.current
        first = max(first, 1)
        last = min(last, len(frame.source))
        lines = [frame.line(n) for n in range(first, last + 1)]
        return SourceView(frame.filename, first, lines, frame.lineno)

    def source_around(self, context: int | None = None) -> Output:
        context = self.context if context is None else context
        frame = self.current
        view = self.source_view(frame.lineno - context, frame.lineno + context)
        self._listed = (self.index, view.first_lineno + len(view.lines))
        return Output(OutputKind.SOURCE, source_lines.plain_text(view, self.heading()), view)

    def list_source(self, context: int | None = None) -> Output:
        """``list``: around the current line, then onwards when repeated (as in pdb)."""
        listed = self._listed
        if (
            self._previous_line not in ("l", "list")
            or listed is None
            or listed[0] != self.index
            or not self.current.source
        ):  # nothing to go on from: say so again
            return self.source_around(context)
        start = listed[1]
        if start > len(self.current.source):
            return error("end of the source")
        context = self.context if context is None else context
        view = self.source_view(start, start + 2 * context)
        self._listed = (self.index, view.first_lineno + len(view.lines))
        return Output(OutputKind.SOURCE, source_lines.plain_text(view, self.heading()), view)

    def function_source(self) -> Output:
        frame = self.current
        if not frame.source:
            return error(f"no source available for {frame.location}")
        start = frame.first_lineno
        if frame.is_module_code:  # the whole module or cell is its "function"
            start, block = 1, frame.source
        else:  # a function's own lines, also one that starts a cell's line 1 (as pdb's ll)
            try:
                block = inspect.getblock(frame.source[start - 1 :])
            except Exception:
                block = frame.source[start - 1 :]
        view = self.source_view(start, start + len(block) - 1)
        return Output(OutputKind.SOURCE, source_lines.plain_text(view, self.heading()), view)

    def heading(self) -> str:
        """The current frame as every source view titles it: ``> In[3]:4 in f``."""
        f = self.current
        return f"> {f.location} in {f.function}" + (f"  {phrases.REPLAY_MARK}" if f.replay else "")

    def frame_label(self, index: int | None = None) -> str:
        """``frame 1: outer at In[3]:9``, as a view names a selected frame."""
        i = self.index if index is None else index
        f = self.frames[i]
        return f"frame {i}: {f.function} at {f.location}"

    # -- evaluation ----------------------------------------------------------
    def value_of(self, source: str, expression_only: bool = True) -> tuple[Any, Output | None]:
        """Evaluate in the current frame: (value, None), or (None, the error to show)."""
        try:
            return evaluation.evaluate(source, self.current, self.scratch, expression_only=expression_only), None
        except SyntaxError as e:
            return None, error(f"SyntaxError: {e.msg}")
        except evaluation.EvaluationError as e:
            return None, error(str(e))

    def evaluate(self, source: str, *, pretty: bool = False, expression_only: bool = False) -> Output:
        source = source.strip()
        if not source:
            return error("nothing to evaluate")
        value, failed = self.value_of(source, expression_only)
        if failed is not None:
            return failed
        if evaluation.is_nothing(value) or (value is None and not expression_only):
            # A bare expression that gives None (print(x), a call for its effect) shows
            # nothing, as at Python's and pdb's prompts; 'p' still shows None.
            return Output(OutputKind.TEXT, "")
        if pretty and tree_summaries.holds_arrays(value):  # the panel's pp toggle: as the pp command
            return Output(OutputKind.VALUE, str(tree_outline.outline(source, value)), value)
        return self.value_output(value, pretty=pretty)

    def value_output(self, value: Any, *, pretty: bool = False) -> Output:
        """A value as ``p`` (its repr) or ``pp`` (pprint) shows it, cut past MAX_RESULT_CHARS."""

        def show() -> str | BaseException:
            return pprint.pformat(value) if pretty else repr(value)

        shown = guarded(show, lambda e: e)
        if isinstance(shown, BaseException):
            return error(f"could not show the value: {format_exception(shown)}")
        text, cut = truncate(shown)
        return Output(OutputKind.VALUE, text, value, truncated=cut)

    def whatis(self, source: str) -> Output:
        value, failed = self.value_of(source, expression_only=True)
        if failed is not None:
            return failed
        summary = summaries.summarize(source, value, self.program_shardings().get(source))
        tree = tree_outline.structure(value)  # a Module's, a State's, a nested dict's
        text = tree or summaries.container_type(value) or summary.type_name
        if summary.is_array and tree is None:
            text += f" {summary.array_type}"
            if summary.sharding:
                text += f" sharding={summary.sharding}"
        return Output(OutputKind.TEXT, text, summary)

    def visible_locals(self) -> MutableMapping[str, Any]:
        """The frame's locals worth a table row.

        A module or notebook-cell frame's locals are all its globals; there the
        imports, IPython's history variables and private names are left out.
        """
        frame = self.current
        if not frame.is_module_code:  # a function's frame: every local is its own
            return frame.locals
        return {
            k: v
            for k, v in frame.locals.items()
            if not k.startswith("_") and k not in _SHELL_NAMES and not isinstance(v, types.ModuleType)
        }

    def local_names(self) -> list[str]:
        """The names of the current frame's locals table, in its order."""
        return [n for n in self.visible_locals() if not n.startswith("__")]

    def local_rows(self, start: int, count: int, *, lazy: bool = True) -> list[dict[str, Any]]:
        """Rows ``start`` .. ``start + count`` of the current frame's locals table as
        the panel draws them (:func:`jaxdbg.engine.values.local_rows.local_row`); ``lazy``: big
        arrays' statistics are left for later (the row says ``pending``)."""
        names = self.local_names()[max(start, 0) : max(start, 0) + max(count, 0)]
        values, shardings = self.visible_locals(), self.program_shardings()
        # A big traced tree not read yet shows its glance; reading it would rebuild it.
        return [
            local_rows.glance_row(n, glance)
            if lazy and isinstance(glance := hint_of(values, n), tree_glance.Glance)
            else local_rows.local_row(n, values.get(n), shardings.get(n), lazy=lazy)
            for n in names
        ]

    # Opening a row of the locals table (the panel): what it shows, made where the values are.
    def row_children(self, path: Any, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The rows of the first ``limit`` children of the current frame's row ``path``
        (a local's name, then child positions), and how many children it has."""
        _, value = local_rows.value_at(self.visible_locals(), path)
        return local_rows.child_rows(value, limit)

    def row_in_full(self, path: Any) -> dict[str, Any]:
        """The row ``path`` with its statistics taken (a big array's, asked for when shown)."""
        label, value = local_rows.value_at(self.visible_locals(), path)
        sharding = self.program_shardings().get(label) if len(path) == 1 else None
        return local_rows.local_row(label, value, sharding)

    def row_picture(
        self,
        path: Any,
        *,
        large: bool = False,
        axes: tuple[int, int] | None = None,
        indices: dict[int, int] | None = None,
        sampling: Any = None,
    ) -> tuple[str, array_picture.ArrayPicture, str]:
        """The label, picture and statistics text of the array row ``path``: its small
        picture, or the large view's slice (see :func:`jaxdbg.engine.values.local_rows.row_picture`)."""
        label, value = local_rows.value_at(self.visible_locals(), path)
        # Shard boundaries: the value's own, or as compiled for a traced local.
        compiled = self.current.compiled_shardings.get(label) if large and len(path) == 1 else None
        pic, stats = local_rows.row_picture(
            label, value, large=large, axes=axes, indices=indices, sampling=sampling, sharding=compiled
        )
        return label, pic, stats

    def program_shardings(self) -> dict[str, str]:
        """Layouts in the program of the current frame's traced locals.

        Sharded jit: the spec and mesh JAX knew at trace time. pmap / shard_map:
        each value is this device's shard, so the stop's device label.
        """
        frame = self.current
        shardings = dict(frame.shardings)
        device = self.info.place_label() if self.info.device is not None else None
        if device is not None:
            for name in frame.traced:
                shardings.setdefault(name, device)
        return shardings

    def locals_table(self, names: list[str] | None = None, empty: str = phrases.NO_LOCALS) -> Output:
        """The table of the frame's locals, or of those of ``names`` (in that order)."""
        visible = self.visible_locals()
        chosen = visible if names is None else {n: visible[n] for n in names if n in visible}
        rows = tree_summaries.summarize_locals(chosen, self.program_shardings())
        if not rows:
            return Output(OutputKind.LOCALS, empty, rows)
        width = max(len(r.name) for r in rows)
        text = "\n".join(f"{r.name:<{width}}  {r.type_name:<12} {r.describe_with_sharding()}" for r in rows)
        return Output(OutputKind.LOCALS, text, rows)

    # -- completion ----------------------------------------------------------
    def complete(self, text: str) -> list[str]:
        """Completions of the line ``text`` (typed up to the cursor), as whole lines.

        Names visible in the selected frame (locals, scratch names, module
        globals, builtins), command words at the start of a line, attributes
        after a dot and keys of a dict after ``[``; after a command word, what
        its argument kind in the command table offers (frame numbers, breakpoint
        numbers, ``continue all`` ...). Each result starts with ``text``'s
        unchanged part, so a view can replace its input with it.
        """
        return completion.complete_line(self, text)

    # -- ending the stop -----------------------------------------------------
    def end(self, how: Resume) -> Output:
        if self.replay is not None:  # the stop ends under a waiting replay: it ends too
            self.replay.abandon()
        self.resume = Resume(how)
        message, _ = resume_said(self.resume, self.info.nothing_to_quit)
        return Output(OutputKind.RESUME, message, resume=self.resume)

    def mark_interrupted(self) -> None:
        """A view saw the stop end with KeyboardInterrupt: its outcome says so."""
        self.interrupted = True
        if self.replay is not None:
            self.replay.abandon()

    def outcome(self) -> str:
        """How the stop ended, for its summary, said once: ``Continued.``, ``Interrupted.``,
        or ``Ended.`` when neither a command nor an interrupt ended it."""
        if self.resume is not None:
            return resume_said(self.resume, self.info.nothing_to_quit)[1]
        return INTERRUPTED if self.interrupted else ENDED_OTHERWISE

    def summary(self, log: list[LogEntry] | tuple[LogEntry, ...] = ()) -> StopSummary:
        """The finished stop as data, for a view's static summary."""
        frame = self.stop_frames[0]
        # below the frames of a replay, if one runs
        here, self.index = self.index, len(self.frames) - len(self.stop_frames)
        try:  # the stopped-at frame's arrays, as small pictures a saved notebook keeps
            pictures = picture_sets.small_pictures(self.visible_locals())
        finally:
            self.index = here
        return StopSummary(
            self.banner(),
            frame.location,
            frame.line().strip(),
            tuple(log),
            self.outcome(),
            pictures,
            tuple(self.watched()),
        )

    def watched(self) -> list[watches.Watch]:
        """The watches of this stop's breakpoint, with their values over its hits."""
        if self.info.breakpoint_id is None:
            return []
        book = self.watch_book if self.watch_book is not None else watches.LIVE
        return book.watches(self.info.breakpoint_id)

    def watch_values(self, expressions: list[str], hit: int | None) -> list[watches.WatchValue]:
        """Watch values at this stop: each expression evaluated in the innermost frame
        (another process's stop, served here, evaluates them where its values are)."""
        if not self.frames:
            return []
        return watches.in_frame(self.frames[0])(expressions, hit)


# What follows a command word when the line was meant as Python about a variable
# of that name: an assignment, a comparison, ".", "[" or "(" ("c = 1", "l[1]").
_PYTHON_AFTER_NAME = re.compile(r"^(=(?!=)|[-+*/%&|^@]=|==|!=|<=|>=|[.\[(])")
_BANG_RULE = "A line that starts with a command word is that command; start it with ! for Python."


def _with_printed(output: Output, printed: str) -> Output:
    """``output`` with what its command wrote while it ran, first, as it came."""
    if not printed:
        return output
    printed = printed.rstrip("\n")
    text = printed + ("\n" + output.text if output.text else "")
    return dataclasses.replace(output, text=text, printed=printed)
