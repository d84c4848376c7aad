"""The typed contract between the Session (engine) and every view.

A command returns an :class:`Output`: its :class:`OutputKind`, a complete plain
``text`` rendering, and ``data`` in the structured form of that kind, which richer
views (rich, HTML, widgets) draw instead of re-spelling the text. A command that
ends the stop carries a :class:`Resume` outcome.

Both enums are ``str`` subclasses so that they serialise into widget state and
JSON unchanged; views compare against members, not literals.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class OutputKind(str, enum.Enum):
    """What a command produced, and so which structured ``data`` comes with it."""

    TEXT = "text"          # data: None
    ERROR = "error"        # data: None; text starts with "*** "
    VALUE = "value"        # data: the evaluated value
    WHERE = "where"        # data: list[FrameRow]
    SOURCE = "source"      # data: SourceView
    LOCALS = "locals"      # data: list[summaries.ValueSummary]
    HELP = "help"          # data: None
    RESUME = "resume"      # data: None; Output.resume says how the stop ends
    SHARDING = "sharding"  # data: sharding_layout.ShardingView (str, rich and _repr_html_)
    BREAKPOINTS = "breakpoints"  # data: list[breakpoint_state.BreakpointRow]

    def __str__(self) -> str:
        return self.value


class Resume(str, enum.Enum):
    """How a stop ended."""

    CONTINUE = "continue"
    SKIP = "skip"          # continue, and skip the rest of this vmap batch
    CONTINUE_ALL = "continue all"  # continue past every remaining stop of this breakpoint in this run
    QUIT = "quit"          # stop the computation with DebuggerQuit

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class FrameRow:
    index: int
    function: str
    filename: str
    lineno: int
    line: str
    current: bool


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
    ``resume`` is set when the command ends the stop.
    """

    kind: OutputKind
    text: str
    data: Any = None
    resume: Resume | None = None
    truncated: bool = False

    @property
    def is_error(self) -> bool:
        return self.kind is OutputKind.ERROR
