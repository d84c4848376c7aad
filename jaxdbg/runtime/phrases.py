"""The fixed phrases every view shares, written once.

The terminal, the script backend, Colab, the panel (its browser code reads them from
the widget's ``phrases`` trait, :func:`browser_phrases`) and the engine's own plain
text all say these the same way. This module imports nothing, so the engine can use it.
"""

from __future__ import annotations

PROMPT = "(jaxdbg) "
NO_SOURCE = "(source not available)"
NO_LOCALS = "(no locals)"
NO_ARGUMENTS = "(no arguments)"
RECOMPUTED = "recomputed"  # a print log row from the backward pass of jax.checkpoint
#: Source lines shown either side of the current line (the backend option ``context``).
DEFAULT_CONTEXT = 5
#: The panel has room for more: the lines either side of the current one it shows.
PANEL_CONTEXT = 8
#: How a frame of a replay run from the stop is marked (where, headings, the panel).
REPLAY_MARK = "[replay]"
_MORE_CHARACTERS = "{count} more characters"


def count(n: int) -> str:
    """A count as every view writes it: ``1,000``."""
    return f"{n:,}"


def more_characters(hidden: int) -> str:
    """``1,234 more characters``: what a cut text left out."""
    return _MORE_CHARACTERS.format(count=count(hidden))


def no_source(where: str = "") -> str:
    """``(source not available)``, or ``(source not available for In[3]:4)``."""
    return f"{NO_SOURCE[:-1]} for {where})" if where else NO_SOURCE


def echo(command: str) -> str:
    """A command as a log shows it: ``(jaxdbg) p x``."""
    return PROMPT + command


def browser_phrases() -> dict[str, str]:
    """The phrases as the panel's browser code reads them; ``{count}`` is filled there."""
    return {
        "prompt": PROMPT,
        "noSource": NO_SOURCE,
        "noLocals": NO_LOCALS,
        "moreCharacters": _MORE_CHARACTERS,
        "replayMark": REPLAY_MARK,
    }
