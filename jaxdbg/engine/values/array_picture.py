"""An array as a picture: the model every view of the array view draws.

From a host copy of an array (float, int, bool, complex as ``|x|``, bfloat16 and the
other ml_dtypes floats), :func:`picture` picks the 2-D slice to show (a 1-D array is one
row; an N-D array shows two chosen axes at given indices of the others, by default its
last two at index 0), keeps at most ``max_side`` rows and columns (a strided or an edge
sample, said in :attr:`ArrayPicture.note`) and turns each kept cell into a colour
*code*: ``0 .. LEVELS - 1`` along the colour ramp between the range's ends, or one of
the classes NaN, +Inf, -Inf and zero, which every view marks in colours of their own
(:mod:`jaxdbg.views.palette`). Each kept cell is one element of the array, so the
index and value a view shows on hover are exact.

A sample never drops a NaN or an Inf of the slice: the rows and columns that hold them
replace the nearest sampled ones (up to ``max_side`` of each), and the note says how
many of them the picture shows. The statistics (:func:`jaxdbg.engine.values.summaries.array_stats`:
the range the ramp spans by default, the NaN / Inf counts and the places of the first
of them) are exact, over the whole host copy; only the histogram is over the kept cells.

Views draw an :class:`ArrayPicture` as plain text, with rich and as HTML through the
drawings :mod:`jaxdbg.views.array_picture_view` registers (the engine imports no view).
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Sequence

import numpy as np

from jaxdbg.engine.values import picture_sampling, summaries
from jaxdbg.engine.values.drawable import Drawable
from jaxdbg.engine.values.picture_sampling import Sampling

#: Colour codes of the ramp: 0 (the range's low end) .. LEVELS - 1 (its high end).
LEVELS = 248


class CellClass(enum.IntEnum):
    """The codes above the ramp: values every view marks in a colour of their own."""

    NAN = 252
    POS_INF = 253
    NEG_INF = 254
    ZERO = 255


THUMBNAIL_SIDE = 32  # the locals table's small pictures
VIEW_SIDE = 512  # the large view (a 4096 x 4096 array: every 8th row and column)
HISTOGRAM_BINS = 32
# Zero cells are counted over the whole array up to this size (a pass of its own; the
# NaN / Inf counts come with the statistics); a bigger array's picture leaves "zero" out.
ZERO_COUNT_ELEMENTS = 1 << 20


class PictureError(ValueError):
    """The value cannot be drawn (not an array, or no such axis / index); the message says why."""


@dataclasses.dataclass(frozen=True)
class ArrayPicture(Drawable):
    """One drawn slice of an array.

    ``rows`` / ``cols`` are the indices, along ``axes``, of the kept rows and columns;
    ``index`` is the full index of the slice with ``None`` at the two shown axes (for a
    1-D array ``axes`` is ``(None, 0)``: one row). ``codes[r, c]`` is the colour code of
    element ``rows[r], cols[c]``, ``values[r, c]`` its value as a float (bool as 0 / 1).
    ``low`` / ``high`` are the ends of the colour ramp (None when nothing is finite).
    """

    shape: tuple[int, ...]
    dtype: str
    axes: tuple[int | None, int]
    index: tuple[int | None, ...]
    rows: np.ndarray
    cols: np.ndarray
    codes: np.ndarray
    values: np.ndarray
    low: float | None
    high: float | None
    sampling: Sampling | None
    histogram: np.ndarray  # counts of the finite kept values per bin
    histogram_edges: np.ndarray  # HISTOGRAM_BINS + 1 edges from low to high
    # "nan", "+inf", "-inf" in the whole array, and "zero" where counted (ZERO_COUNT_ELEMENTS)
    class_counts: dict[str, int]
    magnitudes: bool = False  # a complex array, drawn as |x|
    row_cuts: tuple[int, ...] = ()  # shard boundaries: the row index where a shard starts
    col_cuts: tuple[int, ...] = ()
    #: The whole array's exact statistics (None where they could not be taken).
    stats: summaries.ArrayStats | None = None
    #: NaN / Inf cells in the shown slice, and how many of them a sample kept.
    slice_nonfinite: int = 0
    nonfinite_kept: int = 0

    @property
    def nonfinite_cells(self) -> tuple[summaries.NonFiniteCell, ...]:
        """Where the array's first NaN / Inf values are (full indices, row-major order;
        at most :data:`~jaxdbg.engine.values.summaries.NONFINITE_LISTED`)."""
        return self.stats.nonfinite_cells if self.stats is not None else ()

    @property
    def nonfinite_count(self) -> int:
        """The NaN / Inf values of the whole array."""
        if self.stats is not None:
            return self.stats.nonfinite_count
        return sum(self.class_counts.get(k, 0) for k in ("nan", "+inf", "-inf"))

    @property
    def sampled(self) -> bool:
        return self.sampling is not None

    @property
    def slice_shape(self) -> tuple[int, int]:
        """The rows and columns of the whole slice (before sampling)."""
        rows = 1 if self.axes[0] is None else self.shape[self.axes[0]]
        return rows, (self.shape[self.axes[1]] if self.shape else 1)

    def slice_text(self) -> str:
        """The slice in numpy's notation: ``x[0, :, :]``'s ``[0, :, :]``; "" for 1-D / 2-D."""
        if len(self.shape) <= 2:
            return ""
        return "[" + ", ".join(":" if i is None else str(i) for i in self.index) + "]"

    @property
    def note(self) -> str:
        """What a view says under the picture: the slice, the sampling, |x|."""
        parts = []
        if self.slice_text():
            parts.append(f"slice {self.slice_text()}")
        transposed = len(self.shape) == 2 and self.axes == (1, 0)
        if transposed:
            parts.append("transposed: its rows drawn across")
        if self.sampling is not None:
            how = "evenly spaced" if self.sampling is Sampling.STRIDED else "the first and last halves"
            cut = [
                f"{len(kept)} of {n} {what}"
                for kept, n, what in zip(
                    (self.rows, self.cols), self.slice_shape, ("columns", "rows") if transposed else ("rows", "columns")
                )
                if len(kept) < n
            ]
            parts.append(f"sampled ({how}): " + ", ".join(cut))
            if self.slice_nonfinite:
                kept = (
                    "every NaN / Inf cell kept"
                    if self.nonfinite_kept == self.slice_nonfinite
                    else f"{self.nonfinite_kept:,} of its {self.slice_nonfinite:,} NaN / Inf cells kept"
                )
                parts.append(kept)
        if self.magnitudes:
            parts.append("|x| of complex values")
        return "; ".join(parts)

    def element_index(self, r: int, c: int) -> tuple[int, ...]:
        """The full array index of kept cell ``(r, c)``."""
        index = list(self.index)
        if self.axes[0] is not None:
            index[self.axes[0]] = int(self.rows[r])
        if self.shape:
            index[self.axes[1]] = int(self.cols[c])
        return tuple(int(i) for i in index)  # type: ignore[arg-type]

    # Drawn by jaxdbg.views.array_picture_view (registered there).


# ---------------------------------------------------------------------- the host copy


def host_values(value: Any) -> tuple[np.ndarray, bool]:
    """``value`` as a host numpy array the picture can compute with (floats for
    ml_dtypes floats, ``|x|`` for complex, 0 / 1 for bool), and whether it is ``|x|``."""
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        raise PictureError(f"a {type(value).__name__} is not an array")
    host = np.asarray(value)
    return host, np.issubdtype(host.dtype, np.complexfloating)


def _as_numbers(block: np.ndarray) -> np.ndarray:
    """A kept block as float64 (exact for what is shown on hover: float32, bfloat16,
    ints up to 2**53)."""
    if np.issubdtype(block.dtype, np.complexfloating):
        magnitudes: np.ndarray = np.abs(block).astype(np.float64)
        return magnitudes
    if block.dtype == np.bool_:
        return block.astype(np.float64)
    if block.dtype.kind in "iuf" or "float" in block.dtype.name:
        return block.astype(np.float64)
    raise PictureError(f"arrays of {block.dtype} cannot be drawn")


# ---------------------------------------------------------------------- slicing


def _normalise_axes(ndim: int, axes: Sequence[int] | None) -> tuple[int | None, int]:
    if ndim == 0:
        return None, 0
    if ndim == 1:
        if axes not in (None, (0,), [0]):
            raise PictureError("a 1-D array has one axis, 0")
        return None, 0
    if axes is None:
        return ndim - 2, ndim - 1
    if len(axes) != 2:
        raise PictureError(f"choose two axes to show, not {len(axes)}")
    row, col = (int(a) for a in axes)
    if not (-ndim <= row < ndim and -ndim <= col < ndim) or row % ndim == col % ndim:
        raise PictureError(f"axes {tuple(axes)} are not two different axes of a {ndim}-D array")
    return row % ndim, col % ndim


def _slice_index(
    shape: tuple[int, ...], axes: tuple[int | None, int], indices: dict[int, int] | None
) -> tuple[int | None, ...]:
    shown = {a for a in axes if a is not None}
    index: list[int | None] = []
    indices = dict(indices or {})
    for axis, n in enumerate(shape):
        if axis in shown or not shape:
            index.append(None)
            continue
        i = int(indices.pop(axis, 0))
        if not -n <= i < n:
            raise PictureError(f"index {i} is out of range for axis {axis} of size {n}")
        index.append(i % n)
    unknown = [a for a in indices if a in shown or not 0 <= a < len(shape)]
    if unknown:
        raise PictureError(f"axis {unknown[0]} is shown or not an axis; slider indices are for the other axes")
    return tuple(index)


# ---------------------------------------------------------------------- colour codes


def colour_codes(values: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """The colour code of each value: its place on the ramp from ``low`` to ``high``
    (clipped), or its :class:`CellClass`."""
    # Whole-array arithmetic (no boolean gathers): NaN / Inf cells get a code here that
    # the class marks below overwrite.
    if low is None or high is None:
        codes = np.zeros(values.shape, np.uint8)
    elif high > low:
        with np.errstate(invalid="ignore", over="ignore"):
            scaled = (values - low) * ((LEVELS - 1) / (high - low))
            np.clip(scaled, 0, LEVELS - 1, out=scaled)
            scaled[np.isnan(scaled)] = 0
            codes = np.rint(scaled).astype(np.uint8)
    else:
        codes = np.full(values.shape, LEVELS // 2, np.uint8)
    codes[np.isnan(values)] = CellClass.NAN
    codes[values == np.inf] = CellClass.POS_INF
    codes[values == -np.inf] = CellClass.NEG_INF
    codes[values == 0] = CellClass.ZERO
    return codes


def _class_counts(codes: np.ndarray) -> dict[str, int]:
    return {
        name: int((codes == cls).sum())
        for name, cls in (
            ("nan", CellClass.NAN),
            ("+inf", CellClass.POS_INF),
            ("-inf", CellClass.NEG_INF),
            ("zero", CellClass.ZERO),
        )
    }


def _finite_range(values: np.ndarray) -> tuple[float | None, float | None]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None, None
    return float(finite.min()), float(finite.max())


# ---------------------------------------------------------------------- shards


def shard_cuts(sharding: Any, shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """For each axis, the indices where a shard starts (0 left out), from a
    ``jax.sharding.Sharding``'s public ``devices_indices_map``; [] when unknown."""
    try:
        slices = sharding.devices_indices_map(tuple(shape)).values()
    except Exception:
        return []
    cuts: list[set[int]] = [set() for _ in shape]
    for index in slices:
        for axis, piece in enumerate(index):
            start = piece.start if isinstance(piece, slice) else None
            if start:
                cuts[axis].add(int(start))
    return [tuple(sorted(c)) for c in cuts]


