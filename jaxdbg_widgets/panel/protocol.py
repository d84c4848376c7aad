"""The messages between the panel's browser code and the kernel, declared once.

Every message is a JSON object whose ``"type"`` names it; its other fields are listed
here too. ``panel.js`` does not spell the names again: the widget syncs
:func:`browser_names` into its ``protocol`` trait and the browser code reads the names
from there (a test checks that ``panel.js`` uses no message name of its own).

The count of views a page shows belongs to the pause channel (any widget may send it),
so its name is the channel's :data:`~jaxdbg_widgets.pause.channel.VIEWS_MESSAGE`.
"""

from __future__ import annotations

import enum

from jaxdbg_widgets.pause.channel import VIEWS_MESSAGE

#: The key of every message that names what it is.
TYPE = "type"


class ToKernel(str, enum.Enum):
    """Messages the browser sends (``model.send``); the kernel's handlers are keyed by these."""

    RUN = "run"  # a typed line or a button's command line
    LOCALS = "locals"  # more rows of the locals table
    EXPAND = "expand"  # the children of a pytree row (path: name, then positions)
    STATS = "stats"  # the statistics of a big array's row that was sent pending
    PICTURE = "picture"  # the small picture of an array row now shown (path as for expand)
    VIEW = "view"  # the large view of an array: the slice (axes, indices) to draw
    COMPLETE = "complete"  # Tab completion of the input
    MORE = "more"  # show a cut log entry in full
    VIEWS = VIEWS_MESSAGE  # how many views of the widget the page shows (Clear Output)
    # Whether anyone can click: a frontend without a widget manager sends neither, and the
    # stop is then answered at the typed prompt (jaxdbg_widgets.panel.backend).
    HELD = "held"  # a widget manager holds the panel (anywidget's initialize ran)
    DRAWN = "drawn"  # a view of the panel has rendered (sent once per model)

    def __str__(self) -> str:
        return self.value


class ToBrowser(str, enum.Enum):
    """Messages the kernel sends (``widget.send``) in answer to the ones above."""

    LOCALS = "locals"  # rows of the locals table
    STATS = "stats"  # a pending row, now with its statistics
    CHILDREN = "children"  # the rows of an opened pytree node
    COMPLETIONS = "completions"  # the matches for a ``complete`` request
    PICTURE = "picture"  # a row's small picture; buffer: colour codes (uint8)
    VIEW = "view"  # the large view; buffers: codes, values, rows, columns

    def __str__(self) -> str:
        return self.value


# The fields each message carries besides ``type``: one table per direction, since the
# two directions share names ("locals", "stats") with fields of their own.
KERNEL_FIELDS: dict[ToKernel, tuple[str, ...]] = {
    ToKernel.RUN: ("id", "line", "typed", "pretty"),
    ToKernel.LOCALS: ("frame", "start", "count"),
    ToKernel.EXPAND: ("frame", "path"),
    ToKernel.STATS: ("frame", "path"),
    ToKernel.COMPLETE: ("id", "text"),
    ToKernel.PICTURE: ("frame", "path"),
    ToKernel.VIEW: ("frame", "path", "axes", "indices", "sampling"),
    ToKernel.MORE: ("entry",),
    ToKernel.VIEWS: ("count",),
    ToKernel.HELD: (),
    ToKernel.DRAWN: (),
}

#: The messages that only say a frontend holds or drew the panel; not commands.
PRESENCE = frozenset({ToKernel.HELD.value, ToKernel.DRAWN.value})
BROWSER_FIELDS: dict[ToBrowser, tuple[str, ...]] = {
    ToBrowser.LOCALS: ("frame", "start", "rows"),
    ToBrowser.STATS: ("frame", "path", "row"),
    ToBrowser.CHILDREN: ("frame", "path", "rows", "total"),
    ToBrowser.COMPLETIONS: ("id", "text", "matches"),
    ToBrowser.PICTURE: ("frame", "path", "picture", "error"),
    ToBrowser.VIEW: ("frame", "path", "name", "picture", "stats", "error"),
}


def fields(kind: ToKernel | ToBrowser) -> tuple[str, ...]:
    """The fields of a message of ``kind`` besides ``type``."""
    return KERNEL_FIELDS[kind] if isinstance(kind, ToKernel) else BROWSER_FIELDS[kind]


def message(kind: ToKernel | ToBrowser, **values: object) -> dict:
    """A message of ``kind`` as JSON data; a field the protocol does not declare is a
    programming error, caught here rather than ignored by the browser."""
    unknown = set(values) - set(fields(kind))
    if unknown:
        raise ValueError(f"{kind.value!r} messages have no field {sorted(unknown)}")
    return {TYPE: kind.value, **values}


def browser_names() -> dict[str, dict[str, str]]:
    """The names as the browser code reads them from the widget's ``protocol`` trait:
    ``{"toKernel": {"RUN": "run", ...}, "toBrowser": {"LOCALS": "locals", ...}}``."""
    return {"toKernel": {m.name: m.value for m in ToKernel}, "toBrowser": {m.name: m.value for m in ToBrowser}}
