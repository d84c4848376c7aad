"""What a watch keeps of a value at one hit (:class:`WatchValue`): a real scalar's number
(the panel plots it), an array's statistics (min / max / mean and NaN / Inf counts, as
``locals`` shows), a pytree's summary line with its global norm and, per float leaf, the
leaf's norm and NaN / Inf counts (:class:`LeafNorms`, never a copy of the tree), anything
else its short repr; made from a value, from the NumPy values a program sent, or from the
statistics it sent instead (:mod:`jaxdbg.engine.values.sent_stats`). The watches
themselves and their histories are :mod:`jaxdbg.engine.watches`'."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import numpy as np

from jaxdbg.engine.values import leaf_stats, sent_stats, summaries, tree_hits, tree_summaries
from jaxdbg.runtime.guarded_calls import format_exception, guarded

TEXT_CHARS = 200  # a value's text beyond this is cut


@dataclasses.dataclass(frozen=True, eq=False)
class LeafNorms:
    """A pytree watch's float leaves at one hit, by key path: each leaf's L2 norm over its
    finite values (NaN for a leaf that could not be read) and its NaN / Inf counts.
    ``paths`` is one tuple shared by the hits of one tree structure."""

    paths: tuple[str, ...]
    norms: np.ndarray  # float64, one per path
    nans: np.ndarray  # int64
    infs: np.ndarray  # int64

    def at(self, path: str) -> tuple[float, int, int] | None:
        """``(norm, nans, infs)`` of the leaf at ``path``, None when this hit has none."""
        try:
            i = self.paths.index(path)
        except ValueError:
            return None
        return float(self.norms[i]), int(self.nans[i]), int(self.infs[i])


@dataclasses.dataclass  # not frozen, though never changed: that costs a µs per value, made at each step of a loop
class WatchValue:
    """One watch's value at one stop. ``hit`` is the breakpoint's hit number (None at a
    stop of a disabled breakpoint, which is not a hit)."""

    hit: int | None
    text: str
    number: float | None = None  # a real scalar (a pytree: its global norm), for the plot
    stats: summaries.ArrayStats | None = None  # an array's statistics
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    error: str | None = None
    leaves: LeafNorms | None = None  # a pytree's float leaves

    @property
    def nonfinite(self) -> tuple[int, int] | None:
        """``(NaN, Inf)`` counts of an array or a pytree (all its float leaves)."""
        if self.stats is not None:
            return self.stats.nan_count, self.stats.inf_count
        if self.leaves is not None:
            return int(self.leaves.nans.sum()), int(self.leaves.infs.sum())
        return None


def real_scalar(value: Any) -> float | None:
    """A real number's value (a bool, an int, a float, a 0-d real array); else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if summaries.is_array(value) or isinstance(value, np.generic):
        if np.ndim(value) != 0:
            return None
        host = np.asarray(value)
        if host.dtype.kind in "biuf" or host.dtype.name == "bfloat16":
            return float(host.astype(np.float64))
    return None


def value_of(hit: int | None, result: Any) -> WatchValue:
    """What a watch keeps of ``result`` (user code: a repr or ``__array__`` may raise)."""

    def describe() -> WatchValue:
        number = real_scalar(result)
        if number is not None:
            return WatchValue(hit, summaries.scalar_text(result), number=number)
        if summaries.is_array(result):
            return _array_value(hit, summaries.summarize("", result))
        if tree_summaries.is_tree(result):
            tree = guarded(lambda: _tree_value(hit, result), lambda e: None)
            if tree is not None:
                return tree
        return WatchValue(hit, tree_summaries.short_description(result)[:TEXT_CHARS])

    return guarded(describe, lambda e: WatchValue(hit, "", error=format_exception(e)))


def _array_value(hit: int | None, summary: summaries.ValueSummary) -> WatchValue:
    return WatchValue(
        hit, summary.details()[:TEXT_CHARS], stats=summary.stats, shape=summary.shape, dtype=summary.dtype
    )


