"""The typed contract between the Session (engine) and every view.

A command returns an :class:`Output`: its :class:`OutputKind`, a complete plain
``text`` rendering, and ``data`` in the structured form of that kind, which richer
views (rich, HTML, widgets) draw instead of re-spelling the text. Views read ``data``
through the typed property of its kind (``output.source``, ``output.locals`` ...), so
what a kind carries is declared here and checked by the type checker. A command that
ends the stop carries a :class:`Resume` outcome.

Both enums are ``str`` subclasses so that they serialise into widget state and
JSON unchanged; views compare against members, not literals.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the data types of the kinds; their modules import this one's users
    from jaxdbg.engine.breakpoint_state import BreakpointRow
    from jaxdbg.engine.values.drawable import Drawable
    from jaxdbg.engine.values.picture_sets import ShownArrays
    from jaxdbg.engine.values.sharding_layout import ShardingView
    from jaxdbg.engine.values.summaries import ValueSummary
    from jaxdbg.engine.watches import Watch


class OutputKind(str, enum.Enum):
    """What a command produced, and so which structured ``data`` comes with it."""

    TEXT = "text"  # data: None, or the ValueSummary that ``whatis`` describes
    ERROR = "error"  # data: None; text starts with "*** "
    VALUE = "value"  # data: the evaluated value
    WHERE = "where"  # data: list[FrameRow]
    SOURCE = "source"  # data: SourceView
    LOCALS = "locals"  # data: list[summaries.ValueSummary] (array_type, stat_parts, sharding)
    HELP = "help"  # data: list[CommandHelp]
    RESUME = "resume"  # data: None; Output.resume says how the stop ends
    SHARDING = "sharding"  # data: sharding_layout.ShardingView (str, rich and _repr_html_)
    BREAKPOINTS = "breakpoints"  # data: list[breakpoint_state.BreakpointRow]
    PICTURE = "picture"  # data: picture_sets.ShownArrays (str, rich and _repr_html_)
    WATCHES = "watches"  # data: list[watches.Watch] (snapshots, values over hits)
    # data: commands.watch_tables.LeafHistories (str and _repr_html_: a plot per leaf)
    LEAF_NORMS = "leaf norms"

    def __str__(self) -> str:
        return self.value


class Resume(str, enum.Enum):
    """How a stop ended, with the two phrases every view uses for it."""

    CONTINUE = "continue"
    SKIP = "skip"  # continue, and skip the rest of this vmap batch
    CONTINUE_ALL = "continue all"  # continue past every remaining stop of this breakpoint in this run
    QUIT = "quit"  # stop the computation with DebuggerQuit

    def __str__(self) -> str:
        return self.value

    @property
    def message(self) -> str:
        """Said when the command runs: ``Continuing.``"""
        return _RESUME_MESSAGES[self]

    @property
    def outcome(self) -> str:
        """Said afterwards, in a stop's summary: ``Continued.``"""
        return _RESUME_OUTCOMES[self]


_RESUME_MESSAGES = {
    Resume.CONTINUE: "Continuing.",
    Resume.SKIP: "Continuing; skipping the rest of this batch.",
    Resume.CONTINUE_ALL: "Continuing past every remaining stop of this breakpoint.",
    Resume.QUIT: "Quitting: the computation stops with jaxdbg.DebuggerQuit.",
}
_RESUME_OUTCOMES = {
    Resume.CONTINUE: "Continued.",
    Resume.SKIP: "Continued, skipping the rest of the batch.",
    Resume.CONTINUE_ALL: "Continued past every remaining stop of this breakpoint.",
    Resume.QUIT: "Quit: the computation was stopped.",
}
ENDED_OTHERWISE = "Ended."  # a stop that ended without a resume command
INTERRUPTED = "Interrupted."  # a stop ended by Ctrl-C or the kernel's interrupt


def resume_said(how: Resume, nothing_to_quit: str | None) -> tuple[str, str]:
    """What resuming ``how`` says as the command runs, and in the stop's summary. A quit
    where no computation is left to stop (StopInfo.nothing_to_quit) only leaves the stop."""
    if how is Resume.QUIT and nothing_to_quit:
        return f"Quitting: {nothing_to_quit}.", "Quit."
    return how.message, how.outcome


@dataclasses.dataclass(frozen=True)
class LogEntry:
    """One command of a stop and what it printed, as the summary shows it.

    ``html`` is markup a view made for this entry (a ``markupsafe.Markup``, so it
    is known to be escaped already); otherwise views escape ``text`` themselves.
    """

    command: str
    text: str
    error: bool = False
    html: Any = None


