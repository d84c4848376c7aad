"""Every ``jax.*`` function jaxdbg stands in for, and the one way it is swapped.

A :class:`Route` replaces one attribute of a JAX module and puts back exactly what it
replaced. Each swapped function is declared once, below; its owner installs the
replacement (the breakpoint hook, the sharding hooks, the print log, ``%%checkify``)
and any module reaches JAX's own function through :meth:`Route.original`: the one
captured when jaxdbg was imported, also while jaxdbg's stands in for it and also after
a user or library rebound the attribute (``jax.debug.callback = jaxdbg.callback``
must not make jaxdbg call itself). This module imports nothing of jaxdbg, so the lowest
layers (frame capture, program shardings) may use it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import jax
from jax.experimental import checkify as jax_checkify


class Route:
    """``owner.name`` routed to a replacement while installed.

    Installing is idempotent (a second ``install`` keeps the first replacement and
    returns False). ``uninstall`` puts back the object that was there before
    ``install``, even when something else re-wrapped the attribute meanwhile: a
    wrapper around jaxdbg's function must not outlive it.
    """

    def __init__(self, owner: Any, name: str) -> None:
        self.owner = owner
        self.name = name
        self._lock = threading.Lock()
        self._jax_own: Callable[..., Any] = getattr(owner, name)  # captured at import
        self._saved: Callable[..., Any] | None = None
        self._replacement: Callable[..., Any] | None = None

    @property
    def installed(self) -> bool:
        return self._replacement is not None

    @property
    def replacement(self) -> Callable[..., Any] | None:
        """What stands in for JAX's function now (None when not installed)."""
        return self._replacement

    def install(self, replacement: Callable[..., Any]) -> bool:
        """Stand ``replacement`` in for the function; False if already installed."""
        with self._lock:
            if self._replacement is not None:
                return False
            self._saved = getattr(self.owner, self.name)
            self._replacement = replacement
            setattr(self.owner, self.name, replacement)
            return True

    def uninstall(self) -> bool:
        """Put back what ``install`` replaced; False if it was not installed."""
        with self._lock:
            if self._replacement is None:
                return False
            setattr(self.owner, self.name, self._saved)
            self._saved = self._replacement = None
            return True

    def original(self) -> Callable[..., Any]:
        """JAX's own function, as it was when the route was declared (jaxdbg's import)."""
        return self._jax_own

    def __repr__(self) -> str:
        state = "installed" if self.installed else "not installed"
        return f"<Route {getattr(self.owner, '__name__', self.owner)}.{self.name}: {state}>"


# -- the functions jaxdbg stands in for -------------------------------------------------

# jaxdbg.capture.breakpoint_hook: existing jax.debug.breakpoint() calls open jaxdbg.
BREAKPOINT = Route(jax.debug, "breakpoint")
# jaxdbg.capture.prints: jax.debug.print rows carry their file:line to the print log.
PRINT = Route(jax.debug, "print")
# The same for jax.debug.log, jax.debug.print's logging twin (newer JAX; None before it).
LOG: Route | None = Route(jax.debug, "log") if hasattr(jax.debug, "log") else None
# jaxdbg.ipython.sharding_hooks: jaxdbg's layouts for JAX's sharding functions.
VISUALIZE_ARRAY_SHARDING = Route(jax.debug, "visualize_array_sharding")
INSPECT_ARRAY_SHARDING = Route(jax.debug, "inspect_array_sharding")
# jaxdbg.ipython.checkify_cell: jax.jit makes checked functions while a %%checkify cell runs.
JIT = Route(jax, "jit")
# jaxdbg.capture.nan_watch: with %jaxdbg nans on, a pmapped call's NaN is located per device.
PMAP = Route(jax, "pmap")

# Never installed by jaxdbg, but users rebind them to jaxdbg's (``jax.debug.callback =
# jaxdbg.callback``): jaxdbg's own host calls and checks go through their originals.
CALLBACK = Route(jax.debug, "callback")
CHECKIFY = Route(jax_checkify, "checkify")

ROUTES = tuple(
    route
    for route in (
        BREAKPOINT,
        PRINT,
        LOG,
        VISUALIZE_ARRAY_SHARDING,
        INSPECT_ARRAY_SHARDING,
        JIT,
        PMAP,
        CALLBACK,
        CHECKIFY,
    )
    if route is not None
)


def is_installed() -> bool:
    """Whether ``jax.debug.breakpoint`` currently opens jaxdbg."""
    return BREAKPOINT.installed
