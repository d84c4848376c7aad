"""Backends installed as separate packages, found through the ``jaxdbg.backends``
entry-point group.

An installed ``jaxdbg_widgets`` declares itself there, so a plain ``import jaxdbg``
in a kernel that can show widgets opens the panel, with no ``%load_ext`` and no
``import jaxdbg_widgets``. Loading an entry point imports its module, which calls
:func:`jaxdbg.register_debugger` itself. A broken plugin costs a warning, never
the import of jaxdbg.
"""

from __future__ import annotations

import warnings
from importlib import metadata

GROUP = "jaxdbg.backends"


def _entry_points() -> list[metadata.EntryPoint]:
    try:
        found = metadata.entry_points()
    except Exception:
        return []
    if hasattr(found, "select"):  # Python >= 3.10
        return list(found.select(group=GROUP))
    return list(found.get(GROUP, []))  # pragma: no cover - older importlib.metadata


def load_installed_backends() -> list[str]:
    """Import every installed backend plugin; the names of those that loaded."""
    loaded = []
    for entry in _entry_points():
        try:
            entry.load()
        except Exception as exc:
            warnings.warn(f"jaxdbg: the {entry.name!r} backend ({entry.value}) could not be "
                          f"loaded: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
            continue
        loaded.append(entry.name)
    return loaded


INSTALL_HINT = ("jaxdbg: for the clickable debugger panel here, install anywidget and ipywidgets in "
                "this kernel's environment (%pip install anywidget ipywidgets) and restart it.")
LOAD_HINT = ("jaxdbg: for the clickable debugger panel here, run %load_ext jaxdbg "
             "(it also opens the panel for jax.debug.breakpoint()).")


def panel_hint() -> str | None:
    """One line for the typed prompt when it serves a stop in a Jupyter kernel only
    because the panel backend is missing there; None otherwise (a terminal, or a kernel
    where the panel is registered and the prompt was chosen on purpose or as a fallback,
    which says why itself)."""
    import importlib.util

    from jaxdbg.registry import registered_debuggers

    if "widgets" in registered_debuggers():
        return None
    try:
        from jaxdbg.internals import ipykernel_api
        in_kernel = ipykernel_api.current_kernel() is not None
    except Exception:
        in_kernel = False
    if not in_kernel:
        return None
    installed = all(importlib.util.find_spec(m) is not None
                    for m in ("jaxdbg_widgets", "anywidget", "ipywidgets"))
    return LOAD_HINT if installed else INSTALL_HINT
