"""One-line descriptions of values, with statistics for arrays.

Used by the ``locals`` command and by every backend's locals table, so a
10-million-element array is described by its statistics, never its repr.
"""

from __future__ import annotations

import dataclasses
import functools
import reprlib
import types
import weakref
from typing import Any, Mapping

import jax
import numpy as np

from jaxdbg.engine import program_shardings
from jaxdbg.engine.frames import Unavailable
from jaxdbg.runtime import phrases
from jaxdbg.runtime.guarded_calls import format_exception, guarded

_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = 60
_SHORT_REPR.maxother = 60
_SHORT_REPR.maxlist = _SHORT_REPR.maxtuple = _SHORT_REPR.maxdict = 6


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


@dataclasses.dataclass(frozen=True)
class ValueSummary:
    """What the locals table shows for one name.

    ``sharding`` is the value's layout in the program where the stop knows it
    (``P('x',) on mesh x=8``, ``device 3``), else where the value lives now.
    Views draw :attr:`array_type` and :meth:`stat_parts` rather than re-spelling them.
    """

    name: str
    type_name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    sharding: str | None = None
    stats: ArrayStats | None = None
    preview: str = ""  # short repr for non-arrays, or small arrays
    #: The statistics were left to be taken later (``summarize(..., with_stats=False)``).
    stats_pending: bool = False
    #: A pytree's preview in ``(text, alarming)`` pieces, so a view can mark its NaN / Inf.
    preview_parts: tuple[tuple[str, bool], ...] = ()

    @property
    def is_array(self) -> bool:
        return self.shape is not None

    @property
    def array_type(self) -> str:
        """The one shape notation of every view: ``float32[3,4]`` (``float32[]`` for a scalar)."""
        return array_type(self.shape, self.dtype) if self.shape is not None else ""

    def stat_parts(self) -> list[tuple[str, bool]]:
        """``(text, alarming)`` pieces: min/max/mean (over the finite values, and said so
        when there are others), then NaN / Inf counts (alarming). A scalar has none of
        min/max/mean: its value (the preview) says it all."""
        s = self.stats
        if s is None or self.shape == ():
            return []
        parts = []
        partial = bool(s.nan_count or s.inf_count)
        if s.min is not None:
            if s.magnitudes:
                text = f"mean={_num(s.mean)} |x| min={_num(s.min)} max={_num(s.max)}"
            else:
                text = f"min={_num(s.min)} max={_num(s.max)} mean={_num(s.mean)}"
            parts.append((text + (" of finite values" if partial else ""), False))
        elif partial:
            parts.append(("no finite values", False))
        if s.nan_count:
            parts.append((f"nan={phrases.count(s.nan_count)}", True))
        if s.inf_count:
            parts.append((f"inf={phrases.count(s.inf_count)}", True))
        if s.nonfinite_places():
            parts.append((f"({s.nonfinite_places()})", True))
        return parts

    def details(self) -> str:
        """The summary column: statistics and a preview of tiny arrays, or a short repr."""
        if not self.is_array:
            return self.preview
        return " ".join([text for text, _ in self.stat_parts()] + ([self.preview] if self.preview else []))

    def describe(self) -> str:
        """Plain-text summary: ``float32[3,4] min=… max=… mean=… nan=1``."""
        if not self.is_array:
            return self.preview
        return " ".join(p for p in (self.array_type, self.details()) if p)

    def describe_with_sharding(self) -> str:
        """:meth:`describe`, then an array's layout: ``float32[8] min=… [P('x',) on mesh x=8]``
        (the summary column of every plain locals table)."""
        return self.describe() + (f"  [{self.sharding}]" if self.sharding and self.is_array else "")

    @property
    def nonfinite(self) -> bool:
        """The statistics counted NaN or Inf values (so min / max / mean leave them out)."""
        s = self.stats
        return bool(s is not None and (s.nan_count or s.inf_count))


def _num(x: float | complex | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, complex):
        return f"{x.real:.4g}{x.imag:+.4g}j"
    return f"{x:.4g}"


def array_type(shape: tuple[int, ...], dtype: Any) -> str:
    return f"{dtype}[{','.join(map(str, shape))}]"


def scalar_text(value: Any) -> str:
    """A 0-d array's value as numpy prints its dtype: ``968.4093`` for a float32,
    not the float64 digits of ``float(x)``; ``True``, ``nan``, ``(1+2j)``."""
    return str(np.asarray(value)[()])


def is_array(value: Any) -> bool:
    """Array-like values (jax, numpy, ...). Modules such as ``jnp`` also have ``shape``
    and ``dtype`` attributes (functions), hence the tuple check. A property that
    raises (anything) means "not an array"."""
    if isinstance(value, (type, types.ModuleType)):
        return False
    return guarded(
        lambda: isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype"), lambda e: False
    )


def describe_sharding(value: Any) -> str | None:
    """Where a concrete value lives: ``host``, ``cpu:0`` or ``P('x',) on mesh x=8``."""
    return guarded(lambda: program_shardings.runtime_label(value), lambda e: None)


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