@dataclasses.dataclass(frozen=True)
class StopSummary:
    """What stays of a finished stop: where it was, the line, its log, how it ended.

    Made by :meth:`jaxdbg.engine.session.Session.summary`; drawn by
    :func:`jaxdbg.views.html.stop_summary` (HTML with a text/plain twin).
    """

    banner: str
    location: str  # "In[3]:4" or "/path/file.py:12"
    line: str  # the stopped-at source line, stripped ("" when unknown)
    log: tuple[LogEntry, ...]
    outcome: str  # Resume.outcome, or ENDED_OTHERWISE
    #: The stopped-at frame's arrays as (name, array_picture.ArrayPicture), small.
    pictures: tuple[tuple[str, Any], ...] = ()
    watches: tuple[Watch, ...] = ()  # the breakpoint's watches, values over hits up to this stop


@dataclasses.dataclass(frozen=True)
class CommandHelp:
    """One debugger command as ``help`` lists it."""

    names: tuple[str, ...]  # the command and its aliases
    usage: str
    summary: str


@dataclasses.dataclass(frozen=True)
class FrameRow:
    index: int
    function: str
    filename: str
    lineno: int
    line: str
    current: bool
    replay: bool = False  # a frame of a replay run from the stop
    #: A row standing for this many installed libraries' frames (``index``: the first),
    #: whose ``function`` says so: ``… 5 frames in flax``.
    folded: int = 0


@dataclasses.dataclass(frozen=True)
class SourceView:
    filename: str
    first_lineno: int
    lines: list[str]  # without newlines; lines[0] is first_lineno
    current_lineno: int


@dataclasses.dataclass(frozen=True)
class Output:
    """The result of one command. ``text`` is always a complete plain rendering.

    ``data`` carries the structured form named by ``kind`` (see OutputKind).
    ``resume`` is set when the command ends the stop. ``printed`` is what the
    command wrote to stdout / stderr while it ran (``print(x)``); ``text`` starts
    with it, and a view that draws ``data`` instead of ``text`` draws it first.
    """

    kind: OutputKind
    text: str
    data: Any = None
    resume: Resume | None = None
    truncated: bool = False
    printed: str = ""
    #: What the command says before its data, also in ``text`` (a replay's banner, its
    #: ``--Return--``): a view that draws a SOURCE from ``data`` shows it too.
    note: str = ""

    @property
    def result_text(self) -> str:
        """``text`` without what the command printed first."""
        return self.text[len(self.printed) :].removeprefix("\n") if self.printed else self.text

    @property
    def is_error(self) -> bool:
        return self.kind is OutputKind.ERROR

    # -- ``data``, typed by kind: what the kind carries, or nothing for another kind --

    def _of(self, kind: OutputKind) -> Any:
        return self.data if self.kind is kind else None

    @property
    def source(self) -> SourceView | None:
        """``SOURCE``: the window of lines shown."""
        return cast("SourceView | None", self._of(OutputKind.SOURCE))

    @property
    def frames(self) -> list[FrameRow]:
        """``WHERE``: the stack, innermost first."""
        return cast("list[FrameRow]", self._of(OutputKind.WHERE) or [])

    @property
    def locals(self) -> list[ValueSummary]:
        """``LOCALS``: one summary per visible name."""
        return cast("list[ValueSummary]", self._of(OutputKind.LOCALS) or [])

    @property
    def value_summary(self) -> ValueSummary | None:
        """``TEXT`` from ``whatis``: the value it describes."""
        return cast("ValueSummary | None", self._of(OutputKind.TEXT))

    @property
    def value(self) -> Any:
        """``VALUE``: the evaluated value itself."""
        return self._of(OutputKind.VALUE)

    @property
    def help(self) -> list[CommandHelp]:
        return cast("list[CommandHelp]", self._of(OutputKind.HELP) or [])

    @property
    def sharding(self) -> ShardingView | None:
        """``SHARDING``: the layout, which draws itself as text, rich and HTML."""
        return cast("ShardingView | None", self._of(OutputKind.SHARDING))

    @property
    def pictures(self) -> ShownArrays | None:
        """``PICTURE``: arrays drawn as pictures (text, rich and HTML)."""
        return cast("ShownArrays | None", self._of(OutputKind.PICTURE))

    @property
    def breakpoints(self) -> list[BreakpointRow]:
        return cast("list[BreakpointRow]", self._of(OutputKind.BREAKPOINTS) or [])

    @property
    def leaf_norms(self) -> Drawable | None:
        """``LEAF_NORMS``: a pytree watch's leaves over its hits (``watch N leaves``),
        which draw themselves as text and HTML."""
        return cast("Drawable | None", self._of(OutputKind.LEAF_NORMS))

    @property
    def watches(self) -> list[Watch]:
        """``WATCHES``: the breakpoint's watches with their values over hits."""
        return cast("list[Watch]", self._of(OutputKind.WATCHES) or [])
