"""``%load_ext jaxdbg``: wire jaxdbg into a notebook.

Routes existing ``jax.debug.breakpoint()`` calls to jaxdbg, makes a quit or
interrupt inside jit read as one line, and loads the widget frontends when
ipywidgets is installed (the panel becomes the default backend in a kernel).
"""

from __future__ import annotations

from typing import Any

from jaxdbg import jax_hook, quit_reporting


def load_ipython_extension(shell: Any) -> None:
    jax_hook.install_jax_hook()
    quit_reporting.install()
    try:
        import jaxdbg_widgets  # noqa: F401  (registers the widget backends)
    except ImportError:
        pass


def unload_ipython_extension(shell: Any) -> None:
    jax_hook.uninstall_jax_hook()
