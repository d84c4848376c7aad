"""The panel's array view: the messages that carry array pictures to the browser.

A locals row's small picture and the large view are both
:class:`~jaxdbg.engine.values.array_picture.ArrayPicture` s, sent as one JSON message (the
picture's description) plus binary buffers (anywidget delivers them to ``panel.js`` as
``DataView`` s), never as JSON lists:

- ``picture`` (the row's small picture): buffer 0 is the colour codes, uint8, row-major;
- ``view`` (the large view): buffers 0 .. 3 are the codes (uint8), the values (for
  hover: float32 where that is exact, else float64, named by ``picture["values"]``), and
  the array indices of the kept rows and columns (int32).

The browser draws the codes with :func:`jaxdbg.views.array_picture_view.browser_colours`,
synced once into the widget. The large view's colour scale spans the whole array's
finite range (exact statistics, :func:`jaxdbg.engine.values.summaries.array_stats`), so every
slice a slider picks shares one scale.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxdbg.engine.values import array_picture, local_rows
from jaxdbg.engine.values.array_picture import ArrayPicture
from jaxdbg_widgets.panel.protocol import ToBrowser, message


def describe(pic: ArrayPicture) -> dict:
    """The JSON half of a picture message: everything but the cells."""
    rows, cols = pic.codes.shape
    return {
        "rows": rows,
        "cols": cols,
        "shape": list(pic.shape),
        "dtype": pic.dtype,
        "axes": [pic.axes[0], pic.axes[1]],
        "index": list(pic.index),
        "low": pic.low,
        "high": pic.high,
        "note": pic.note,
        "sampled": pic.sampled,
        "histogram": [int(n) for n in pic.histogram],
        "edges": [float(e) for e in pic.histogram_edges],
        "classes": pic.class_counts,
        "row_cuts": list(pic.row_cuts),
        "col_cuts": list(pic.col_cuts),
        "integer": _integer(pic.dtype),
        "sampling": str(pic.sampling) if pic.sampling is not None else None,
        "values": np.dtype(_value_type(pic.dtype)).name,
        # the whole array's NaN / Inf: how many, and where the first ones are (the
        # view's "next NaN / Inf" walks them; a picture cell cannot show one NaN)
        "nonfinite": {
            "count": pic.nonfinite_count,
            "cells": [{"index": list(c.index), "kind": c.kind} for c in pic.nonfinite_cells],
        },
    }


# Dtypes whose every value float32 holds exactly: their hover values travel at half size.
_EXACT_IN_FLOAT32 = {
    "float32",
    "float16",
    "bfloat16",
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "float8_e4m3fn",
    "float8_e5m2",
}


def _value_type(dtype: str) -> type:
    return np.float32 if dtype in _EXACT_IN_FLOAT32 else np.float64


def _integer(dtype: str) -> bool:
    """Whether hover shows the values as integers (ints and bools)."""
    try:
        return np.dtype(dtype).kind in "biu"
    except TypeError:  # an ml_dtypes float numpy does not know by name
        return False


def thumbnail(frame: int, path: list, value: Any) -> tuple[dict, list[bytes]]:
    """The ``picture`` message of a locals row (or an error the row shows instead)."""
    try:
        pic, _ = local_rows.row_picture("", value, large=False)
    except array_picture.PictureError as e:
        return thumbnail_error(frame, path, str(e)), []
    return thumbnail_message(frame, path, pic)


def thumbnail_message(frame: int, path: list, pic: ArrayPicture) -> tuple[dict, list[bytes]]:
    return (message(ToBrowser.PICTURE, frame=frame, path=path, picture=describe(pic), error=""), [pic.codes.tobytes()])


def thumbnail_error(frame: int, path: list, error: str) -> dict:
    return message(ToBrowser.PICTURE, frame=frame, path=path, picture=None, error=error)


def large_view(
    frame: int,
    path: list,
    label: str,
    value: Any,
    *,
    axes: Any = None,
    indices: Any = None,
    sharding: Any = None,
    sampling: Any = None,
) -> tuple[dict, list[bytes]]:
    """The ``view`` message: the chosen slice, its histogram, the exact statistics
    (the row's summary text) and the shard boundaries."""
    try:
        pic, stats = local_rows.row_picture(
            label,
            value,
            large=True,
            axes=axes_of(axes),
            indices=indices_of(indices),
            sampling=sampling_of(sampling),
            sharding=sharding,
        )
    except array_picture.PictureError as e:
        return view_error(frame, path, label, str(e)), []
    return view_message(frame, path, label, pic, stats)


def view_message(frame: int, path: list, label: str, pic: ArrayPicture, stats: str) -> tuple[dict, list[bytes]]:
    content = message(ToBrowser.VIEW, frame=frame, path=path, name=label, picture=describe(pic), stats=stats, error="")
    buffers = [
        pic.codes.tobytes(),
        np.ascontiguousarray(pic.values, _value_type(pic.dtype)).tobytes(),
        pic.rows.astype(np.int32).tobytes(),
        pic.cols.astype(np.int32).tobytes(),
    ]
    return content, buffers


def view_error(frame: int, path: list, label: str, error: str) -> dict:
    return message(ToBrowser.VIEW, frame=frame, path=path, name=label, picture=None, stats="", error=error)


def sampling_of(sampling: Any) -> array_picture.Sampling:
    """The browser's ``sampling`` (None: strided); PictureError when unknown."""
    if sampling is None:
        return array_picture.Sampling.STRIDED
    try:
        return array_picture.Sampling(sampling)
    except ValueError:
        raise array_picture.PictureError(
            f"sampling is one of {[s.value for s in array_picture.Sampling]}, not {sampling!r}"
        ) from None


def axes_of(axes: Any) -> tuple[int, int] | None:
    """The browser's ``axes`` (two axis numbers, or None); PictureError otherwise."""
    if axes is None:
        return None
    if not isinstance(axes, list) or len(axes) != 2:
        raise array_picture.PictureError("axes must be two axis numbers")
    return int(axes[0]), int(axes[1])


def indices_of(indices: Any) -> dict[int, int] | None:
    """The browser's ``indices`` (axis -> position, or None); PictureError otherwise."""
    if indices is None:
        return None
    if not isinstance(indices, dict):
        raise array_picture.PictureError("indices must map axes to positions")
    return {int(axis): int(i) for axis, i in indices.items()}
