"""Backends installed as separate packages, found through the ``jaxdbg.backends``
entry-point group.

An installed ``jaxdbg_widgets`` declares itself there, so a plain ``import jaxdbg``
in a kernel that can show widgets opens the panel, with no ``%load_ext`` and no
``import jaxdbg_widgets``. Loading an entry point imports its module, which calls
:func:`jaxdbg.register_debugger` itself. A broken plugin never breaks the import of
jaxdbg: its failure is kept, said in one line the first time a backend is chosen
(:func:`take_failure_notice`), and listed by ``%jaxdbg`` (:func:`load_failures`).
"""

from __future__ import annotations

import importlib.util
import threading
import types
from importlib import metadata

from jaxdbg.engine import registry
from jaxdbg.internals import ipykernel_kernel
from jaxdbg.runtime import notices

GROUP = "jaxdbg.backends"

# backend name -> why it could not be loaded ("module: Error: message")
_failures: dict[str, str] = {}
_failure_notice_given = False
_notice_lock = threading.Lock()


def _entry_points() -> list[metadata.EntryPoint]:
    try:
        found = metadata.entry_points()
    except Exception:
        return []
    if hasattr(found, "select"):  # Python >= 3.10
        return list(found.select(group=GROUP))
    return list(found.get(GROUP, []))  # pragma: no cover - older importlib.metadata


def _failing_module(exc: BaseException, package: str) -> str:
    """The innermost module of `package` that the import failed in (the package itself
    when the traceback never reaches one of its modules)."""
    failing = package
    tb: types.TracebackType | None = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__", "")
        if name == package or name.startswith(package + "."):
            failing = name
        tb = tb.tb_next
    return failing


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:300]}"


def load_installed_backends() -> list[str]:
    """Import every installed backend plugin; the names of those that loaded."""
    loaded = []
    for entry in _entry_points():
        try:
            entry.load()
        except Exception as exc:
            package = entry.value.split(":")[0].strip()
            _failures[entry.name] = f"{_failing_module(exc, package.split('.')[0])}: {_one_line(exc)}"
            continue
        _failures.pop(entry.name, None)
        loaded.append(entry.name)
    return loaded


def load_failures() -> dict[str, str]:
    """Installed backends that could not be loaded: name -> "module: Error: message"."""
    return dict(_failures)


def take_failure_notice() -> str | None:
    """The one line that says which installed backends failed to load and why, the first
    time it is asked for in this process; None afterwards, or when every one loaded."""
    global _failure_notice_given
    with _notice_lock:
        if _failure_notice_given or not _failures:
            return None
        _failure_notice_given = True
    parts = [f"the {name!r} backend could not be loaded ({why})" for name, why in sorted(_failures.items())]
    return notices.phrase("; ".join(parts))


registry.add_selection_notice(take_failure_notice)


INSTALL_HINT = notices.phrase(
    "for the clickable debugger panel here, install anywidget and "
    "ipywidgets in this kernel's environment (%pip install anywidget "
    "ipywidgets) and restart it."
)
LOAD_HINT = notices.phrase(
    "for the clickable debugger panel here, run %load_ext jaxdbg (it also opens the panel for jax.debug.breakpoint())."
)


def panel_hint() -> str | None:
    """One line for the typed prompt when it serves a stop in a Jupyter kernel only
    because the panel backend is missing there; None otherwise (a terminal, or a kernel
    where the panel is registered and the prompt was chosen on purpose or as a fallback,
    which says why itself)."""
    if "widgets" in registry.registered_debuggers():
        return None
    try:
        in_kernel = ipykernel_kernel.current_kernel() is not None
    except Exception:
        in_kernel = False
    if not in_kernel:
        return None
    installed = all(importlib.util.find_spec(m) is not None for m in ("jaxdbg_widgets", "anywidget", "ipywidgets"))
    return LOAD_HINT if installed else INSTALL_HINT
