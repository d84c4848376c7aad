"""ipywidgets frontends for jaxdbg. Importing this registers the ``widgets`` backend,
which is then chosen automatically inside a Jupyter kernel, and does nothing else:
the interrupt watch and cell tracking start when a breakpoint for the panel is
first traced, or when ``%load_ext jaxdbg`` runs."""

from jaxdbg import register_debugger
from jaxdbg_widgets.backend import OPTIONS, available, prepare, run_widget_debugger

register_debugger("widgets", run_widget_debugger, priority=100, available=available,
                  options=OPTIONS, prepare=prepare)

__all__ = ["run_widget_debugger", "available"]
