"""ipywidgets frontends for jaxdbg. Importing this registers the ``widgets`` backend,
which is then chosen automatically inside a Jupyter kernel, and adds the panel and the
print log to ``%load_ext jaxdbg`` (:mod:`jaxdbg_widgets.plugin`). It does nothing else:
the interrupt watch and cell tracking start when a breakpoint for the panel is first
traced, or when ``%load_ext jaxdbg`` runs."""

from jaxdbg_widgets.panel.backend import OPTIONS, available, prepare, run_widget_debugger
from jaxdbg_widgets.plugin import NAME, install, register

install()

__all__ = ["run_widget_debugger", "available", "register", "NAME", "OPTIONS", "prepare", "install"]