def _chunked_stats(host: np.ndarray, convert: Any) -> ArrayStats:
    """The statistics in one pass of STATS_CHUNK-element pieces (a contiguous array is
    cut without copying)."""
    flat = host.reshape(-1)  # row-major, so the cells found are in index order
    lo = hi = None
    total, finite_count, nan_count, inf_count, neg_inf_count = 0.0, 0, 0, 0, 0
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
        if chunk.size == 0:
            continue
        c_lo, c_hi = float(chunk.min()), float(chunk.max())
        lo = c_lo if lo is None else min(lo, c_lo)
        hi = c_hi if hi is None else max(hi, c_hi)
        total += float(chunk.sum(dtype=np.float64))
        finite_count += chunk.size
    mean = None if finite_count == 0 else total / finite_count
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
    lo = hi = None
    total, finite_count, nan_count, inf_count = 0j, 0, 0, 0
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
        if chunk.size == 0:
            continue
        c_lo, c_hi = float(magnitudes.min()), float(magnitudes.max())
        lo = c_lo if lo is None else min(lo, c_lo)
        hi = c_hi if hi is None else max(hi, c_hi)
        total += complex(chunk.sum(dtype=np.complex128))
        finite_count += chunk.size
    mean = None if finite_count == 0 else total / finite_count
    return ArrayStats(lo, hi, mean, nan_count, inf_count, True, 0, tuple(cells))


def type_name(value: Any) -> str:
    cls = type(value)
    if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
        return "Array"  # what users know jax.Array by (not ArrayImpl)
    return cls.__name__


def _preview(value: Any) -> str:
    return guarded(
        lambda: " ".join(_SHORT_REPR.repr(value).split()),  # one line
        lambda e: f"<repr failed: {format_exception(e)}>",
    )


def summarize(name: str, value: Any, sharding: str | None = None, *, with_stats: bool = True) -> ValueSummary:
    """One row of the locals table. ``sharding``: the program's layout when the stop
    knows it; otherwise where the value lives now is shown. ``with_stats=False`` leaves
    an array's statistics out (``stats_pending``), for a view that takes them only
    when the row is shown. Never raises (user ``__repr__`` / properties may raise
    anything; KeyboardInterrupt excepted)."""
    return guarded(
        lambda: _summarize(name, value, sharding, with_stats),
        lambda e: ValueSummary(name, type(value).__name__, preview=f"<summary failed: {format_exception(e)}>"),
    )


def _summarize(name: str, value: Any, sharding: str | None, with_stats: bool = True) -> ValueSummary:
    kind_name = type_name(value)
    if isinstance(value, Unavailable):  # the reason is the whole point: never cut it
        return ValueSummary(name, kind_name, preview=repr(value))
    if is_array(value):
        shape = tuple(int(d) for d in value.shape)
        size = int(np.prod(shape)) if shape else 1
        preview = ""
        if shape == ():  # a scalar's value, as numpy prints its dtype, in every view
            preview = guarded(lambda: scalar_text(value), lambda e: "")
        elif size <= 8:
            preview = guarded(
                lambda: np.array2string(np.asarray(value), threshold=8, separator=", ", max_line_width=10_000),
                lambda e: "",
            )
        return ValueSummary(
            name,
            kind_name,
            shape,
            str(value.dtype),
            sharding or describe_sharding(value),
            array_stats(value) if with_stats else None,
            preview,
            stats_pending=not with_stats,
        )
    if isinstance(value, (list, tuple, dict)):
        arrays = _array_leaves(value)
        if arrays:
            elements = sum(int(np.prod(a.shape)) for a in arrays)
            return ValueSummary(
                name, kind_name, preview=(f"{len(value)} items; {len(arrays)} arrays, {elements:,} elements")
            )
    return ValueSummary(name, kind_name, preview=_preview(value))


_ELEMENTS_SHOWN = 6


def container_type(value: Any) -> str | None:
    """``whatis`` of a list, tuple or dict: ``list of 3: int, float32[4], str``;
    ``list of 50, each float32[4]``; the first few and how many more when long.
    None for anything else. Never raises."""
    if not isinstance(value, (list, tuple, dict)):
        return None
    return guarded(lambda: _container_type(value), lambda e: None)


def _container_type(value: list | tuple | dict) -> str:
    head = f"{type_name(value)} of {len(value)}"
    if isinstance(value, dict):
        shown = [f"{k!r}: {_element_type(v)}" for k, v in list(value.items())[:_ELEMENTS_SHOWN]]
    else:
        kinds = [_element_type(v) for v in value]
        if len(kinds) > 1 and len(set(kinds)) == 1:
            return f"{head}, each {kinds[0]}"
        shown = kinds[:_ELEMENTS_SHOWN]
    if not shown:
        return head
    more = len(value) - len(shown)
    return f"{head}: {', '.join(shown)}" + (f", ... ({more} more)" if more else "")


def _element_type(value: Any) -> str:
    if is_array(value):
        return array_type(tuple(int(d) for d in value.shape), value.dtype)
    if isinstance(value, (list, tuple, dict)):
        return f"{type_name(value)} of {len(value)}"
    return type_name(value)


def _array_leaves(tree: Any) -> list[Any]:
    return guarded(lambda: [leaf for leaf in jax.tree_util.tree_leaves(tree) if is_array(leaf)], lambda e: [])


def summarize_locals(values: Mapping[str, Any], shardings: dict[str, str] | None = None) -> list[ValueSummary]:
    """Rows for a frame's locals; ``shardings`` maps names to their program layout."""
    shardings = shardings or {}
    return [summarize(name, value, shardings.get(name)) for name, value in values.items() if not name.startswith("__")]
