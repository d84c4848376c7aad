"""Opening a widget's comm in two steps, so it can be routed before the frontend hears
of it. ipywidgets' ``Widget.open`` creates the comm and sends ``comm_open`` in one go;
this does the same with a comm created unopened (``primary=False``), runs a hook on the
widget in between, then opens it. Uses ipywidgets' private ``_remove_buffers`` and
``__protocol_version__`` (ipywidgets 7.7 and 8.1); ``tests/test_internals.py`` fails
when they move.
"""

from __future__ import annotations

from typing import Any, Callable


def _create_comm(**kwargs: Any) -> Any:
    """A comm the way this ipywidgets version creates one (8: ``comm``; 7: ipykernel)."""
    try:
        import comm as comm_package
        from ipywidgets.widgets import widget as widget_module

        if getattr(widget_module, "comm", None) is comm_package:  # ipywidgets 8
            return comm_package.create_comm(**kwargs)
    except ImportError:
        pass
    from ipykernel.comm import Comm

    return Comm(**kwargs)


def names_in_use() -> dict[str, bool]:
    """The private names this module relies on, and whether each still exists."""
    from ipywidgets.widgets import widget

    return {name: hasattr(widget, name) for name in ("_remove_buffers", "__protocol_version__")}


def open_with_hook(widget: Any, hook: Callable[[Any], None], default_open: Callable[[], None]) -> None:
    """Open ``widget``'s comm, calling ``hook(widget)`` after the comm exists (and its
    message handler is registered) but before ``comm_open`` is sent. Falls back to
    ``default_open()`` then ``hook`` when this ipywidgets / comm flavour is unknown."""
    try:
        from ipywidgets.widgets.widget import __protocol_version__, _remove_buffers

        state, buffer_paths, buffers = _remove_buffers(widget.get_state())
        comm = _create_comm(target_name="jupyter.widget", primary=False)
    except Exception:
        default_open()
        hook(widget)
        return
    widget.comm = comm  # ipywidgets registers its message handler on this assignment
    hook(widget)
    comm.open(data={"state": state, "buffer_paths": buffer_paths}, buffers=buffers,
              metadata={"version": __protocol_version__})
