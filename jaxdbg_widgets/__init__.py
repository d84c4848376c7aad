"""ipywidgets frontends for jaxdbg. Importing this registers the ``widgets`` backend,
which is then chosen automatically inside a Jupyter kernel, and does nothing else:
the interrupt watch and cell tracking start when a breakpoint for the panel is
first traced, or when ``%load_ext jaxdbg`` runs."""

from jaxdbg.engine import registry
from jaxdbg_widgets.panel.backend import OPTIONS, available, prepare, run_widget_debugger

NAME = "widgets"


def register() -> bool:
    """Register the ``widgets`` backend; False if it already was (idempotent)."""
    if NAME in registry.registered_debuggers():
        return False
    registry.register_debugger(NAME, run_widget_debugger, priority=100, available=available,
                               options=OPTIONS, prepare=prepare)
    return True


register()

__all__ = ["run_widget_debugger", "available", "register"]
