"""The statistics of a pytree's float leaves: sum of squares, largest ``|x|``, NaN / Inf.

What a pytree's row adds up (its global norm, its max, the first leaf holding a NaN):
taken once per immutable leaf (cached, as the same parameter shows in several frames,
rows and opened nodes), small leaves read together in one host transfer.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import weakref
from typing import Any

import jax
import numpy as np

from jaxdbg.engine.values import array_statistics, summaries


@dataclasses.dataclass(frozen=True)
class LeafStats:
    """A float leaf's sum of squares and largest ``|x|`` over its finite values, and its
    NaN / Inf counts; None for a leaf without numbers (a PRNG key, an opaque value)."""

    sum_squares: float
    max_abs: float | None
    nan_count: int
    inf_count: int


_FLOAT_DTYPES: dict[Any, bool] = {}  # a dtype's name is slow to make: read once per dtype


def is_float(dtype: Any) -> bool:
    try:
        answer = _FLOAT_DTYPES.get(dtype)
    except TypeError:  # not hashable: its name each time
        return _named_float(dtype)
    if answer is None:
        answer = _named_float(dtype)
        if len(_FLOAT_DTYPES) < 1_000:
            _FLOAT_DTYPES[dtype] = answer
    return answer


def _named_float(dtype: Any) -> bool:
    name = getattr(dtype, "name", str(dtype))
    return "float" in name or "complex" in name


_leaf_cache: dict[int, tuple[weakref.ref, LeafStats | None]] = {}


def leaf_stats(value: Any) -> LeafStats | None:
    """The statistics of one float array leaf (cached per immutable jax.Array, as the
    same parameter shows in several frames, rows and opened nodes); None otherwise."""
    if not summaries.is_array(value) or not is_float(value.dtype):
        return None
    return many_leaf_stats([value])[0]


def _cached(value: Any) -> tuple[bool, LeafStats | None]:
    cached = _leaf_cache.get(id(value))
    if cached is not None and cached[0]() is value:
        return True, cached[1]
    return False, None


def _remember(value: Any, stats: LeafStats | None) -> None:
    if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
        key = id(value)
        try:
            _leaf_cache[key] = (weakref.ref(value, functools.partial(_forget, key)), stats)
        except TypeError:
            pass


#: Leaves up to this many elements are read together: one host transfer for all of
#: them and one numpy pass per dtype (10,000 small leaves: ~0.1 s, not ~1.5 s).
SMALL_LEAF = 1 << 16


def many_leaf_stats(values: list[Any]) -> list[LeafStats | None]:
    """:func:`leaf_stats` of float array leaves, small ones read together."""
    out: list[LeafStats | None] = [None] * len(values)
    small: dict[Any, list[int]] = {}  # dtype -> positions
    for i, value in enumerate(values):
        hit, stats = _cached(value)
        if hit:
            out[i] = stats
        elif 0 < math.prod(value.shape) <= SMALL_LEAF:
            small.setdefault(value.dtype, []).append(i)
        else:
            out[i] = _one_leaf_stats(value)
            _remember(value, out[i])
    for positions in small.values():
        group = [values[i] for i in positions]
        found: list[LeafStats | None]
        try:
            found = list(_batched_stats(group))
        except Exception:  # an array that cannot be read: no statistics, the row stays
            found = [None] * len(group)
        for i, stats in zip(positions, found):
            out[i] = stats
            _remember(values[i], stats)
    return out


def _one_leaf_stats(value: Any) -> LeafStats | None:
    try:
        return _float_stats(np.asarray(value))
    except Exception:  # an array that cannot be read: no statistics, the row stays
        return None


@dataclasses.dataclass(frozen=True, eq=False)
class StatsArrays:
    """The statistics of several float leaves, one array each, the leaves in order."""

    sum_squares: np.ndarray  # float64; NaN for a leaf that could not be read
    max_abs: np.ndarray  # float64; NaN: no finite value, or not read
    nans: np.ndarray  # int64
    infs: np.ndarray  # int64
    #: Known to hold no NaN or Inf, every leaf read (what a gradient's leaves are, as a rule).
    all_finite: bool = False


def _batched_stats(group: list[Any]) -> list[LeafStats | None]:
    """One dtype's small leaves' :class:`LeafStats` (see :func:`_batched_arrays`)."""
    found = _batched_arrays(group)
    squares, tops, nans, infs = found.sum_squares, found.max_abs, found.nans, found.infs
    return [
        LeafStats(sq, None if math.isnan(top) else top, nan, inf)
        for sq, top, nan, inf in zip(squares.tolist(), tops.tolist(), nans.tolist(), infs.tolist())
    ]


def _batched_arrays(group: list[Any], starts: list[int] | None = None) -> StatsArrays:
    """One dtype's small leaves: concatenated, then reduced per leaf (``reduceat``), into
    the sums of squares and largest ``|x|`` of their finite values (NaN: none) and their
    NaN and Inf counts. Written for few numpy calls: a pytree watch takes it at every
    passed stop. ``starts``: where each leaf starts in the concatenation, when known."""
    hosts = [np.asarray(h).reshape(-1) for h in _on_host(group)]
    flat = np.concatenate(hosts) if len(hosts) > 1 else hosts[0]
    if flat.dtype.kind == "c":
        flat = np.abs(flat)
    elif flat.dtype.kind != "f":  # bfloat16 / float8 from ml_dtypes
        flat = flat.astype(np.float32)
    if starts is None:
        starts = small_leaf_starts([h.size for h in hosts])
    with np.errstate(over="ignore"):  # a float64 leaf's squares may overflow: inf, as summed
        squares = np.add.reduceat(np.square(flat, dtype=np.float64), starts)
    if np.isfinite(squares).all():  # no NaN / Inf anywhere (the common case): no masks
        tops = np.maximum.reduceat(np.abs(flat), starts).astype(np.float64)
        none = np.zeros(len(hosts), dtype=np.int64)
        return StatsArrays(squares, tops, none, none, all_finite=True)
    finite = np.isfinite(flat)
    counts = np.array([h.size for h in hosts])
    nans = np.add.reduceat(np.isnan(flat).astype(np.int64), starts)
    infs = counts - np.add.reduceat(finite.astype(np.int64), starts) - nans
    flat = np.where(finite, flat, 0)
    with np.errstate(over="ignore"):
        squares = np.add.reduceat(np.square(flat, dtype=np.float64), starts)
    tops = np.maximum.reduceat(np.abs(flat), starts).astype(np.float64)
    tops[nans + infs >= counts] = np.nan  # no finite value: no largest one
    return StatsArrays(squares, tops, nans, infs)


def as_arrays(stats: list[LeafStats | None]) -> StatsArrays:
    """:func:`many_leaf_stats`'s list as :class:`StatsArrays`."""
    return StatsArrays(
        np.array([s.sum_squares if s is not None else np.nan for s in stats], dtype=np.float64),
        np.array([s.max_abs if s is not None and s.max_abs is not None else np.nan for s in stats], dtype=np.float64),
        np.array([s.nan_count if s is not None else 0 for s in stats], dtype=np.int64),
        np.array([s.inf_count if s is not None else 0 for s in stats], dtype=np.int64),
    )


