"""The terminal's readline completer offers what Session.complete offers, word by word."""

from __future__ import annotations

import sys

import jaxdbg
from jaxdbg.engine.frames import live_frame
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.frontends.terminal_completion import DELIMITERS, ReadlineCompleter


class FakeReadline:
    """The three calls the completer makes, for a line typed up to its end."""

    def __init__(self, line: str) -> None:
        self.line = line

    def get_line_buffer(self) -> str:
        return self.line

    def get_begidx(self) -> int:
        return max(self.line.rfind(c) for c in DELIMITERS) + 1

    def get_endidx(self) -> int:
        return len(self.line)


def _matches(session: jaxdbg.Session, line: str) -> list[str]:
    completer = ReadlineCompleter(session, FakeReadline(line))
    found, state = [], 0
    while (match := completer(line, state)) is not None:
        found.append(match)
        state += 1
    return found


def test_readline_gets_the_sessions_completions_of_the_last_word():
    here = sys._getframe()
    terminal_value = 1  # noqa: F841 (a name to complete)
    session = jaxdbg.Session([live_frame(here), live_frame(here.f_back)], StopInfo())
    assert _matches(session, "p terminal_v") == ["terminal_value"]
    assert _matches(session, "frame ") == ["0", "1"]  # the argument kind of 'frame'
    assert _matches(session, "continue a") == ["all"]
    assert _matches(session, "help wher") == ["where"]
    assert _matches(session, "where ") == []
