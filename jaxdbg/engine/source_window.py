"""The source window as data: numbered lines with the current one marked.

Every source view draws these lines: the engine's plain text (``list``), the terminal
(rich), the notebook HTML (:func:`jaxdbg.views.theme.highlighted_lines`) and Colab. So
the numbers, their width and the marked line come out the same everywhere.
"""

from __future__ import annotations

import dataclasses

from jaxdbg.engine.outputs import SourceView
from jaxdbg.runtime import phrases


@dataclasses.dataclass(frozen=True)
class NumberedLine:
    number: int
    number_text: str  # the number right-aligned to the widest number of the window
    code: str
    current: bool

    @property
    def plain(self) -> str:
        """The line as plain text shows it: `` 12 -> code``."""
        return f"{self.number_text} {'->' if self.current else '  '} {self.code}"


def numbered_lines(lines: list[str], first_lineno: int, current_lineno: int | None) -> list[NumberedLine]:
    """``lines`` numbered from ``first_lineno``, the one at ``current_lineno`` marked."""
    width = len(str(first_lineno + len(lines) - 1))
    return [
        NumberedLine(n, str(n).rjust(width), code, n == current_lineno)
        for n, code in enumerate(lines, start=first_lineno)
    ]


def window_lines(view: SourceView) -> list[NumberedLine]:
    """A source window's lines, numbered and marked."""
    return numbered_lines(view.lines, view.first_lineno, view.current_lineno)


def plain_text(view: SourceView, heading: str) -> str:
    """The heading, then the numbered lines (or that there is no source)."""
    if not view.lines:
        return f"{heading}\n{phrases.NO_SOURCE}"
    return heading + "\n" + "\n".join(line.plain for line in window_lines(view))