def small_leaf_starts(sizes: list[int]) -> list[int]:
    """Where each of small leaves of these sizes starts when they are read together."""
    return list(itertools.accumulate(sizes[:-1], initial=0))


def small_leaves_arrays(values: list[Any], starts: list[int]) -> StatsArrays:
    """The statistics of small float leaves of one dtype (each at most
    :data:`SMALL_LEAF` elements, none empty), whose ``starts`` are known: one read."""
    try:
        return _batched_arrays(values, starts)
    except Exception:  # an array that cannot be read: no statistics, the row stays
        return fresh_stats_arrays(values)


def fresh_stats_arrays(values: list[Any]) -> StatsArrays:
    """The statistics of float array leaves new at every call (a watch's, at each stop):
    no cache, and no object per leaf. Small leaves of one dtype are read together."""
    n = len(values)
    out = StatsArrays(np.full(n, np.nan), np.full(n, np.nan), np.zeros(n, np.int64), np.zeros(n, np.int64))
    small: dict[Any, list[int]] = {}  # dtype -> positions
    for i, value in enumerate(values):
        if 0 < math.prod(value.shape) <= SMALL_LEAF:
            small.setdefault(value.dtype, []).append(i)
        elif (stats := _one_leaf_stats(value)) is not None:
            out.sum_squares[i], out.nans[i], out.infs[i] = stats.sum_squares, stats.nan_count, stats.inf_count
            out.max_abs[i] = np.nan if stats.max_abs is None else stats.max_abs
    for positions in small.values():
        try:
            found = _batched_arrays([values[i] for i in positions])
        except Exception:  # an array that cannot be read: no statistics, the row stays
            continue
        if len(positions) == n:  # one group: the whole of it (the common case)
            return found
        for column, part in zip(
            (out.sum_squares, out.max_abs, out.nans, out.infs),
            (found.sum_squares, found.max_abs, found.nans, found.infs),
        ):
            column[positions] = part
    return out


