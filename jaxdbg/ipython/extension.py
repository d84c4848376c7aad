"""``%load_ext jaxdbg``: wire jaxdbg into a notebook.

Each feature of the extension is one entry of :data:`FEATURES`: a name, a
``load(shell)`` and an ``unload(shell)``. Loading runs them in order, unloading
in reverse, so ``%unload_ext jaxdbg`` undoes exactly what ``%load_ext`` did.
A feature module adds itself here with one line.

Installed packages add their features with :func:`add_feature`, from the module their
``jaxdbg.backends`` entry point names (``import jaxdbg`` loads it): that is how the
widgets package makes the panel the default backend and routes prints to its log,
without this module knowing it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Protocol

from jaxdbg.capture import breakpoint_hook, postmortem
from jaxdbg.ipython import checkify_cell, magics, sharding_hooks
from jaxdbg.runtime import quit_reporting


class ExtensionFeature(Protocol):
    """One thing ``%load_ext jaxdbg`` does, and ``%unload_ext jaxdbg`` undoes."""

    @property
    def name(self) -> str: ...

    def load(self, shell: Any) -> None: ...

    def unload(self, shell: Any) -> None: ...


@dataclasses.dataclass(frozen=True)
class Feature:
    name: str
    load: Callable[[Any], None]
    unload: Callable[[Any], None]


class _JaxHook:
    """Installs the jax.debug.breakpoint hook; unloading removes it only if loading
    installed it (not when the program had called install_jax_hook() itself)."""

    installed_here = False

    def load(self) -> None:
        if not breakpoint_hook.is_installed():
            breakpoint_hook.install_jax_hook()
            self.installed_here = True

    def unload(self) -> None:
        if self.installed_here:
            breakpoint_hook.uninstall_jax_hook()
            self.installed_here = False


_hook = _JaxHook()


FEATURES: list[ExtensionFeature] = [
    # Existing jax.debug.breakpoint() calls open jaxdbg.
    Feature("jax-breakpoint-hook", lambda shell: _hook.load(), lambda shell: _hook.unload()),
    # A quit or interrupt inside jit reads as one line (chained to any other
    # custom exception handler).
    Feature("quit-reporting", lambda shell: quit_reporting.install(), lambda shell: quit_reporting.uninstall()),
    # (jaxdbg_widgets adds "widgets" here: the panel becomes the default backend in a kernel.)
    # jax.debug's sharding functions and Sharding/Mesh results draw jaxdbg's layouts.
    Feature("sharding", sharding_hooks.install, lambda shell: sharding_hooks.uninstall()),
    # The %jaxdbg magic: status and switches.
    Feature("magics", magics.load, magics.unload),
    # (jaxdbg_widgets adds "print-log" here: jaxdbg.print and jax.debug.print rows go to
    # one log widget per cell.)
    # checkify errors render with their location; %%checkify checks a cell's jitted calls.
    Feature("checkify", checkify_cell.load, checkify_cell.unload),
    # A NaN in a jitted call (jax_debug_nans) opens the debugger on JAX's eager re-run.
    Feature("nan-post-mortem", postmortem.load, postmortem.unload),
]


def add_feature(feature: ExtensionFeature, *, before: str | None = None) -> None:
    """Add a plugin's feature to ``%load_ext jaxdbg``, loaded just before the feature
    named ``before`` (else last) and unloaded just after it. A feature of the same name
    is replaced where it stands, so importing a plugin again changes nothing.

    A feature added while the extension is loaded runs from the next ``%load_ext``."""
    for index, present in enumerate(FEATURES):
        if present.name == feature.name:
            FEATURES[index] = feature
            return
    names = [present.name for present in FEATURES]
    FEATURES.insert(names.index(before) if before in names else len(FEATURES), feature)


def remove_feature(name: str) -> None:
    """Take a plugin's feature out of ``%load_ext jaxdbg`` (it is not unloaded here)."""
    FEATURES[:] = [feature for feature in FEATURES if feature.name != name]


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jaxdbg``: load every feature in ``FEATURES`` into ``shell``."""
    for feature in FEATURES:
        feature.load(shell)


def unload_ipython_extension(shell: Any) -> None:
    """``%unload_ext jaxdbg``: undo each feature, in reverse order."""
    for feature in reversed(FEATURES):
        feature.unload(shell)
