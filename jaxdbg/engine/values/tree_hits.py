"""What a pytree watch keeps at each hit, in one pass: the tree's summary line, its global
norm, and each float leaf's norm and NaN / Inf counts.

A watch on ``grads`` reads a tree of one structure at every passed stop of a training
loop. Everything but the numbers (key paths, kinds, dtypes, sizes) is read once per
structure and kept here; each hit then flattens the tree, takes its float leaves'
statistics in one numpy pass per dtype, and adds them up. A screened stop may have had
the program compute those statistics instead, and send them without the leaves
(:func:`hit_of_stats`; jaxdbg.engine.values.sent_stats): they add up the same way.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any

import jax
import numpy as np

from jaxdbg.engine.values import leaf_stats, summaries, tree_summaries


@dataclasses.dataclass(frozen=True, eq=False)
class TreeHit:
    """A tree's summary at one hit, and its float leaves' numbers by key path."""

    summary: tree_summaries.TreeSummary
    paths: tuple[str, ...]  # one tuple per structure, shared by its hits
    norms: np.ndarray  # float64; NaN for a leaf that could not be read
    nans: np.ndarray  # int64
    infs: np.ndarray  # int64


@dataclasses.dataclass(frozen=True)
class _Layout:
    """What a structure says without its numbers."""

    structure: tree_summaries.TreeSummary  # no statistics
    floats: tuple[int, ...]  # the float array leaves' positions among the flattened leaves
    paths: tuple[str, ...]  # their key paths
    #: Where each float leaf starts when they are read together, if they can be (one
    #: dtype, each small): a gradient tree's, as a rule.
    starts: list[int] | None


_LAYOUTS: dict[Any, _Layout | None] = {}  # None: a structure read the slow way each time
_MAX_LAYOUTS = 64
_LAYOUTS_LOCK = threading.Lock()
_UNKNOWN = object()


def tree_hit(value: Any) -> TreeHit | None:
    """``value``'s :class:`TreeHit`; None for a tree without float array leaves."""
    layout, flat = _layout_of(value)
    if layout is None:
        return None
    values = [flat[i] for i in layout.floats]
    if layout.starts is not None:
        stats = leaf_stats.small_leaves_arrays(values, layout.starts)
    else:
        stats = leaf_stats.fresh_stats_arrays(values)
    return _added_up(layout, stats)


def hit_of_stats(value: Any, stats: leaf_stats.StatsArrays) -> TreeHit | None:
    """The :class:`TreeHit` of a tree whose float leaves' statistics were taken elsewhere
    (``stats``, in :func:`float_leaf_positions`' order); ``value`` need only have their
    shapes and dtypes (a ``jax.ShapeDtypeStruct`` for each array leaf)."""
    layout, _ = _layout_of(value)
    return None if layout is None else _added_up(layout, stats)


def float_leaf_positions(value: Any) -> tuple[int, ...]:
    """The positions, among ``value``'s flattened leaves, of the float array leaves a
    :class:`TreeHit` reads, in its order (none for a tree it cannot read so)."""
    layout, _ = _layout_of(value)
    return () if layout is None else layout.floats


def _added_up(layout: _Layout, stats: leaf_stats.StatsArrays) -> TreeHit:
    paths = layout.paths
    summary = tree_summaries.add_up(layout.structure, stats, lambda i: paths[i])
    return TreeHit(summary, paths, np.sqrt(stats.sum_squares), stats.nans, stats.infs)


def _layout_of(value: Any) -> tuple[_Layout | None, list[Any]]:
    """``value``'s layout (read once per structure) and its flattened leaves."""
    flat, treedef = jax.tree_util.tree_flatten(value)
    key: Any = None
    layout: Any = _UNKNOWN
    try:  # the same structure with the same leaf types, shapes and dtypes
        key = (treedef, tuple((type(x), getattr(x, "shape", None), getattr(x, "dtype", None)) for x in flat))
        layout = _LAYOUTS.get(key, _UNKNOWN)
    except TypeError:  # a node's data or a leaf's shape cannot be hashed: read each time
        key = None
    if layout is _UNKNOWN:
        layout = _layout(value, flat)
        if key is not None:
            with _LAYOUTS_LOCK:  # pmap's stops record their watches on several threads
                if len(_LAYOUTS) >= _MAX_LAYOUTS:
                    _LAYOUTS.pop(next(iter(_LAYOUTS)), None)
                _LAYOUTS[key] = layout
    return layout, flat


def _layout(value: Any, flat: list[Any]) -> _Layout | None:
    found = tree_summaries.leaves(value)
    if len(found) != len(flat) or any(leaf.value is not x for leaf, x in zip(found, flat)):
        return None  # its leaves are not the flattened ones, one for one
    kind = tree_summaries.library_kind(value)
    structure, floats = tree_summaries.leaf_structure(summaries.type_name(value), kind, found)
    if not floats:
        return None
    float_ids = {id(leaf) for leaf in floats}
    sizes = [math.prod(leaf.value.shape) for leaf in floats]
    together = len({leaf.value.dtype for leaf in floats}) == 1 and all(0 < n <= leaf_stats.SMALL_LEAF for n in sizes)
    return _Layout(
        structure,
        tuple(i for i, leaf in enumerate(found) if id(leaf) in float_ids),
        tuple(leaf.path for leaf in floats),
        leaf_stats.small_leaf_starts(sizes) if together else None,
    )
