"""The statistics of an array's values: min / max / mean over the finite ones, NaN and
Inf counts and where the first of them are, taken in one pass of chunks that never
holds a full-size copy, and once per immutable value.

:mod:`~jaxdbg.engine.values.summaries` describes values with them; a job's remote
stops send them as JSON (:meth:`ArrayStats.to_json`).
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from typing import Any

import jax
import numpy as np

from jaxdbg.runtime import phrases
from jaxdbg.runtime.guarded_calls import guarded

#: The non-finite cells whose indices the statistics keep (the first, in row-major
#: order); the counts are always whole.
NONFINITE_LISTED = 32
#: How many of them a one-line summary names.
NONFINITE_NAMED = 3


@dataclasses.dataclass(frozen=True)
class NonFiniteCell:
    """Where one NaN or Inf is: its full index, and ``"nan"``, ``"+inf"`` or ``"-inf"``
    (a complex array's infinities are ``"+inf"``: its ``|x|``)."""

    index: tuple[int, ...]
    kind: str

    def text(self) -> str:
        return f"{self.kind} at [{', '.join(map(str, self.index))}]"


@dataclasses.dataclass(frozen=True)
class ArrayStats:
    """Over the finite values. For a complex array ``min`` / ``max`` are of ``|x|``
    (complex numbers have no order) and ``mean`` is the complex mean.

    ``nan_count`` / ``inf_count`` count the whole array; ``nonfinite_cells`` lists where
    the first :data:`NONFINITE_LISTED` of them are, so a view can name them."""

    min: float | None
    max: float | None
    mean: float | complex | None
    nan_count: int
    inf_count: int
    magnitudes: bool = False  # min / max are of |x| (a complex array)
    neg_inf_count: int = 0  # of inf_count, the -Inf values (a real array's)
    nonfinite_cells: tuple[NonFiniteCell, ...] = ()

    @property
    def nonfinite_count(self) -> int:
        return self.nan_count + self.inf_count

    def class_counts(self) -> dict[str, int]:
        """``nan``, ``+inf`` and ``-inf`` counts, as the array pictures name them."""
        return {"nan": self.nan_count, "+inf": self.inf_count - self.neg_inf_count, "-inf": self.neg_inf_count}

    def nonfinite_places(self, named: int = NONFINITE_NAMED) -> str:
        """``nan at [40, 3], +inf at [57, 20]``: the first ``named`` NaN / Inf cells, and
        how many more there are ("" when there are none or their places are unknown)."""
        if not self.nonfinite_cells:
            return ""
        shown = self.nonfinite_cells[:named]
        more = self.nonfinite_count - len(shown)
        return ", ".join(c.text() for c in shown) + (f" and {phrases.count(more)} more" if more > 0 else "")

    def to_json(self) -> dict[str, Any]:
        """As it travels between processes (JSON has no complex number or tuple)."""
        data = dataclasses.asdict(self)
        if isinstance(self.mean, complex):
            data["mean"] = [self.mean.real, self.mean.imag]
        data["nonfinite_cells"] = [[list(c.index), c.kind] for c in self.nonfinite_cells]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ArrayStats":
        mean = data.get("mean")
        if isinstance(mean, list):
            mean = complex(*mean)
        cells = tuple(
            NonFiniteCell(tuple(int(i) for i in index), str(kind)) for index, kind in data.get("nonfinite_cells") or ()
        )
        return cls(
            data.get("min"),
            data.get("max"),
            mean,
            int(data["nan_count"]),
            int(data["inf_count"]),
            bool(data.get("magnitudes")),
            int(data.get("neg_inf_count") or 0),
            cells,
        )


# Passes over a big array's values work on chunks of this many elements, so that
# conversions (bfloat16, |complex|) and NaN / Inf masks never need full-size copies.
STATS_CHUNK = 1 << 20

# Exact statistics, taken once per immutable value (a jax.Array, a read-only numpy
# array): the same array shows in several frames, in ``locals`` and in opened pytrees.
# A writable numpy array may be changed at the prompt, so it is summarised afresh.
# id(value) -> (a weak reference to the value, its statistics); entries leave with the value.
_stats_cache: dict[int, tuple[weakref.ref, ArrayStats | None]] = {}


def array_stats(value: Any) -> ArrayStats | None:
    """min / max / mean over the finite values, and NaN / Inf counts (cached per value)."""
    key = id(value)
    cached = _stats_cache.get(key)
    if cached is not None and cached[0]() is value:
        return cached[1]
    stats = _exact_stats(value)
    if not _immutable(value):
        return stats
    try:
        ref = weakref.ref(value, functools.partial(_forget_stats, key))
    except TypeError:  # not weakly referenceable: not cached
        return stats
    _stats_cache[key] = (ref, stats)
    return stats


def _immutable(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return not value.flags.writeable
    return isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer)


def _forget_stats(key: int, ref: weakref.ref) -> None:
    entry = _stats_cache.get(key)
    if entry is not None and entry[0] is ref:
        del _stats_cache[key]


def _chunk_converter(dtype: np.dtype) -> Any:
    """What each chunk goes through before its statistics, or None for nothing."""
    if "float" in dtype.name and not np.issubdtype(dtype, np.floating):
        return lambda c: c.astype(np.float32)  # bfloat16 / float8_* from ml_dtypes
    if dtype == np.bool_:
        return lambda c: c.astype(np.int8)
    return None


def _exact_stats(value: Any) -> ArrayStats | None:
    # np.asarray of a host value is a view; of a jax.Array, JAX's own host copy, kept by
    # the array (so taken once per stop). Nothing here holds another full-size array.
    host = guarded(lambda: np.asarray(value), lambda e: None)
    if host is None or host.size == 0:
        return None
    if np.issubdtype(host.dtype, np.complexfloating):
        return _complex_stats(host)
    convert = _chunk_converter(host.dtype)
    if convert is None and not np.issubdtype(host.dtype, np.number):
        return None
    try:
        if convert is None:
            lo, hi, mean = _min_max_mean(host)
            if not np.issubdtype(host.dtype, np.floating):  # integers
                return ArrayStats(float(lo), float(hi), mean, 0, 0)
            # Fast path (no masks): min and max are both finite exactly when the array
            # holds no NaN and no Inf.
            if np.isfinite(lo) and np.isfinite(hi):
                return ArrayStats(float(lo), float(hi), mean, 0, 0)
        return _chunked_stats(host, convert)
    except (TypeError, ValueError):
        return ArrayStats(None, None, None, 0, 0)


def _min_max_mean(host: np.ndarray) -> tuple[Any, Any, float]:
    """min, max and the float64 mean in one pass over memory: the three reductions run
    on each STATS_CHUNK-element piece while it is in the CPU cache (a 16M-element float32
    array: 9 ms, against 14 ms for three whole-array passes). An array that is neither C-
    nor F-contiguous (a strided view) takes the three passes, since cutting it would copy."""
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        return host.min(), host.max(), float(host.mean(dtype=np.float64))
    flat = host.ravel(order="K")  # a view of a contiguous array, in memory order
    lows, highs, total = [], [], 0.0
    for start in range(0, flat.size, STATS_CHUNK):
        piece = flat[start : start + STATS_CHUNK]
        lows.append(piece.min())
        highs.append(piece.max())
        total += float(piece.sum(dtype=np.float64))
    return np.min(lows), np.max(highs), total / flat.size  # np.min: a NaN piece stays NaN


class _FiniteValues:
    """min / max (of ``ordered``: the values, or a complex array's |x|) and the mean,
    gathered over the finite values of one chunk after another."""

    def __init__(self, zero: float | complex) -> None:
        self.lo: float | None = None
        self.hi: float | None = None
        self.total, self.count = zero, 0

    def add(self, values: np.ndarray, ordered: np.ndarray, total: float | complex) -> None:
        low, high = float(ordered.min()), float(ordered.max())
        self.lo = low if self.lo is None else min(self.lo, low)
        self.hi = high if self.hi is None else max(self.hi, high)
        self.total += total
        self.count += values.size

    def result(self) -> tuple[float | None, float | None, float | complex | None]:
        return self.lo, self.hi, (None if self.count == 0 else self.total / self.count)


def _chunked_stats(host: np.ndarray, convert: Any) -> ArrayStats:
    """The statistics in one pass of STATS_CHUNK-element pieces (a contiguous array is
    cut without copying)."""
    flat = host.reshape(-1)  # row-major, so the cells found are in index order
    finite_values = _FiniteValues(0.0)
    nan_count, inf_count, neg_inf_count = 0, 0, 0
    cells: list[NonFiniteCell] = []
    for start in range(0, flat.size, STATS_CHUNK):
        chunk = flat[start : start + STATS_CHUNK]
        if convert is not None:
            chunk = convert(chunk)
        if np.issubdtype(chunk.dtype, np.floating):
            finite = np.isfinite(chunk)
            nans = int(np.isnan(chunk).sum())
            nan_count += nans
            inf_count += int(chunk.size - finite.sum()) - nans
            if nans or not finite.all():
                neg_inf_count += int(np.count_nonzero(chunk == -np.inf))
                _note_cells(cells, chunk, finite, start, host.shape)
                chunk = chunk[finite]
        if chunk.size:
            finite_values.add(chunk, chunk, float(chunk.sum(dtype=np.float64)))
    lo, hi, mean = finite_values.result()
    return ArrayStats(lo, hi, mean, nan_count, inf_count, False, neg_inf_count, tuple(cells))


def _note_cells(
    cells: list[NonFiniteCell], chunk: np.ndarray, finite: np.ndarray, start: int, shape: tuple[int, ...]
) -> None:
    """Add the places of ``chunk``'s non-finite values (its first element is flat index
    ``start``) to ``cells``, up to NONFINITE_LISTED."""
    room = NONFINITE_LISTED - len(cells)
    if room <= 0:
        return
    at = np.flatnonzero(~finite)[:room]
    for position, value in zip(at, chunk[at]):
        kind = "nan" if np.isnan(value) else ("-inf" if value < 0 else "+inf")
        index = np.unravel_index(start + int(position), shape) if shape else ()
        cells.append(NonFiniteCell(tuple(int(i) for i in index), kind))


def _complex_stats(host: np.ndarray) -> ArrayStats:
    """The complex mean, and min / max of |x| (a complex number has no order), in one
    pass of STATS_CHUNK-element pieces: no full-size |x| or mask is ever held."""
    flat = host.reshape(-1)
    finite_values = _FiniteValues(0j)
    nan_count, inf_count = 0, 0
    cells: list[NonFiniteCell] = []
    for start in range(0, flat.size, STATS_CHUNK):
        chunk = flat[start : start + STATS_CHUNK]
        # |x| is NaN where either part is NaN (and no part is infinite), Inf where one is.
        magnitudes = np.abs(chunk)
        finite = np.isfinite(magnitudes)
        nans = int(np.isnan(magnitudes).sum())
        nan_count += nans
        inf_count += int(chunk.size - finite.sum()) - nans
        if nans or not finite.all():
            _note_cells(cells, magnitudes, finite, start, host.shape)
            chunk, magnitudes = chunk[finite], magnitudes[finite]
        if chunk.size:
            finite_values.add(chunk, magnitudes, complex(chunk.sum(dtype=np.complex128)))
    lo, hi, mean = finite_values.result()
    return ArrayStats(lo, hi, mean, nan_count, inf_count, True, 0, tuple(cells))
