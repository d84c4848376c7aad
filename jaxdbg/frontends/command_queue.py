"""The queues of scripted debugger command lines (``JAXDBG_COMMANDS``, ``commands=``).

``JAXDBG_COMMANDS="p x; up; p y; c"`` in the environment, or a breakpoint's
``commands=`` option (a string in the same syntax, or a list of lines), is a queue
of command lines, consumed in order across stops. This module only keeps them;
:mod:`jaxdbg.frontends.scripted` reads them as the first input of a stop.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Iterable

from jaxdbg import config

ENV_VAR = config.COMMANDS.name
OPTION = "commands"

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
    text = config.COMMANDS.get()
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


def next_line(options: dict[str, Any], site: object) -> str | None:
    """Take the next scripted line for this stop: its breakpoint's own queue first."""
    with _lock:
        own = _option_commands(options, site)
        if own:
            return own.popleft()
        env = _env_commands()
        if env:
            return env.popleft()
    return None


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


def configured(options: dict[str, Any]) -> bool:
    """Whether this stop runs under a script (even one that has run out)."""
    return options.get(OPTION) is not None or configured_anywhere()


def configured_anywhere() -> bool:
    return config.COMMANDS.is_set() or bool(_option_queues)
