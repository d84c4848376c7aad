"""ipywidgets frontends for jaxdbg. Importing this registers the ``widgets`` backend,
which is then chosen automatically inside a Jupyter kernel."""

from jaxdbg import register_debugger
from jaxdbg_widgets.backend import available, prepare, run_widget_debugger

register_debugger("widgets", run_widget_debugger, priority=100, available=available)
prepare()

__all__ = ["run_widget_debugger", "available"]