def _tree_value(hit: int | None, value: Any) -> WatchValue | None:
    """A pytree's line, its global norm (what the plot draws) and its leaves' norms; None
    for a tree without arrays, whose short repr says more. The tree is walked once."""
    quick = tree_hits.tree_hit(value)  # a tree with float leaves, its structure read once
    if quick is not None:
        return _tree_hit_value(hit, quick)
    found = tree_summaries.leaves(value)
    if not any(leaf.is_array for leaf in found):
        tree = tree_summaries.tree_summary(value)
        return None if tree is None else WatchValue(hit, tree.line()[:TEXT_CHARS])
    # The leaves' statistics first: the line's summary then reads them from cache.
    norms = leaf_norms(value, found)
    kind = tree_summaries.library_kind(value)
    tree = tree_summaries.summarize_leaves(summaries.type_name(value), kind, found)
    return WatchValue(hit, tree.line()[:TEXT_CHARS], number=tree.norm, leaves=norms)


def _tree_hit_value(hit: int | None, quick: tree_hits.TreeHit) -> WatchValue:
    numbers = LeafNorms(quick.paths, quick.norms, quick.nans, quick.infs)
    return WatchValue(hit, quick.summary.line()[:TEXT_CHARS], number=quick.summary.norm, leaves=numbers)


def sent_stats_value(hit: int | None, sent: sent_stats.SentStats) -> WatchValue:
    """What a watch keeps of a local sent as its statistics: a pytree's or an array's."""
    if isinstance(sent, sent_stats.SentArrayStats):
        return _array_value(hit, sent.summary())
    quick = guarded(sent.hit, lambda e: None)
    if quick is None:
        return WatchValue(hit, "", error="its leaves' statistics could not be read")
    return _tree_hit_value(hit, quick)


def leaf_norms(value: Any, listed: list[tree_summaries.Leaf] | None = None) -> LeafNorms | None:
    """Each float array leaf's norm and NaN / Inf counts, by key path; None without any.
    ``listed``: the value's leaves, when they were listed already."""
    is_float: dict[Any, bool] = {}  # per dtype: its name is slow to make, and 10,000 leaves share a few
    floats = []
    for leaf in tree_summaries.leaves(value) if listed is None else listed:
        if leaf.is_array:
            dtype = leaf.value.dtype
            if dtype not in is_float:
                is_float[dtype] = leaf_stats.is_float(dtype)
            if is_float[dtype]:
                floats.append(leaf)
    if not floats:
        return None
    found = leaf_stats.many_leaf_stats([leaf.value for leaf in floats])
    return LeafNorms(
        tuple(leaf.path for leaf in floats),
        np.array([math.sqrt(s.sum_squares) if s is not None else math.nan for s in found], dtype=np.float64),
        np.array([s.nan_count if s is not None else 0 for s in found], dtype=np.int64),
        np.array([s.inf_count if s is not None else 0 for s in found], dtype=np.int64),
    )


# NumPy's number types: a watch on one keeps its number (value_of's, made sooner).
_NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdg")


def numpy_number(value: Any) -> Any:
    """``value`` as a NumPy scalar when it is a number NumPy holds as JAX does (a copy:
    the program's buffer is not ours after the host call); None otherwise."""
    if type(value) is np.ndarray and value.ndim == 0 and value.dtype.kind in "biuf":
        return value[()]
    return value if type(value) in _NUMPY_SCALARS else None


def number_value(hit: int | None, number: Any) -> WatchValue:
    """What :func:`value_of` keeps of a NumPy number, made without its general checks."""
    return WatchValue(hit, str(number), number=float(number))


def numeric_tree(value: Any) -> bool:
    """A pytree whose leaves are all NumPy arrays of booleans, integers or floats."""
    if not tree_summaries.is_tree(value):
        return False
    leaves = jax.tree_util.tree_leaves(value)
    return bool(leaves) and all(
        isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "biuf" for leaf in leaves
    )
