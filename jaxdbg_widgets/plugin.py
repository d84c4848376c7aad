"""How jaxdbg_widgets plugs into jaxdbg, through its ``jaxdbg.backends`` entry point.

``import jaxdbg`` loads that entry point, which imports this package, which calls
:func:`install`: the ``widgets`` backend joins the registry (chosen automatically inside
a Jupyter kernel), and ``%load_ext jaxdbg`` gains two features, in the places the
extension keeps for them:

- ``widgets``: the panel is (again, after an unload) the default backend, and the
  pause channel's interrupt watch and cell tracking start;
- ``print-log``: ``jaxdbg.print`` and ``jax.debug.print`` rows go to one log widget per cell.

jaxdbg itself never imports this package.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.engine import registry
from jaxdbg.ipython import extension
from jaxdbg_widgets import pause
from jaxdbg_widgets.panel.backend import OPTIONS, available, prepare, run_widget_debugger

NAME = "widgets"


def register() -> bool:
    """Register the ``widgets`` backend; False if it already was (idempotent)."""
    if NAME in registry.registered_debuggers():
        return False
    registry.register_debugger(
        NAME, run_widget_debugger, priority=100, available=available, options=OPTIONS, prepare=prepare
    )
    return True


class PanelFeature:
    """The panel becomes the default backend in a kernel; unloading unregisters it
    and stops the interrupt watch and cell tracking, if loading started them."""

    name = "widgets"

    def __init__(self) -> None:
        self.registered = False
        self.prepared = False

    def load(self, shell: Any) -> None:
        self.registered = register()  # again, after an unload
        if not pause.installed():
            prepare()
            self.prepared = pause.installed()

    def unload(self, shell: Any) -> None:
        if self.prepared:
            pause.uninstall()
            self.prepared = False
        if self.registered:
            registry.unregister_debugger(NAME)
            self.registered = False


class PrintLogFeature:
    """The print log's part of ``%load_ext jaxdbg``. Its module imports anywidget, so it
    is imported only when the extension loads; without it prints stay on stdout."""

    name = "print-log"

    def load(self, shell: Any) -> None:
        self._run("load", shell)

    def unload(self, shell: Any) -> None:
        self._run("unload", shell)

    @staticmethod
    def _run(action: str, shell: Any) -> None:
        try:
            from jaxdbg_widgets.print_log import cells
        except ImportError as exc:
            if (exc.name or "").startswith("jaxdbg_widgets"):
                raise  # a module of ours moved: say so, do not silently drop the log
            return
        getattr(cells, action)(shell)


def install() -> None:
    """Register the backend and add the extension's features (idempotent)."""
    register()
    extension.add_feature(PanelFeature(), before="sharding")
    extension.add_feature(PrintLogFeature(), before="checkify")
