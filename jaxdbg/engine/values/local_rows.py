"""One row of a locals table as plain JSON data (what the panel draws).

The Session makes these rows (:meth:`jaxdbg.engine.session.Session.local_rows`), so a
stop served at a job's debug host gets them from the process that holds the values,
summarised and cut there exactly as for a stop of its own. So it does what opening a
row shows (:meth:`~jaxdbg.engine.session.Session.row_children`, ``row_in_full``,
``row_picture``): a row is named by its *path*, a local's name and then child positions.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from jaxdbg.engine.values import array_picture, summaries, tree_glance, tree_outline, tree_summaries

# Arrays above this many elements get their statistics only when the browser shows
# their row (a "stats" request), after the panel is up: a 400 MB local took 0.7 s of
# host copy and reductions before the panel could be sent. 1M float32 take ~2 ms.
LAZY_STATS_ELEMENTS = 1_000_000
# The summary of a job's global array that this process holds only shards of.
SPANS_PROCESSES = "shards on several processes (statistics not taken)"


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def children(value: Any) -> list[tuple[str, Any]]:
    """The labelled children of a container a variable explorer would open; an NNX
    Variable among them stands as its array (a row with a picture and an array view)."""
    return [(label, tree_summaries.variable_value(child)) for label, child in _children(value)]


def _children(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [(repr(k), v) for k, v in value.items()]
    if _is_namedtuple(value):
        return [(name, getattr(value, name)) for name in type(value)._fields]
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(fld.name, getattr(value, fld.name, None)) for fld in dataclasses.fields(value)]
    if tree_summaries.is_tree(value):  # an NNX Module, State or Optimizer; any registered pytree
        return [(_child_label(key), child) for key, child in tree_outline.node_children(value)]
    return []


def _child_label(key: str) -> str:
    """A key path step as the panel spells a child: ``l1`` (an attribute, shown
    ``.l1``), ``'bn'`` (a key, shown ``['bn']``) or ``[0]``."""
    if key.startswith(".") and key[1:].isidentifier():
        return key[1:]
    if key.startswith("[") and key.endswith("]") and not key[1:-1].isdigit():
        return key[1:-1]
    return key


def expandable(value: Any) -> bool:
    try:
        if summaries.is_array(value) and not tree_summaries.is_variable(value) or isinstance(value, (str, bytes)):
            return False
        if type(value) in (dict, list, tuple):  # without listing a 10,000-leaf dict's children
            return len(value) > 0
        return bool(_children(value))
    except Exception:
        return False


def _summary_text(row: summaries.ValueSummary) -> tuple[str, bool]:
    """The summary column (the statistics text ``locals`` shows too), and whether
    its statistics leave out NaN / Inf values."""
    if not row.is_array:
        return row.preview, False
    if row.shape == ():  # a scalar: its value (the preview) says it all
        return row.preview, False
    return row.details(), row.nonfinite


def _big_array(value: Any) -> bool:
    try:
        return summaries.is_array(value) and int(np.prod(value.shape)) > LAZY_STATS_ELEMENTS
    except Exception:
        return False


def local_row(name: str, value: Any, sharding: str | None = None, *, lazy: bool = False) -> dict:
    """One row of the locals table (or of an opened pytree node). ``sharding``: the
    value's layout in the program, as ``locals`` names it (Session.program_shardings).
    ``lazy``: a big array's statistics, or a big tree's summary, are left out and the
    row is marked ``pending``; the browser asks for them when it shows the row."""
    glance = tree_glance.glance(value) if lazy else None
    if glance is not None:  # a big tree: not walked until shown (see tree_glance)
        return _glance_row(name, value, glance)
    pending = lazy and _big_array(value)
    elsewhere = _spans_processes(value)
    tree = None if elsewhere else tree_summaries.tree_summary(value, lazy=lazy)
    try:
        if elsewhere:  # its data is not all here: reading it would wait on the whole job
            row = summaries.ValueSummary(
                name,
                type(value).__name__,
                tuple(int(d) for d in value.shape),
                str(value.dtype),
                sharding or summaries.describe_sharding(value),
            )
        elif tree is not None:
            row = summaries.ValueSummary(name, summaries.type_name(value), preview=tree.line())
        else:
            row = tree_summaries.summarize(name, value, sharding, with_stats=not pending)
    except BaseException as e:  # a value's own code must not end the stop
        if isinstance(e, KeyboardInterrupt):
            raise
        row = summaries.ValueSummary(name, type(value).__name__, preview=f"<summary failed: {type(e).__name__}>")
    summary, partial = _summary_text(row)
    if elsewhere:  # its statistics would be a computation every process of the job must join
        summary, partial = SPANS_PROCESSES, False
    return {
        "name": name,
        "type": row.type_name,
        "array": row.array_type,
        "sharding": (row.sharding or "") if row.is_array else "",
        "summary": summary,
        "finite_only": partial,
        "nonfinite": row.nonfinite or (tree is not None and tree.nonfinite),
        "expandable": expandable(value),
        "pending": (row.stats_pending or (tree is not None and tree.stats_pending)) and not elsewhere,
        # An array with elements gets a small picture, asked for when the row is shown.
        "picture": bool(row.is_array and row.shape and _has_elements(row.shape)) and not elsewhere,
    }


def _glance_row(name: str, value: Any, glance: str) -> dict:
    return glance_row(name, tree_glance.Glance(summaries.type_name(value), glance, expandable(value)))


def glance_row(name: str, glance: tree_glance.Glance) -> dict:
    """The row of a big tree not read yet: what it is, its summary when shown."""
    return {
        "name": name,
        "type": glance.type_name,
        "array": "",
        "sharding": "",
        "summary": glance.summary,
        "finite_only": False,
        "nonfinite": False,  # not known until its summary is taken
        "expandable": glance.expandable,
        "pending": True,
        "picture": False,
    }


def _spans_processes(value: Any) -> bool:
    """A jax.distributed job's global array, whose shards are not all in this process."""
    try:
        return summaries.is_array(value) and getattr(value, "is_fully_addressable", True) is False
    except Exception:
        return False


