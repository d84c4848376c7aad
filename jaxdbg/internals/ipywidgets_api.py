"""ipywidgets names that are not part of its public API (imported lazily: the
jaxdbg core never imports ipywidgets; only jaxdbg_widgets calls these).

- ``html_style``: ``HTMLStyle`` (ipywidgets >= 8), for the composite panel kept in
  ``benchmarks/``.
- ``open_with_hook``: opening a widget's comm in two steps, so it can be routed before
  the frontend hears of it. ipywidgets' ``Widget.open`` creates the comm and sends
  ``comm_open`` in one go; this creates it unopened (``primary=False``), runs a hook on
  the widget in between, then opens it. Uses ipywidgets' private ``_remove_buffers`` and
  ``__protocol_version__`` (ipywidgets 7.7 and 8.1).

``tests/internals/test_internals.py`` fails when any of them moves.
"""

from __future__ import annotations

from typing import Any, Callable


def html_style() -> Any:
    """A shareable style for ``HTML`` widgets.

    ``HTMLStyle`` (ipywidgets >= 8) is not exported at the top level; sharing one
    style object saves a comm per widget. ipywidgets 7 has no such style: the
    widget's default is used there.
    """
    try:
        from ipywidgets.widgets.widget_string import HTMLStyle
    except ImportError:
        return None
    return HTMLStyle()


def names_in_use() -> dict[str, bool]:
    import ipywidgets

    major = int(ipywidgets.__version__.split(".")[0])
    try:
        from ipywidgets.widgets.widget_string import HTMLStyle  # noqa: F401

        found = True
    except ImportError:
        found = False
    from ipywidgets.widgets import widget

    names = {"ipywidgets.widgets.widget_string.HTMLStyle": found or major < 8}
    for name in ("_remove_buffers", "__protocol_version__"):
        names[f"ipywidgets.widgets.widget.{name}"] = hasattr(widget, name)
    return names


def _create_comm(**kwargs: Any) -> Any:
    """A comm the way this ipywidgets version creates one: ipywidgets 8 through its
    ``ipywidgets.comm`` shim (``create_comm``), 7.x through ipykernel's ``Comm``."""
    from ipywidgets.widgets import widget as widget_module

    shim = getattr(widget_module, "comm", None)
    if shim is not None and hasattr(shim, "create_comm"):
        return shim.create_comm(**kwargs)
    from ipykernel.comm import Comm

    return Comm(**kwargs)


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
    comm.open(
        data={"state": state, "buffer_paths": buffer_paths}, buffers=buffers, metadata={"version": __protocol_version__}
    )
