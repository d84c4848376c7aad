"""Scripted sessions: debugger commands that answer stops without a person.

``JAXDBG_COMMANDS="p x; up; p y; c"`` in the environment, or a breakpoint's
``commands=`` option (a string in the same syntax, or a list of lines), is a queue
of command lines. Each stop takes lines from the front until one of them ends the
stop, so the queue is consumed in order across stops. The commands and their
results are echoed into the output, which makes a scripted run read like the
typed session it replaces (a bug report, a notebook run in CI).

When the queue runs out in the middle of a stop, the stop goes to the interactive
backend, unless nothing can answer it (no stdin: a notebook client such as
nbclient or papermill, CI, a closed stdin); then it continues with a one-line
notice, so the computation goes on instead of failing or hanging.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import IO, Any, Iterable

from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.views import phrases

ENV_VAR = "JAXDBG_COMMANDS"
OPTION = "commands"
PROMPT = phrases.PROMPT

_lock = threading.Lock()
_env_text: str | None = None  # the value the env queue was parsed from
_env_queue: collections.deque[str] = collections.deque()
_option_queues: dict[Any, tuple[object, collections.deque[str]]] = {}


def split_commands(text: str) -> list[str]:
    """Split ``"p x; up; p y; c"`` into lines at ``;`` and newlines.

    A ``;`` inside quotes or brackets belongs to the expression (``p "a;b"``).
    """
    lines: list[str] = []
    current: list[str] = []
    quote = ""
    depth = 0
    escaped = False
    for ch in text:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ";\n" and depth == 0:
            lines.append("".join(current))
            current = []
            continue
        current.append(ch)
    lines.append("".join(current))
    return [line.strip() for line in lines if line.strip()]


def _as_lines(commands: str | Iterable[str]) -> list[str]:
    if isinstance(commands, str):
        return split_commands(commands)
    return [str(line).strip() for line in commands if str(line).strip()]


def _env_commands() -> collections.deque[str]:
    """The process-wide queue; parsed again when the variable's value changes."""
    global _env_text
    text = os.environ.get(ENV_VAR, "")
    if text != _env_text:
        _env_text = text
        _env_queue.clear()
        _env_queue.extend(split_commands(text))
    return _env_queue


def _option_commands(options: dict[str, Any], site: object) -> collections.deque[str] | None:
    """The queue of a breakpoint's ``commands=`` option, shared by all its stops."""
    commands = options.get(OPTION)
    if commands is None:
        return None
    # Sites are compared by identity (they need not be hashable); the entry keeps
    # its site alive so that the id is not reused.
    key = id(site) if site is not None else repr(commands)
    entry = _option_queues.get(key)
    if entry is None:
        entry = _option_queues[key] = (site, collections.deque(_as_lines(commands)))
    return entry[1]


def _next_line(options: dict[str, Any], site: object) -> str | None:
    with _lock:
        own = _option_commands(options, site)
        if own:
            return own.popleft()
        env = _env_commands()
        if env:
            return env.popleft()
    return None


def has_commands(options: dict[str, Any], site: object = None) -> bool:
    """Whether a scripted line is waiting for this stop."""
    with _lock:
        own = _option_commands(options, site)
        return bool(own) or bool(_env_commands())


def reset() -> None:
    """Forget every queue (the environment variable is read again at the next stop)."""
    global _env_text
    with _lock:
        _env_text = None
        _env_queue.clear()
        _option_queues.clear()


def backend_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without the ones this module consumes (backends do not take them)."""
    return {k: v for k, v in options.items() if k != OPTION}


def _echo(out: IO[str], text: str) -> None:
    if text:
        out.write(text if text.endswith("\n") else text + "\n")


def _output_stream(options: dict[str, Any]) -> IO[str]:
    return options.get("stdout") or sys.stdout


def answer(session: Session, options: dict[str, Any], site: object = None) -> bool:
    """Run queued lines against ``session`` until it ends or the queue runs out.

    Echoes the banner, each line after the prompt, and its output. Returns True when
    the stop has ended, False when a person (or :func:`continue_without_input`) must
    take it from here. Does nothing when no line is queued.
    """
    line = _next_line(options, site)
    if line is None:
        return False
    out = _output_stream(options)
    _echo(out, session.banner())
    while line is not None:
        _echo(out, PROMPT + line)
        output: Output = session.execute(line)
        if output.text or output.kind is not OutputKind.TEXT:
            _echo(out, output.text)
        try:
            out.flush()
        except Exception:
            pass
        if session.finished:
            return True
        line = _next_line(options, site)
    return False


def interactive_input_available(options: dict[str, Any] | None = None) -> bool:
    """Whether a person can answer a typed prompt for this stop.

    No when the notebook client that ran this cell offers no stdin (nbclient,
    papermill, Voila send ``allow_stdin: false``) and when stdin is missing or
    closed. A ``stdin=`` backend option always counts as input.
    """
    if options and options.get("stdin") is not None:
        return True
    from jaxdbg.internals import ipykernel_api as api

    kernel = api.current_kernel()
    if kernel is not None:
        try:
            parent = api.cell_parent(kernel)[1]
        except Exception:
            parent = None
        content = (parent or {}).get("content") or {}
        return bool(content.get("allow_stdin", True))
    stdin = sys.stdin
    return stdin is not None and not getattr(stdin, "closed", False)


def _ci_without_terminal(options: dict[str, Any]) -> bool:
    """Under CI (``$CI``) a script whose commands ran out has nobody to ask."""
    if options.get("stdin") is not None or not os.environ.get("CI"):
        return False
    try:
        return not sys.stdin.isatty()
    except Exception:
        return True


NO_INPUT_NOTICE = "jaxdbg: continuing past {where}: {why}; {hint}."


def continue_without_input(session: Session, why: str, out: IO[str] | None = None) -> None:
    """End the stop as a continue, with one line saying so."""
    where = session.frames[0].location if session.frames else "the breakpoint"
    details = session.info.details() if session.info else ""
    if details:
        where = f"{where} ({details})"
    stream = out or sys.stdout
    hint = ("the scripted commands ran out" if configured_anywhere()
            else f"set {ENV_VAR} to answer stops without a prompt")
    _echo(stream, NO_INPUT_NOTICE.format(why=why, where=where, hint=hint))
    try:
        stream.flush()
    except Exception:
        pass
    session.execute("continue")


def no_input_reason() -> str:
    from jaxdbg.internals import ipykernel_api as api

    if api.current_kernel() is not None:
        return "nothing can answer a prompt (the notebook client offers no stdin)"
    return "nothing can answer a prompt (stdin is closed)"


def configured(options: dict[str, Any]) -> bool:
    """Whether this stop runs under a script (even one that has run out)."""
    return options.get(OPTION) is not None or configured_anywhere()


def configured_anywhere() -> bool:
    return bool(os.environ.get(ENV_VAR, "").strip()) or bool(_option_queues)


def handled(session: Session, options: dict[str, Any], site: object = None) -> bool:
    """Serve the stop from the script if there is one; False leaves it to the backend.

    A scripted stop whose commands ran out continues with a notice when nobody can
    answer a prompt, instead of opening a panel or prompt that would wait forever.
    """
    if answer(session, options, site):
        return True
    if not configured(options):
        return False
    if not interactive_input_available(options):
        continue_without_input(session, no_input_reason(), _output_stream(options))
        return True
    if _ci_without_terminal(options):
        continue_without_input(session, "nothing can answer a prompt (CI without a terminal)",
                               _output_stream(options))
        return True
    return False
