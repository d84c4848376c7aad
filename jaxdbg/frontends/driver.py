"""One loop for every frontend: wait for a command, run it on the Session, redraw,
finish, fall back.

As ``cmd.Cmd.cmdloop`` owns pdb's loop and ``bdb`` its engine, :func:`drive` owns the
loop of every jaxdbg frontend and the :class:`~jaxdbg.engine.session.Session` is the
engine; a frontend (:class:`Frontend`) only says what differs: how it waits for input,
how it draws an Output and the stop, how it closes. The scripted commands are one
such input source, read before the stop's own frontend (as pdb runs ``.pdbrc`` lines
before it asks), by :mod:`jaxdbg.frontends.scripted`.

The fallbacks live here once:

- nothing can answer a prompt (a notebook client without stdin, a closed stdin, CI):
  the stop continues with one notice (:func:`continue_without_input`);
- end of input: the frontend's end-of-input line runs (``quit``, as in pdb), or, for a
  source that only goes first, the stop is left to the next one;
- a frontend that cannot go on (the panel closed, its clicks no longer arriving) hands
  the stop to the typed prompt (:func:`fall_back`).
"""

from __future__ import annotations

import sys
from typing import IO, Any, Callable

from jaxdbg import config
from jaxdbg.engine.outputs import Output
from jaxdbg.engine.session import Session
from jaxdbg.frontends import command_queue
from jaxdbg.internals import ipykernel_kernel, ipykernel_parents
from jaxdbg.runtime import notices


class NoInput(Exception):
    """Raised by a frontend when nothing can answer its prompt; the stop continues."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FallBack(Exception):
    """Raised by a frontend that cannot serve the stop any longer; the prompt takes it.

    ``line``, when given, is the notice said before the prompt instead of the usual one."""

    def __init__(self, why: str, line: str | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.line = line


class Frontend:
    """What one frontend does differently; :func:`drive` does the rest.

    ``read`` is the only method a frontend must write. A command it returns is a line
    (run on the session, then drawn by ``show``) or an object of the frontend's own (a
    panel message, given back to ``handle``).
    """

    #: Where notices go while this frontend serves a stop (None: the default sink).
    notice_stream: IO[str] | None = None

    def open(self, session: Session) -> None:
        """Draw the stop. May raise NoInput or FallBack before anything is drawn."""

    def read(self, session: Session) -> Any:
        """Wait for the next command; None when none came yet (the driver checks whether
        the stop ended meanwhile and asks again). Raises EOFError at end of input,
        NoInput when nothing can answer, FallBack when this frontend cannot go on."""
        raise NotImplementedError

    def show(self, session: Session, line: str, output: Output) -> None:
        """Draw what a command line produced."""

    def handle(self, session: Session, command: Any) -> None:
        """Run a command of the frontend's own (not a line) and draw its result."""
        raise TypeError(f"{type(self).__name__} returned a command it does not handle: {command!r}")

    def end_of_input(self, session: Session) -> str | None:
        """The line to run when input ends (pdb quits); None leaves the stop open."""
        return "quit"

    def close(self, session: Session, fell_back: str | None = None) -> None:
        """The stop has ended (or, with ``fell_back``, is handed to the prompt for that
        reason): draw its final state. Called once after a successful ``open``."""


def drive(
    session: Session,
    frontend: Frontend,
    *,
    fallback: Callable[[Session], None] | None = None,
    options: dict[str, Any] | None = None,
) -> None:
    """Serve ``session`` with ``frontend`` until the stop ends or its input does.

    ``fallback`` serves the stop when the frontend raises FallBack (the typed prompt);
    ``options`` are the stop's options, which say whether a prompt can be answered.
    KeyboardInterrupt propagates, after the session is marked interrupted and the
    frontend closed.
    """
    with notices.sink(frontend.notice_stream):
        try:
            _serve(session, frontend)
        except NoInput as no_input:
            continue_without_input(session, no_input.reason, frontend.notice_stream)
        except FallBack as fall:
            if fallback is None:
                raise
            fall_back(session, fall.why, fallback, options, line=fall.line)


