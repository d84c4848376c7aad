"""The panel's one widget: an anywidget whose browser code draws the whole stop.

Python sets the synced traits below (plain JSON from :mod:`jaxdbg_widgets.panel.state`);
the browser code in ``panel.js`` / ``panel.css`` renders them and sends commands back
with ``model.send``. One widget is one comm, so routing it while the cell is paused
(see :class:`jaxdbg_widgets.pause.channel.PauseChannel`) is routing the whole panel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import anywidget
import traitlets as t

from jaxdbg.internals import ipywidgets_api
from jaxdbg.runtime import phrases as _phrases
from jaxdbg.views import array_picture_view as _pictures
from jaxdbg_widgets.panel import protocol as _protocol

_STATIC = Path(__file__).resolve().parents[1] / "static"


class PanelWidget(anywidget.AnyWidget):
    """State of one stop's panel. ``before_open(widget)`` runs once the comm exists but
    before the frontend is told about it, so a route set there (the pause channel's
    subshell) already holds for the very first message the frontend sends."""

    _esm = (_STATIC / "panel.js").read_text(encoding="utf-8")
    _css = (_STATIC / "panel.css").read_text(encoding="utf-8")

    frames: t.List[Any] = t.List().tag(sync=True)  # [{function, where, path}], innermost first
    selected = t.Int(0).tag(sync=True)
    source = t.Dict().tag(sync=True)  # panel_model.source_state
    locals_page = t.Dict().tag(sync=True)  # {frame, total, rows}: the first rows only
    log: t.List[Any] = t.List().tag(sync=True)  # recent entries, oldest first
    status = t.Dict().tag(sync=True)  # banner, reason, finished, buttons to show
    history: t.List[Any] = t.List().tag(sync=True)  # typed lines of earlier stops in this kernel
    done = t.Unicode("").tag(sync=True)  # id of the newest command handled
    watches = t.Dict().tag(sync=True)  # state.watch_state: the breakpoint's watches over hits
    breakpoints: t.List[Any] = t.List().tag(sync=True)  # state.breakpoint_rows
    tooltips = t.Dict().tag(sync=True)  # button's command line -> its help (state.button_tooltips)
    # Declared once in Python, read by panel.js: the message names and the shared phrases.
    protocol = t.Dict(default_value=_protocol.browser_names()).tag(sync=True)
    phrases = t.Dict(default_value=_phrases.browser_phrases()).tag(sync=True)
    # The array pictures' colours (jaxdbg.views.palette), by colour code.
    picture_colours = t.Dict(default_value=_pictures.browser_colours()).tag(sync=True)

    def __init__(self, *, before_open: Callable[["PanelWidget"], None] | None = None, **kwargs: Any) -> None:
        self._before_open = before_open
        #: What a frontend that draws no widgets prints (the stop and what happens next).
        self.text_form = "jaxdbg debugger panel"
        super().__init__(**kwargs)

    def open(self) -> None:
        hook = getattr(self, "_before_open", None)
        if self.comm is not None or hook is None:
            super().open()
            return
        self._before_open = None
        ipywidgets_api.open_with_hook(self, hook, super().open)

    def __repr__(self) -> str:
        return self.text_form
