"""Which ipykernel kernel is running, and which ipykernel version.

Never imports IPython or ipykernel itself: outside a kernel they need not be loaded.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["current_kernel", "kernel_version"]


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
