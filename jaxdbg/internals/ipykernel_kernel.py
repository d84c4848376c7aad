"""Which ipykernel kernel is running, which ipykernel version, and the SIGINT handler
the kernel keeps between cells.

Never imports IPython or ipykernel itself: outside a kernel they need not be loaded.

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
import sys
from typing import Any, Callable

__all__ = ["current_kernel", "kernel_version", "hear_interrupts_between_cells", "between_cells_handler"]


def current_kernel() -> Any | None:
    """The running ipykernel kernel object, or None outside a kernel.

    Never imports IPython or ipykernel itself: if they are not loaded we cannot be in
    a kernel, and importing them would be slow and pointless.
    """
    if "ipykernel" not in sys.modules:
        return None
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
    except Exception:
        return None
    kernel = getattr(shell, "kernel", None)
    # An ipykernel kernel has a session and a shell handler table; an in-process or
    # foreign "kernel" attribute without them cannot be driven the ways used here.
    if kernel is None or not hasattr(kernel, "shell_handlers"):
        return None
    return kernel


def kernel_version() -> tuple[int, ...] | None:
    """ipykernel's version as a tuple of ints, e.g. ``(7, 4, 0)``; None when absent."""
    ipk = sys.modules.get("ipykernel")
    if ipk is None:
        try:
            import ipykernel as ipk
        except Exception:
            return None
    text = getattr(ipk, "__version__", "") or ""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or None


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
