"""``%load_ext jaxdbg``: wire jaxdbg into a notebook.

Each feature of the extension is one entry of :data:`FEATURES`: a name, a
``load(shell)`` and an ``unload(shell)``. Loading runs them in order, unloading
in reverse, so ``%unload_ext jaxdbg`` undoes exactly what ``%load_ext`` did.
A feature module adds itself here with one line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxdbg.ipython import checkify_cell
from jaxdbg.capture import jax_routes
from jaxdbg.ipython import magics
from jaxdbg.capture import postmortem
from jaxdbg.engine import quit_reporting
from jaxdbg.ipython import sharding_hooks
from jaxdbg.engine.registry import registered_debuggers, unregister_debugger


@dataclasses.dataclass(frozen=True)
class Feature:
    name: str
    load: Callable[[Any], None]
    unload: Callable[[Any], None]


class _Widgets:
    """The panel becomes the default backend in a kernel; unloading unregisters it
    and stops the interrupt watch and cell tracking, if loading started them."""

    def __init__(self) -> None:
        self.registered = False
        self.prepared = False

    def load(self, shell: Any) -> None:
        was_registered = "widgets" in registered_debuggers()
        try:
            import jaxdbg_widgets  # registers on first import
            from jaxdbg_widgets import pause
        except ImportError:  # ipywidgets not installed: the terminal prompt serves stops
            return
        jaxdbg_widgets.register()  # again, after an unload
        self.registered = not was_registered
        if not pause.installed():
            jaxdbg_widgets.prepare()
            self.prepared = pause.installed()

    def unload(self, shell: Any) -> None:
        if self.prepared:
            from jaxdbg_widgets import pause

            pause.uninstall()
            self.prepared = False
        if self.registered:
            from jaxdbg_widgets import NAME

            unregister_debugger(NAME)
            self.registered = False


_widgets = _Widgets()


class _JaxHook:
    """Installs the jax.debug.breakpoint hook; unloading removes it only if loading
    installed it (not when the program had called install_jax_hook() itself)."""

    installed_here = False

    def load(self) -> None:
        if not jax_routes.is_installed():
            jax_routes.install_jax_hook()
            self.installed_here = True

    def unload(self) -> None:
        if self.installed_here:
            jax_routes.uninstall_jax_hook()
            self.installed_here = False


_hook = _JaxHook()


def _print_log(action: str) -> Callable[[Any], None]:
    """The print log lives with the widgets; without them prints stay on stdout."""
    def run(shell: Any) -> None:
        try:
            from jaxdbg_widgets.print_log import cells as print_log
        except ImportError:
            return
        getattr(print_log, action)(shell)
    return run


FEATURES: list[Feature] = [
    # Existing jax.debug.breakpoint() calls open jaxdbg.
    Feature("jax-breakpoint-hook", lambda shell: _hook.load(), lambda shell: _hook.unload()),
    # A quit or interrupt inside jit reads as one line (chained to any other
    # custom exception handler).
    Feature("quit-reporting", lambda shell: quit_reporting.install(),
            lambda shell: quit_reporting.uninstall()),
    # The panel becomes the default backend in a kernel.
    Feature("widgets", _widgets.load, _widgets.unload),
    # jax.debug's sharding functions and Sharding/Mesh results draw jaxdbg's layouts.
    Feature("sharding", sharding_hooks.install, lambda shell: sharding_hooks.uninstall()),
    # The %jaxdbg magic: status and switches.
    Feature("magics", magics.load, magics.unload),
    # jaxdbg.print and jax.debug.print rows go to one log widget per cell.
    Feature("print-log", _print_log("load"), _print_log("unload")),
    # checkify errors render with their location; %%checkify checks a cell's jitted calls.
    Feature("checkify", checkify_cell.load, checkify_cell.unload),
    # A NaN in a jitted call (jax_debug_nans) opens the debugger on JAX's eager re-run.
    Feature("nan-post-mortem", postmortem.load, postmortem.unload),
]


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jaxdbg``: load every feature in ``FEATURES`` into ``shell``."""
    for feature in FEATURES:
        feature.load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """``%unload_ext jaxdbg``: undo each feature, in reverse order."""
    for feature in reversed(FEATURES):
        feature.unload(shell)
