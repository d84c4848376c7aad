"""Which debugger backend serves a stop.

A debugger is a callable ``debugger(session, **backend_options)`` that returns
when the user continues (or quits; the session records which). Selection:
an explicit name, then ``$JAXDBG_BACKEND``, then the highest-priority backend
that says it can run here.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Any, Callable, Protocol

from jaxdbg.session import Session

ENV_VAR = "JAXDBG_BACKEND"


class Debugger(Protocol):
    def __call__(self, session: Session, **backend_options: Any) -> None: ...


@dataclasses.dataclass(frozen=True)
class _Entry:
    name: str
    debugger: Debugger
    priority: int
    is_available: Callable[[], bool]


_registry: dict[str, _Entry] = {}
_lock = threading.Lock()


def register_debugger(name: str, debugger: Debugger, priority: int,
                      available: Callable[[], bool] | None = None) -> None:
    """Add (or replace) a backend. ``available`` says whether it can run in this process."""
    if not callable(debugger):
        raise TypeError(f"debugger {name!r} must be callable, got {type(debugger).__name__}")
    with _lock:
        _registry[name] = _Entry(name, debugger, int(priority), available or (lambda: True))


def unregister_debugger(name: str) -> None:
    with _lock:
        _registry.pop(name, None)


def _by_priority() -> list[_Entry]:
    with _lock:
        return sorted(_registry.values(), key=lambda e: -e.priority)


def _safe_available(entry: _Entry) -> bool:
    try:
        return bool(entry.is_available())
    except Exception:
        return False


def available_debuggers() -> list[str]:
    """Names of the backends that can run here, preferred first."""
    return [e.name for e in _by_priority() if _safe_available(e)]


def registered_debuggers() -> list[str]:
    return [e.name for e in _by_priority()]


def _unknown(name: str, origin: str) -> ValueError:
    known = ", ".join(sorted(_registry)) or "none"
    return ValueError(f"Unknown jaxdbg debugger backend {name!r}{origin}; known backends: {known}")


def get_debugger(name: str | None = None) -> Debugger:
    """The backend to use: by name, else $JAXDBG_BACKEND, else the best available."""
    origin = ""
    if name is None and os.environ.get(ENV_VAR):
        name, origin = os.environ[ENV_VAR].strip(), f" (from ${ENV_VAR})"
    if name is not None:
        entry = _registry.get(name)
        if entry is None:
            raise _unknown(name, origin)
        return entry.debugger
    for entry in _by_priority():
        if _safe_available(entry):
            return entry.debugger
    raise RuntimeError("no jaxdbg debugger backend is available here")


def check_backend_name(name: str | None) -> None:
    """Fail at trace time, not inside the compiled callback, for a misspelt backend."""
    if name is not None and name not in _registry:
        raise _unknown(name, "")
