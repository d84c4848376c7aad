"""The SIGINT handler an ipykernel kernel keeps between cells.

ipykernel ignores SIGINT while it is idle (``signal.SIG_IGN``, set at start) and, for
each shell request, saves the handler in place, puts Python's default one in, and
puts the saved one back afterwards (``Kernel.saved_sigint_handler``, in ipykernel 6
and 7 alike). An ignored signal reaches nothing: not a Python handler, not the wakeup
fd that lets a thread hear it. A debug host that serves another process's stop while
its kernel is idle must hear the kernel's interrupt (the notebook's stop button), so
it swaps the saved handler for one that hears it and, like SIG_IGN, never raises.
"""

from __future__ import annotations

import signal
from typing import Any, Callable

__all__ = ["hear_interrupts_between_cells", "between_cells_handler"]

_SAVED = "saved_sigint_handler"


def between_cells_handler(kernel: Any) -> Any:
    """The handler the kernel puts back after the current request (None when unknown)."""
    return getattr(kernel, _SAVED, None)


def hear_interrupts_between_cells(kernel: Any, handler: Callable[[int, Any], None]) -> bool:
    """From a cell: after it (and every later request), SIGINT calls ``handler``
    instead of being ignored. Only a kernel that ignores SIGINT between cells is
    changed (a handler someone else put there stays). Whether ``handler`` is in place."""
    current = between_cells_handler(kernel)
    if current is handler:
        return True
    if current is not signal.SIG_IGN:
        return False
    setattr(kernel, _SAVED, handler)
    return True
