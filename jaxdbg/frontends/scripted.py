"""Scripted sessions: debugger commands that answer stops without a person.

The queued command lines (``JAXDBG_COMMANDS``, a breakpoint's ``commands=``; kept by
:mod:`jaxdbg.frontends.command_queue`) are the first input source of every stop: the
driver reads them before the stop's own frontend is asked (as pdb runs ``.pdbrc``
lines first). Each stop takes lines from the front until one of them ends the stop,
so the queue is consumed in order across stops. The commands and their results are
echoed into the output, which makes a scripted run read like the typed session it
replaces (a bug report, a notebook run in CI).

When the queue runs out in the middle of a stop, the stop goes to the interactive
backend, unless nothing can answer it (no stdin: a notebook client such as
nbclient or papermill, CI, a closed stdin); then it continues with a one-line
notice, so the computation goes on instead of failing or hanging.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from jaxdbg.engine import registry
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.frontends import command_queue, driver
from jaxdbg.frontends.command_queue import (  # the scripted-commands API, at one import
    ENV_VAR,
    OPTION,
    backend_options,
    configured,
    reset,
    split_commands,
)
from jaxdbg.runtime.phrases import PROMPT

__all__ = ["ENV_VAR", "OPTION", "answer", "backend_options", "configured", "handled", "reset", "split_commands"]


def _echo(out: IO[str], text: str) -> None:
    if text:
        out.write(text if text.endswith("\n") else text + "\n")


def _output_stream(options: dict[str, Any]) -> IO[str]:
    return options.get("stdout") or sys.stdout


class ScriptedLines(driver.Frontend):
    """The queue as an input source: each line and its output echoed as plain text.

    Its input ending leaves the stop open for the stop's own frontend."""

    def __init__(self, first_line: str, options: dict[str, Any], site: object) -> None:
        self.pending: str | None = first_line
        self.options, self.site = options, site
        self.out = _output_stream(options)

    def open(self, session: Session) -> None:
        _echo(self.out, session.banner())

    def read(self, session: Session) -> str:
        line, self.pending = self.pending, None
        if line is None:
            line = command_queue.next_line(self.options, self.site)
        if line is None:
            raise EOFError
        _echo(self.out, PROMPT + line)
        return line

    def show(self, session: Session, line: str, output: Output) -> None:
        if output.text or output.kind is not OutputKind.TEXT:
            _echo(self.out, output.text)
        try:
            self.out.flush()
        except Exception:
            pass

    def end_of_input(self, session: Session) -> None:
        return None  # the stop's own frontend takes it from here


def answer(session: Session, options: dict[str, Any], site: object = None) -> bool:
    """Run queued lines against ``session`` until it ends or the queue runs out.

    Echoes the banner, each line after the prompt, and its output. Returns True when
    the stop has ended, False when a person (or the no-input fallback) must take it
    from here. Does nothing when no line is queued.
    """
    first = command_queue.next_line(options, site)
    if first is None:
        return False
    driver.drive(session, ScriptedLines(first, options, site))
    return session.finished


def handled(session: Session, options: dict[str, Any], site: object = None) -> bool:
    """Serve the stop from the script if there is one; False leaves it to the backend.

    A scripted stop whose commands ran out continues with a notice when nobody can
    answer a prompt, instead of opening a panel or prompt that would wait forever.
    """
    if answer(session, options, site):
        return True
    if not configured(options):
        return False
    if not driver.interactive_input_available(options):
        driver.continue_without_input(session, driver.no_input_reason(), _output_stream(options))
        return True
    if driver.ci_without_terminal(options):
        driver.continue_without_input(
            session, "nothing can answer a prompt (CI without a terminal)", _output_stream(options)
        )
        return True
    return False


# Every stop is offered to the scripted commands before its backend.
registry.answer_stops_first(handled, backend_options)