def _on_host(group: list[Any]) -> list[Any]:
    """The leaves' values in host memory. A CPU array's is read as it is: ``device_get``
    (which starts every copy before waiting on any, for accelerators) costs ~25 us a leaf
    more, most of a pytree watch's cost at a passed stop. Others go through it together."""
    if _in_host_memory(group[0]) and all(type(leaf) is type(group[0]) for leaf in group):
        return group  # one kind of array, on the host: as a rule the whole group is there
    elsewhere = [i for i, leaf in enumerate(group) if not _in_host_memory(leaf)]
    if not elsewhere:
        return group
    fetched = jax.device_get([group[i] for i in elsewhere])
    hosts = list(group)
    for i, host in zip(elsewhere, fetched):
        hosts[i] = host
    return hosts


def _in_host_memory(value: Any) -> bool:
    """A numpy array, or a jax.Array whose every shard is on a CPU device."""
    if isinstance(value, np.ndarray):
        return True
    try:
        return all(device.platform == "cpu" for device in value.sharding.device_set)
    except Exception:  # no sharding to ask: device_get decides
        return False


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _leaf_cache.get(key)
    if entry is not None and entry[0] is ref:
        del _leaf_cache[key]


def _float_stats(host: np.ndarray) -> LeafStats:
    flat = host.reshape(-1)
    total, top, nans, infs = 0.0, None, 0, 0
    for start in range(0, flat.size, array_statistics.STATS_CHUNK):  # no full-size float64 copy
        chunk = flat[start : start + array_statistics.STATS_CHUNK]
        if np.iscomplexobj(chunk):
            chunk = np.abs(chunk)
        elif not np.issubdtype(chunk.dtype, np.floating):  # bfloat16 / float8 from ml_dtypes
            chunk = chunk.astype(np.float32)
        if chunk.size == 0:
            continue
        biggest = float(np.max(np.abs(chunk)))
        if not math.isfinite(biggest):  # NaN or Inf somewhere: count them, keep the rest
            finite = np.isfinite(chunk)
            chunk_nans = int(np.isnan(chunk).sum())
            nans += chunk_nans
            infs += int(chunk.size - finite.sum()) - chunk_nans
            chunk = chunk[finite]
            if chunk.size == 0:
                continue
            biggest = float(np.max(np.abs(chunk)))
        with np.errstate(over="ignore"):  # a float64 leaf's squares may overflow: inf, as summed
            total += float(np.sum(np.square(chunk, dtype=np.float64)))
        top = biggest if top is None else max(top, biggest)
    return LeafStats(total, top, nans, infs)


# -- the summary -----------------------------------------------------------------------