def _own_sharding(value: Any) -> Any:
    """The sharding of a jax.Array that spans several devices, else None."""
    sharding = getattr(value, "sharding", None)
    try:
        return sharding if sharding is not None and len(sharding.device_set) > 1 else None
    except Exception:
        return None


# ---------------------------------------------------------------------- the picture


def picture(
    value: Any,
    *,
    axes: Sequence[int] | None = None,
    indices: dict[int, int] | None = None,
    max_side: int = VIEW_SIDE,
    sampling: Sampling | str = Sampling.STRIDED,
    value_range: tuple[float | None, float | None] | None = None,
    sharding: Any = None,
    stats: summaries.ArrayStats | None = None,
) -> ArrayPicture:
    """The picture of one 2-D slice of ``value`` (see the module's docstring).

    ``axes``: the (row, column) axes shown (default the last two); ``indices``: the
    index of each other axis (default 0). ``value_range``: the ramp's ends (default the
    finite range of the kept cells; the panel passes the whole array's, so every slice
    shares one scale). ``sharding``: a layout whose shard boundaries to keep (default the
    value's own, when it spans devices). ``stats``: the value's exact statistics when the
    caller has them (else taken here: cached for a jax.Array, not for a writable numpy
    array). Raises :class:`PictureError` with a message.
    """
    host, magnitudes = host_values(value)
    sampling = Sampling(sampling)
    shape = tuple(int(n) for n in host.shape)
    if host.size == 0:
        raise PictureError(f"an array of shape {shape} has no elements to draw")
    shown = _normalise_axes(host.ndim, axes)
    index = _slice_index(shape, shown, indices)
    rows_n = 1 if shown[0] is None else shape[shown[0]]
    cols_n = shape[shown[1]] if shape else 1
    rows = picture_sampling.kept_positions(rows_n, max_side, sampling)
    cols = picture_sampling.kept_positions(cols_n, max_side, sampling)
    if stats is None and host.dtype.kind != "O":
        stats = summaries.array_stats(value)
    slice_nonfinite = 0
    if stats is not None and stats.nonfinite_count and (len(rows) < rows_n or len(cols) < cols_n):
        cells, slice_nonfinite = picture_sampling.nonfinite_in_slice(host, shown, index, max_side, stats)
        rows, cols = picture_sampling.keep_cells(rows, cols, cells)
    block = _block(host, shown, index, rows, cols)
    values = _as_numbers(block)
    if value_range is None:  # the whole array's exact range, else (no statistics) the cells'
        value_range = (stats.min, stats.max) if stats is not None and stats.min is not None else _finite_range(values)
    low, high = value_range
    codes = colour_codes(values, low, high)
    counts, edges = _histogram(values, low, high)
    row_cuts: tuple[int, ...] = ()
    col_cuts: tuple[int, ...] = ()
    cuts = shard_cuts(sharding if sharding is not None else _own_sharding(value), shape)
    if cuts:
        row_cuts = cuts[shown[0]] if shown[0] is not None else ()
        col_cuts = cuts[shown[1]] if shape else ()
    was_sampled = len(rows) < rows_n or len(cols) < cols_n
    kept_nonfinite = (
        int(np.count_nonzero((codes >= CellClass.NAN) & (codes <= CellClass.NEG_INF))) if slice_nonfinite else 0
    )
    return ArrayPicture(
        shape,
        str(host.dtype),
        shown,
        index,
        rows,
        cols,
        codes,
        values,
        low,
        high,
        sampling if was_sampled else None,
        counts,
        edges,
        _whole_counts(host, stats, codes),
        magnitudes,
        row_cuts,
        col_cuts,
        stats,
        slice_nonfinite,
        kept_nonfinite,
    )


