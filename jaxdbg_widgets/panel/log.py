"""One entry of the panel's live log: a command and what it printed, cut for display."""

from __future__ import annotations

from typing import Any

from jaxdbg.engine.outputs import Output
from jaxdbg.runtime import phrases
from jaxdbg_widgets.panel import state as model


class LogEntry:
    """One command and what it printed, cut for display (full text kept for "more")."""

    def __init__(
        self,
        number: int,
        command: str,
        text: str,
        *,
        error: bool = False,
        pretty: bool = False,
        typed: bool = False,
        html: str = "",
    ) -> None:
        self.number = number
        self.command, self.command_cut = model.clip(command, model.COMMAND_CHARS)
        self.full_text = text
        # A result the browser draws as HTML (a sharding layout), made by jaxdbg's own
        # renderers with every user string escaped; ``text`` stays for the summary.
        self.html = html
        self.error = error
        self.pretty = pretty
        self.typed = typed
        self.expanded = False

    def echo(self) -> str:
        """The command as the summary shows it: ``pp`` when pretty-printing was on, and
        how much of a long line was left out."""
        cut = f" ... [{phrases.more_characters(self.command_cut)}]" if self.command_cut else ""
        return ("pp " if self.pretty else "") + self.command + cut

    def state(self) -> dict:
        if self.html:
            text, cut = "", 0
        elif self.expanded:
            text, cut = self.full_text, 0
        else:
            text, cut = model.clip(self.full_text, model.LOG_CHARS)
        return {
            "n": self.number,
            "command": self.command,
            "command_cut": self.command_cut,
            "text": text,
            "cut": cut,
            "error": self.error,
            "pretty": self.pretty,
            "typed": self.typed,
            "html": self.html,
        }


def html_of(output: Output) -> str:
    """The HTML the panel draws for a result, or "" to draw its text: a sharding
    layout is a grid (its text form is box drawing, which a browser font breaks), a
    pytree watch's leaves (``watch N leaves``) a plot per leaf."""
    drawn: Any = next((d for d in (output.sharding, output.pictures, output.leaf_norms) if d is not None), None)
    if drawn is None or output.printed:
        return ""
    try:
        return drawn._repr_html_()
    except Exception:  # the text is still there
        return ""
