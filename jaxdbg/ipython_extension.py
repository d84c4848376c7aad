"""``%load_ext jaxdbg``: wire jaxdbg into a notebook.

Each feature of the extension is one entry of :data:`FEATURES`: a name, a
``load(shell)`` and an ``unload(shell)``. Loading runs them in order, unloading
in reverse, so ``%unload_ext jaxdbg`` undoes exactly what ``%load_ext`` did.
A feature module adds itself here with one line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxdbg import jax_hook, magics, quit_reporting, sharding_hooks


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


FEATURES: list[Feature] = [
    # Existing jax.debug.breakpoint() calls open jaxdbg.
    Feature("jax-breakpoint-hook", lambda shell: jax_hook.install_jax_hook(),
            lambda shell: jax_hook.uninstall_jax_hook()),
    # A quit or interrupt inside jit reads as one line.
    Feature("quit-reporting", lambda shell: quit_reporting.install(), _nothing),
    # The panel becomes the default backend in a kernel.
    Feature("widgets", _load_widgets, _nothing),
    # jax.debug's sharding functions and Sharding/Mesh results draw jaxdbg's layouts.
    Feature("sharding", sharding_hooks.install, lambda shell: sharding_hooks.uninstall()),
    # The %jaxdbg magic: status and switches.
    Feature("magics", magics.load, magics.unload),
]


def load_ipython_extension(shell: Any) -> None:
    for feature in FEATURES:
        feature.load(shell)


def unload_ipython_extension(shell: Any) -> None:
    for feature in reversed(FEATURES):
        feature.unload(shell)