def _serve(session: Session, frontend: Frontend) -> None:
    frontend.open(session)  # a NoInput or FallBack here leaves nothing to close
    fell_back: str | None = None
    try:
        while not session.finished:
            try:
                command = frontend.read(session)
            except NoInput as no_input:  # the stop continues before the view's last draw
                continue_without_input(session, no_input.reason, frontend.notice_stream)
                return
            except EOFError:
                line = frontend.end_of_input(session)
                if line is not None:
                    frontend.show(session, line, session.execute(line))
                return
            if command is None:
                continue
            if isinstance(command, str):
                frontend.show(session, command, session.execute(command))
            else:
                frontend.handle(session, command)
    except KeyboardInterrupt:
        session.mark_interrupted()  # the summary's outcome says "Interrupted."
        raise
    except FallBack as fall:
        fell_back = fall.why
        raise
    finally:
        frontend.close(session, fell_back)


def fall_back(
    session: Session,
    why: str,
    prompt: Callable[[Session], None],
    options: dict[str, Any] | None = None,
    *,
    line: str | None = None,
) -> None:
    """Hand the stop to ``prompt`` saying why (or ``line``; an empty ``line`` says
    nothing), or continue it when nobody could type."""
    if not interactive_input_available(options):  # nbclient, papermill, Voila
        continue_without_input(session, f"{why}, and {no_input_reason()}")
        return
    if line is None:
        line = f"{why}; type debugger commands at the prompt below instead (help lists them)."
    if line:
        notices.notice(line)
    prompt(session)


# -- nothing can answer a prompt ------------------------------------------------------

NO_INPUT_NOTICE = "continuing past {where}: {why}; {hint}."


def interactive_input_available(options: dict[str, Any] | None = None) -> bool:
    """Whether a person can answer a typed prompt for this stop.

    No when the notebook client that ran this cell offers no stdin (nbclient,
    papermill, Voila send ``allow_stdin: false``) and when stdin is missing or
    closed. A ``stdin=`` backend option always counts as input.
    """
    if options and options.get("stdin") is not None:
        return True

    kernel = ipykernel_kernel.current_kernel()
    if kernel is not None:
        try:
            parent = ipykernel_parents.cell_parent(kernel)[1]
        except Exception:
            parent = None
        content = (parent or {}).get("content") or {}
        return bool(content.get("allow_stdin", True))
    stdin = sys.stdin
    return stdin is not None and not getattr(stdin, "closed", False)


def no_input_reason() -> str:

    if ipykernel_kernel.current_kernel() is not None:
        return "nothing can answer a prompt (the notebook client offers no stdin)"
    return "nothing can answer a prompt (stdin is closed)"


def ci_without_terminal(options: dict[str, Any]) -> bool:
    """Under CI (``$CI``) a script whose commands ran out has nobody to ask."""
    if options.get("stdin") is not None or not config.CI.get():
        return False
    try:
        return not sys.stdin.isatty()
    except Exception:
        return True


def continue_without_input(session: Session, why: str, out: IO[str] | None = None) -> None:
    """End the stop as a continue, with one notice saying so."""
    where = session.frames[0].location if session.frames else "the breakpoint"
    details = session.info.details() if session.info else ""
    if details:
        where = f"{where} ({details})"
    hint = (
        "the scripted commands ran out"
        if command_queue.configured_anywhere()
        else f"set {command_queue.ENV_VAR} to answer stops without a prompt"
    )
    notices.notice(NO_INPUT_NOTICE.format(why=why, where=where, hint=hint), stream=out)
    session.execute("continue")


def is_stdin_unsupported(exc: BaseException) -> bool:
    """IPython's error for ``input()`` in a kernel whose client has no stdin."""
    unsupported = getattr(sys.modules.get("IPython.core.error"), "StdinNotImplementedError", None)
    return unsupported is not None and isinstance(exc, unsupported)
