"""What only the kernel's main thread can start, before a stop happens off it: the
interrupt watch and cell tracking (the extension and the panel's backend call
:func:`install`; a PauseChannel created on the main thread does too)."""

from __future__ import annotations

from jaxdbg_widgets.pause import cells
from jaxdbg_widgets.pause.interrupt_watch import WATCH

__all__ = ["install", "installed", "uninstall"]


def install() -> bool:
    """Prepare from the kernel's main thread (the extension calls this on load).

    Starts the interrupt watch and the per-cell parent tracking; both need the main
    thread. A PauseChannel created on the main thread does this itself. Without it,
    a breakpoint on an XLA thread cannot be interrupted and, after a click, may print
    into the wrong cell. Returns whether the interrupt watch is active.
    """
    cells.track()
    return WATCH.install()


def uninstall() -> None:
    """Undo :func:`install` from the main thread (``%unload_ext jaxdbg``)."""
    cells.untrack()
    WATCH.uninstall()


def installed() -> bool:
    return WATCH.installed
