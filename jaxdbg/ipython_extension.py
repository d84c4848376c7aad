"""``%load_ext jaxdbg``: wire jaxdbg into a notebook.

Each feature of the extension is one entry of :data:`FEATURES`: a name, a
``load(shell)`` and an ``unload(shell)``. Loading runs them in order, unloading
in reverse, so ``%unload_ext jaxdbg`` undoes exactly what ``%load_ext`` did.
A feature module adds itself here with one line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxdbg import checkify_cell, jax_hook, postmortem, quit_reporting


@dataclasses.dataclass(frozen=True)
class Feature:
    name: str
    load: Callable[[Any], None]
    unload: Callable[[Any], None]


def _load_widgets(shell: Any) -> None:
    try:
        import jaxdbg_widgets  # noqa: F401  (registers the widget backends)
    except ImportError:
        pass


def _nothing(shell: Any) -> None:
    pass


def _print_log(action: str) -> Callable[[Any], None]:
    """The print log lives with the widgets; without them prints stay on stdout."""
    def run(shell: Any) -> None:
        try:
            from jaxdbg_widgets import print_log
        except ImportError:
            return
        getattr(print_log, action)(shell)
    return run


FEATURES: list[Feature] = [
    # Existing jax.debug.breakpoint() calls open jaxdbg.
    Feature("jax-breakpoint-hook", lambda shell: jax_hook.install_jax_hook(),
            lambda shell: jax_hook.uninstall_jax_hook()),
    # A quit or interrupt inside jit reads as one line.
    Feature("quit-reporting", lambda shell: quit_reporting.install(), _nothing),
    # The panel becomes the default backend in a kernel.
    Feature("widgets", _load_widgets, _nothing),
    # jaxdbg.print and jax.debug.print rows go to one log widget per cell.
    Feature("print-log", _print_log("load"), _print_log("unload")),
    # checkify errors render with their location; %%checkify checks a cell's jitted calls.
    Feature("checkify", checkify_cell.load, checkify_cell.unload),
    # A NaN in a jitted call (jax_debug_nans) opens the debugger on JAX's eager re-run.
    Feature("nan-post-mortem", postmortem.load, postmortem.unload),
]


def load_ipython_extension(shell: Any) -> None:
    for feature in FEATURES:
        feature.load(shell)


def unload_ipython_extension(shell: Any) -> None:
    for feature in reversed(FEATURES):
        feature.unload(shell)
