"""Which debugger backend serves a stop.

A debugger is a callable ``debugger(session, **backend_options)`` that returns
when the user continues (or quits; the session records which). Selection:
an explicit name, then ``$JAXDBG_BACKEND``, then the highest-priority backend
that says it can run here.

A backend declares the keyword options it accepts (``options=``), so that a
misspelt option fails when the breakpoint is traced, with the list of valid
ones, rather than being ignored. Options mean the same in every backend:
``context`` is the number of source lines shown either side of the current line.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import threading
from typing import Any, Callable, Iterable

from jaxdbg import config

ENV_VAR = config.BACKEND.name


# ``debugger(session, **backend_options)``: each backend names its own keyword options,
# so no one signature fits them all.
Debugger = Callable[..., None]


@dataclasses.dataclass(frozen=True)
class _Entry:
    name: str
    debugger: Debugger
    priority: int
    is_available: Callable[[], bool]
    options: frozenset[str] | None  # keyword options it accepts; None: any
    prepare: Callable[[], Any] | None


# The breakpoint's own keywords, named in the error for an unknown option.
BREAKPOINT_OPTIONS = ("backend", "filter_frames", "num_frames", "ordered", "token", "commands", "processes")


def _declared_options(debugger: Debugger) -> frozenset[str] | None:
    """Keyword options from the callable's signature; None if it takes ``**kwargs``."""
    try:
        params = list(inspect.signature(debugger).parameters.values())[1:]  # after the session
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


_registry: dict[str, _Entry] = {}
_lock = threading.Lock()


def register_debugger(
    name: str,
    debugger: Debugger,
    priority: int,
    available: Callable[[], bool] | None = None,
    *,
    options: Iterable[str] | None = None,
    replace: bool = False,
    prepare: Callable[[], Any] | None = None,
) -> None:
    """Add a backend.

    ``available`` says whether it can run in this process. ``options`` names the
    keyword options ``debugger`` accepts (default: read from its signature; a
    ``**kwargs`` parameter accepts any). An existing name raises ValueError
    unless ``replace=True``. ``prepare`` (idempotent) runs whenever a breakpoint
    that this backend will serve is traced, on the tracing thread (usually the
    main thread, where e.g. signal handlers can be set up); nothing runs at import.
    """
    if not callable(debugger):
        raise TypeError(f"debugger {name!r} must be callable, got {type(debugger).__name__}")
    accepted = frozenset(options) if options is not None else _declared_options(debugger)
    with _lock:
        if name in _registry and not replace:
            raise ValueError(
                f"a jaxdbg debugger backend named {name!r} is already registered; pass replace=True to replace it"
            )
        _registry[name] = _Entry(name, debugger, int(priority), available or (lambda: True), accepted, prepare)


def unregister_debugger(name: str) -> None:
    """Remove the backend ``name``; a name that is not registered is ignored."""
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
    """Every registered backend, available here or not, preferred first."""
    return [e.name for e in _by_priority()]


def _unknown(name: str, origin: str) -> ValueError:
    known = ", ".join(sorted(_registry)) or "none"
    return ValueError(f"Unknown jaxdbg debugger backend {name!r}{origin}; known backends: {known}")


# Lines said on stderr before a backend is chosen, each when it has something to say.
# jaxdbg.engine.backend_plugins adds the one that names, once per process, the installed
# backends whose import failed (a panel missing a file would otherwise vanish from the
# choice without a word).
_selection_notices: list[Callable[[], str | None]] = []


def add_selection_notice(notice: Callable[[], str | None]) -> None:
    """Call ``notice()`` each time a backend is chosen; a line it returns goes to stderr."""
    if notice not in _selection_notices:
        _selection_notices.append(notice)


def _say_selection_notices() -> None:
    for notice in _selection_notices:
        line = notice()
        if line:
            print(line, file=sys.stderr, flush=True)


def _select(name: str | None) -> _Entry:
    _say_selection_notices()
    origin = ""
    if name is None and config.BACKEND.get():
        name, origin = config.BACKEND.get().strip(), f" (from ${ENV_VAR})"
    if name is not None:
        entry = _registry.get(name)
        if entry is None:
            raise _unknown(name, origin)
        return entry
    for entry in _by_priority():
        if _safe_available(entry):
            return entry
    raise RuntimeError("no jaxdbg debugger backend is available here")


# What answers a stop before its backend: the scripted commands (JAXDBG_COMMANDS,
# commands=). jaxdbg.frontends.scripted hands itself down when imported, since this
# module sits below the frontends.
StopAnswer = Callable[[Any, dict, object], bool]
_answer_first: StopAnswer | None = None
_backend_options: Callable[[dict], dict] = dict


def answer_stops_first(answer: StopAnswer, backend_options: Callable[[dict], dict]) -> None:
    """``answer(session, options, site)`` is offered every stop first (True: it ended the
    stop); ``backend_options(options)`` is what the backend then receives."""
    global _answer_first, _backend_options
    _answer_first, _backend_options = answer, backend_options


def serve_with_backend(session: Any, backend: str | None, options: dict[str, Any], site: object = None) -> None:
    """Serve ``session``: the scripted commands first, then the chosen backend."""
    debugger = get_debugger(backend)
    if _answer_first is not None and _answer_first(session, options, site):
        return
    debugger(session, **_backend_options(options))


def get_debugger(name: str | None = None) -> Debugger:
    """The backend to use: by name, else $JAXDBG_BACKEND, else the best available."""
    return _select(name).debugger


def accepted_options(name: str | None, options: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """At run time, where raising would lose the stop: ``(options the backend takes,
    names it does not)``."""
    entry = _select(name)
    if entry.options is None:
        return dict(options), []
    return (
        {k: v for k, v in options.items() if k in entry.options},
        sorted(k for k in options if k not in entry.options),
    )


def check_options(name: str | None, options: dict[str, Any]) -> None:
    """At trace time, not inside the compiled callback: a misspelt backend name
    raises ValueError, an option the selected backend does not accept TypeError."""
    if name is not None and name not in _registry:
        raise _unknown(name, "")
    try:
        entry = _select(name)
    except RuntimeError:  # nothing can run here now; the stop will say so
        return
    if entry.prepare is not None:
        try:
            entry.prepare()
        except Exception:  # preparing is best effort; the stop still works without it
            pass
    # `commands=` is answered before any backend runs (jaxdbg.frontends.scripted)
    if entry.options is None:  # the backend takes any option
        return
    unknown = sorted(set(options) - entry.options - {"commands"})
    if unknown:
        accepted = ", ".join(sorted(entry.options)) or "none"
        raise TypeError(
            f"jaxdbg breakpoint got unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; the {entry.name!r} backend accepts: {accepted} "
            f"(and every breakpoint takes {', '.join(BREAKPOINT_OPTIONS)})"
        )
