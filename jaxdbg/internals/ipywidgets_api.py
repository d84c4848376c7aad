"""ipywidgets names that are not part of its public API (imported lazily: the
jaxdbg core never imports ipywidgets; only jaxdbg_widgets calls these)."""

from __future__ import annotations

from typing import Any


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
    return {"ipywidgets.widgets.widget_string.HTMLStyle": found or major < 8}