def _has_elements(shape: tuple[int, ...]) -> bool:
    return all(n > 0 for n in shape)


# -- opening a row --------------------------------------------------------------------
def value_at(values: Mapping[str, Any], path: Any) -> tuple[str, Any]:
    """The label and value that a row's ``path`` names among ``values`` (the frame's
    locals); LookupError with a message when it names nothing."""
    if not isinstance(path, (list, tuple)) or not path:
        raise LookupError("a row is named by a local's name, then child positions")
    label = str(path[0])
    if label not in values:
        raise LookupError(f"no local named {label!r} in this frame")
    value = values[label]
    for position in path[1:]:
        kids = children(value)
        try:
            index = int(position)
        except (TypeError, ValueError):
            raise LookupError(f"{position!r} is not a child position") from None
        if not 0 <= index < len(kids):
            raise LookupError(f"{label} has no child {index}")
        label, value = kids[index]
    return label, value


def child_rows(value: Any, limit: int) -> tuple[list[dict], int]:
    """Rows for a node's first ``limit`` children, and how many there are; big arrays
    among them are ``pending`` (see :func:`local_row`)."""
    kids = _children(value)
    statics = {name for name, _ in tree_outline.static_fields(value)}  # an Equinox Module's
    rows = []
    for label, child in kids[:limit]:
        row = local_row(label, tree_summaries.variable_value(child), lazy=True)
        if tree_summaries.is_variable(child):  # its kind, not "Array": Param, BatchStat
            row["type"] = type(child).__name__
        elif label in statics:  # part of the Module's type, not of its pytree
            row["type"] = f"static {row['type']}"
        rows.append(row)
    return rows, len(kids)


def row_picture(
    label: str,
    value: Any,
    *,
    large: bool,
    axes: tuple[int, int] | None = None,
    indices: dict[int, int] | None = None,
    sampling: Any = None,
    sharding: Any = None,
) -> tuple[array_picture.ArrayPicture, str]:
    """An array row's picture and its statistics text: the small one of the table, or
    (``large``) the chosen slice of the large view, whose colour scale spans the whole
    array's finite range (exact statistics), so every slice shares one scale. Raises
    :class:`~jaxdbg.engine.values.array_picture.PictureError` with a message."""
    if not large:
        return array_picture.picture(value, max_side=array_picture.THUMBNAIL_SIDE), ""
    stats = summaries.array_stats(value) if summaries.is_array(value) else None
    value_range = (stats.min, stats.max) if stats is not None and stats.min is not None else None
    pic = array_picture.picture(
        value,
        axes=axes,
        indices=indices,
        max_side=array_picture.VIEW_SIDE,
        value_range=value_range,
        sharding=sharding,
        stats=stats,
        sampling=sampling if sampling is not None else array_picture.Sampling.STRIDED,
    )
    return pic, summaries.summarize(label, value).describe()
