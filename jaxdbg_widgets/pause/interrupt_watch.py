"""The panel's view of SIGINTs: a stop waiting off the main thread ends when the
count of :mod:`jaxdbg.runtime.sigint_watch` moves, which it does even while the main
thread is inside XLA waiting for that very stop."""

from __future__ import annotations

from typing import Any

from jaxdbg.runtime.sigint_watch import WATCH

__all__ = ["WATCH", "interrupt_count", "listener"]


def listener(on_main: bool) -> Any:
    """Off the main thread, with interrupts counted: a SIGINT ends this wait (which
    watches the count) instead of raising in the main thread (see jaxdbg.runtime.interrupts)."""
    from jaxdbg.runtime import interrupts

    return interrupts.listening(active=not on_main and WATCH.installed)


def interrupt_count() -> int:
    """How many SIGINTs arrived since the watch was installed (for tests and diagnostics)."""
    return WATCH.count
