"""Tab completion at a real terminal's ``(jaxdbg)`` prompt, through readline.

The completer is installed for the time of one prompt and the previous one
(with its word delimiters) is put back afterwards, as pdb does, so a Python
REPL or IPython around the debugger keeps its own completion.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from jaxdbg.engine.session import Session
from jaxdbg.frontends import terminal_input

# Python's usual delimiters: "." is not one, so "x.sha" is completed as a whole.
DELIMITERS = " \t\n`~!@#$%^&*()-=+[{]}\\|;:'\",<>/?"


def _readline() -> Any:
    """The readline module when input() reads from a terminal through it, else None
    (a prompt that reads the descriptor itself, e.g. off the main thread, does not)."""
    if sys.stdin is None or not sys.stdin.isatty() or terminal_input.should_read_descriptor():
        return None
    try:
        import readline
    except ImportError:
        return None
    return readline


class ReadlineCompleter:
    """readline's ``completer(text, state)`` over :meth:`Session.complete`."""

    def __init__(self, session: Session, readline: Any) -> None:
        self._session = session
        self._readline = readline
        self._matches: list[str] = []

    def __call__(self, text: str, state: int) -> str | None:
        if state == 0:
            line = self._readline.get_line_buffer()
            begin, end = self._readline.get_begidx(), self._readline.get_endidx()
            typed = line[:end]
            # Session.complete returns whole lines; readline replaces only the word.
            matches = [c[begin:] for c in self._session.complete(typed) if c.startswith(typed[:begin])]
            quote = typed[begin - 1 : begin]
            if quote in ("'", '"'):
                # Inside an open string readline closes the quote itself on a unique
                # match: leave it (and the bracket after it) out of a dict key.
                matches = [m[:-2] if m.endswith(quote + "]") else m for m in matches]
            self._matches = matches
        return self._matches[state] if state < len(self._matches) else None


@contextlib.contextmanager
def tab_completion(session: Session) -> Iterator[None]:
    """Complete names of the session's selected frame while reading one line."""
    readline = _readline()
    if readline is None:
        yield
        return
    old_completer, old_delimiters = readline.get_completer(), readline.get_completer_delims()
    readline.set_completer(ReadlineCompleter(session, readline))
    readline.set_completer_delims(DELIMITERS)
    if "libedit" in (readline.__doc__ or ""):  # macOS's readline stand-in
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    try:
        yield
    finally:
        readline.set_completer(old_completer)
        readline.set_completer_delims(old_delimiters)
