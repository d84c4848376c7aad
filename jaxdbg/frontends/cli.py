"""The terminal debugger: a ``(jaxdbg)`` prompt over a Session, drawn with rich.

rich is imported on the first terminal stop, not with jaxdbg.

Reads with ``input()`` by default, which also works inside a Jupyter kernel
(over the stdin channel, from any thread). ``stdin=`` / ``stdout=`` file
objects may be passed as backend options for tests and scripting.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import weakref
from typing import IO, TYPE_CHECKING

from jaxdbg.engine.backend_plugins import panel_hint
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import DEFAULT_CONTEXT, Session
from jaxdbg.engine.source_window import window_lines
from jaxdbg.engine.values.tree_summaries import SEPARATOR
from jaxdbg.frontends import driver, terminal_input
from jaxdbg.frontends.terminal_completion import tab_completion
from jaxdbg.runtime import interrupts, notices
from jaxdbg.runtime.phrases import PROMPT

if TYPE_CHECKING:  # rich is imported when a terminal stop is drawn, not with jaxdbg
    from rich.console import Console

OPTIONS = ("stdin", "stdout", "color", "context")  # run_cli's keyword options
# A breakpoint's options are taken once, when its function is traced, so a ``stdin=``
# stream serves every later call too; these streams were read by a stop already.
_READ_STREAMS: "weakref.WeakSet[IO[str]]" = weakref.WeakSet()
USED_UP_NOTICE = (
    "the stdin= stream of this breakpoint is used up: earlier stops read "
    "it (a breakpoint's options are taken once, when the function is traced, so a "
    "scripted stdin is consumed across calls). commands= is the per-breakpoint "
    "queue of scripted commands; end of input quits, as in pdb."
)


def _console(stdout: IO[str] | None, color: bool | None) -> "Console":
    from rich.console import Console

    file = stdout if stdout is not None else sys.stdout
    terminal = color if color is not None else (hasattr(file, "isatty") and file.isatty())
    # force_jupyter=False: in a kernel this view prints text; the widget panel is the rich view.
    return Console(
        file=file,
        force_terminal=terminal,
        no_color=not terminal,
        force_jupyter=False,
        highlight=False,
        soft_wrap=True,
        emoji=False,
        markup=False,
    )


def render(console: "Console", output: Output) -> None:
    """Draw one command's output: the engine's text, decorated on a terminal
    (highlighted source, a locals table, errors in red), never re-worded."""
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

    if not output.text and output.kind is OutputKind.TEXT:
        return
    if not console.is_terminal:
        console.print(output.text, markup=False, highlight=False)
        return
    if output.printed:  # what the command printed comes first, undecorated
        console.print(output.printed, markup=False, highlight=False)
        output = dataclasses.replace(output, text=output.result_text, printed="")
        if not output.text and output.kind is OutputKind.TEXT:
            return
    view = output.source
    if view is not None and view.lines:
        console.print(Text(output.text.splitlines()[0], style="bold"))  # the engine's heading
        lines = window_lines(view)  # numbered and marked as every source view
        console.print(
            Syntax(
                "\n".join(line.code for line in lines),
                "python",
                line_numbers=True,
                start_line=lines[0].number,
                highlight_lines={line.number for line in lines if line.current},
                word_wrap=False,
                theme="ansi_dark",
            )
        )
    elif output.locals:
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for column in ("name", "type", "array", "sharding", "summary"):
            table.add_column(column)
        for row in output.locals:
            summary = Text()
            for text, alarming in row.stat_parts():
                summary.append(text + " ", style="bold red" if alarming else "")
            if row.preview_parts:  # a pytree: its NaN / Inf piece in red, as an array's
                for i, (text, alarming) in enumerate(row.preview_parts):
                    summary.append(SEPARATOR if i else "")
                    summary.append(text, style="bold red" if alarming else "")
            else:
                summary.append(row.preview if row.is_array else row.details())
            table.add_row(row.name, row.type_name, row.array_type, row.sharding or "", summary)
        console.print(table)
    elif output.sharding is not None:
        console.print(output.sharding)  # the layout draws itself in colour
    elif output.pictures is not None:
        console.print(output.pictures)  # block characters in the palette's colours
    elif output.is_error:
        console.print(Text(output.text, style="bold red"))
    else:
        console.print(output.text, markup=False, highlight=False)


def _enable_line_editing() -> None:
    """Arrow keys and history at a real terminal prompt, as in pdb.

    Only where ``input()`` reads the line: a prompt off the main thread reads the
    descriptor itself, and loading readline there would run its set-up (which calls
    setlocale, unsafe while XLA's other threads run) for nothing."""
    if terminal_input.should_read_descriptor():
        return
    if sys.stdin is not None and sys.stdin.isatty():
        try:
            import readline  # noqa: F401  (importing it is what turns editing on)
        except ImportError:
            pass


def _read_line(stdin: IO[str] | None, stdout: IO[str] | None) -> str:
    """One command line; raises EOFError at end of input."""
    if stdin is None:
        if terminal_input.should_read_descriptor():  # Ctrl-C can end it on any thread
            return terminal_input.read_line(PROMPT, stdout)
        # A kernel's input() off the main thread (a pmap stop at `jupyter console`): the
        # interrupt is raised here, where the kernel polls its stdin socket in Python; the
        # main thread may be inside XLA waiting for this very stop.
        with interrupts.running_command():
            return input(PROMPT) if stdout is None else _input_with_prompt(stdout)
    if stdout is not None:
        stdout.write(PROMPT)
        stdout.flush()
    line = stdin.readline()
    if not line:
        raise EOFError
    if stdout is not None and not (hasattr(stdin, "isatty") and stdin.isatty()):
        stdout.write(line if line.endswith("\n") else line + "\n")  # echo scripted input
    return line.rstrip("\n")


def _input_with_prompt(stdout: IO[str]) -> str:
    stdout.write(PROMPT)
    stdout.flush()
    return input()


class Prompt(driver.Frontend):
    """The typed ``(jaxdbg)`` prompt: reads lines from ``stdin`` (or ``input()``), draws
    each result with rich on ``stdout``; a command's prints are shown as they come."""

    def __init__(self, stdin: IO[str] | None, stdout: IO[str] | None, color: bool | None, context: int) -> None:
        self.stdin, self.stdout, self.color, self.context = stdin, stdout, color, context
        self.notice_stream = stdout
        self.console: "Console | None" = None
        self.read_before = False

    def open(self, session: Session) -> None:
        from rich.text import Text

        if self.stdin is None and not driver.interactive_input_available():
            raise driver.NoInput(driver.no_input_reason())
        session.context = self.context
        console = self.console = _console(self.stdout, self.color)
        if self.stdin is None:
            _enable_line_editing()
        console.print(Text(session.banner(), style="bold"))
        hint = panel_hint() if self.stdin is None else None
        if hint:
            console.print(Text(hint, style="dim"))
        render(console, session.source_around())
        # What a command prints is shown as it is written, so it comes before the result,
        # in order, and a long command's progress is seen while it runs.
        session.echo_printed = console.file
        session.on_stuck_command = lambda: notices.notice(interrupts.STUCK_NOTICE, stream=console.file)
        self.read_before = _read_before(self.stdin)

    def read(self, session: Session) -> str:
        try:
            with tab_completion(session) if self.stdin is None else contextlib.nullcontext():
                return _read_line(self.stdin, self.stdout)
        except EOFError:
            raise
        except Exception as exc:
            if not driver.is_stdin_unsupported(exc):
                raise
            raise driver.NoInput(driver.no_input_reason()) from exc

    def show(self, session: Session, line: str, output: Output) -> None:
        assert self.console is not None
        render(self.console, _result_only(output))

    def end_of_input(self, session: Session) -> str:
        assert self.console is not None
        self.console.print("")
        if self.read_before:
            notices.notice(USED_UP_NOTICE, stream=self.console.file)
        return "quit"  # as in pdb: end of input quits


def run_cli(
    session: Session,
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    color: bool | None = None,
    context: int = DEFAULT_CONTEXT,
) -> None:
    """Serve one stop at the terminal until the user continues, skips or quits.

    Options: ``stdin`` / ``stdout`` file objects (scripting, tests), ``color``
    (default: when stdout is a terminal), ``context`` (source lines either side
    of the current line). With nothing to read from (a notebook client without
    stdin, a closed stdin) the stop continues with one line instead.
    """
    driver.drive(session, Prompt(stdin, stdout, color, context))


def _result_only(output: Output) -> Output:
    """The command's result without what it printed, which was shown as it came."""
    if not output.printed:
        return output
    return dataclasses.replace(output, text=output.result_text, printed="")


def _read_before(stdin: IO[str] | None) -> bool:
    """Whether an earlier stop read this ``stdin=`` stream (and note that this one does)."""
    if stdin is None:
        return False
    try:
        before = stdin in _READ_STREAMS
        _READ_STREAMS.add(stdin)
    except TypeError:  # a stream that takes no weak reference: nothing to say
        return False
    return before


def available() -> bool:
    return True