def _whole_counts(host: np.ndarray, stats: summaries.ArrayStats | None, codes: np.ndarray) -> dict[str, int]:
    """The marked classes counted over the whole array: NaN / Inf from the exact
    statistics, zero by a pass of its own up to ZERO_COUNT_ELEMENTS (else left out)."""
    if stats is None:  # no statistics: what the kept cells show is all that is known
        return _class_counts(codes)
    counts = stats.class_counts()
    if host.size <= ZERO_COUNT_ELEMENTS:
        try:
            counts["zero"] = int(host.size - np.count_nonzero(host))
        except TypeError:  # a dtype count_nonzero does not know
            counts["zero"] = int(np.count_nonzero(host == 0))
    return counts


def _histogram(values: np.ndarray, low: float | None, high: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the finite values in HISTOGRAM_BINS bins from ``low`` to ``high``
    (values outside the range counted in the end bins); one full bin when low == high."""
    finite = values[np.isfinite(values)]
    counts = np.zeros(HISTOGRAM_BINS, np.int64)
    if low is None or high is None:
        return counts, np.zeros(HISTOGRAM_BINS + 1)
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    if high > low:  # equal bins over a range: numpy's fast path (no sort)
        counts += np.histogram(np.clip(finite, low, high), bins=HISTOGRAM_BINS, range=(low, high))[0]
    else:
        counts[HISTOGRAM_BINS // 2] = finite.size
    return counts, edges


def _block(
    host: np.ndarray, shown: tuple[int | None, int], index: tuple[int | None, ...], rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """The kept cells as a (rows, cols) array, read without copying the slice first."""
    if host.ndim == 0:
        return host.reshape(1, 1)
    if host.ndim == 1:
        row: np.ndarray = host[cols].reshape(1, -1)
        return row
    row_axis, col_axis = shown
    assert row_axis is not None
    selector: list[Any] = [i if i is not None else slice(None) for i in index]
    selector[row_axis] = rows[:, None] if row_axis < col_axis else rows[None, :]
    selector[col_axis] = cols[None, :] if row_axis < col_axis else cols[:, None]
    block: np.ndarray = host[tuple(selector)]
    return block if row_axis < col_axis else block.T
