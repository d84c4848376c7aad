"""A local's statistics as a program computed them and sent them to the host, in place of
its values: what a watch keeps of a big pytree or array at a passed stop.

The program sends a few small arrays (jaxdbg.capture.staging computes them where the
values are); these classes make of them what the host would have taken from the values
themselves (a tree's :class:`~jaxdbg.engine.values.tree_hits.TreeHit`, an array's
:class:`~jaxdbg.engine.values.summaries.ArrayStats`), so a watch's history reads the same.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxdbg.engine.values import leaf_stats, summaries, tree_hits


@dataclasses.dataclass(frozen=True, eq=False)
class SentTreeStats:
    """A pytree's float leaves' statistics: ``skeleton`` is the tree with a
    ``jax.ShapeDtypeStruct`` for each array leaf."""

    skeleton: Any
    stats: leaf_stats.StatsArrays

    def hit(self) -> tree_hits.TreeHit | None:
        return tree_hits.hit_of_stats(self.skeleton, self.stats)


@dataclasses.dataclass(frozen=True, eq=False)
class SentArrayStats:
    """A real float array's min / max / mean over its finite values, its NaN / Inf counts
    and where its first NaN / Inf are."""

    shape: tuple[int, ...]
    dtype: str
    stats: summaries.ArrayStats

    def summary(self) -> summaries.ValueSummary:
        """Its row, as :func:`summaries.summarize` makes it of the values (of an array
        this big, with no preview)."""
        return summaries.ValueSummary("", "Array", self.shape, self.dtype, None, self.stats)


#: What a local sent as statistics arrives as.
SentStats = SentTreeStats | SentArrayStats


def tree_received(skeleton: Any, sizes: np.ndarray, magnitudes: Any, counts: Any) -> SentTreeStats:
    """A tree's statistics as they arrive: per float leaf, its largest finite ``|x|`` and
    the sum of its finite values' squares over that one's square (``magnitudes``), and
    its NaN and Inf counts (``counts``); ``sizes``: each leaf's elements."""
    magnitudes = np.asarray(magnitudes, dtype=np.float64).reshape(-1, 2)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1, 2)
    tops, scaled = magnitudes[:, 0].copy(), magnitudes[:, 1]
    nans, infs = counts[:, 0].copy(), counts[:, 1].copy()
    finite = not (nans.any() or infs.any())
    if not finite:
        tops[nans + infs >= sizes] = np.nan  # no finite value: no largest one
    squares = scaled * magnitudes[:, 0] * magnitudes[:, 0]
    return SentTreeStats(skeleton, leaf_stats.StatsArrays(squares, tops, nans, infs, all_finite=finite))


def array_received(
    shape: tuple[int, ...], dtype: str, extremes: Any, counts: Any, places: Any, values: Any
) -> SentArrayStats:
    """An array's statistics as they arrive: its finite values' min, max and sum
    (``extremes``); its NaN, Inf, -Inf and finite counts (``counts``); the flat indices of
    its first non-finite values (``places``, -1 past them) and those values."""
    low, high, total = (float(v) for v in np.asarray(extremes, dtype=np.float64).reshape(3))
    nans, infs, negative, finite = (int(c) for c in np.asarray(counts, dtype=np.int64).reshape(4))
    cells = tuple(
        summaries.NonFiniteCell(
            tuple(int(i) for i in np.unravel_index(int(place), shape)) if shape else (),
            "nan" if np.isnan(value) else ("-inf" if value < 0 else "+inf"),
        )
        for place, value in zip(np.asarray(places).reshape(-1), np.asarray(values, dtype=np.float64).reshape(-1))
        if place >= 0
    )
    if not finite:
        return SentArrayStats(shape, dtype, summaries.ArrayStats(None, None, None, nans, infs, False, negative, cells))
    stats = summaries.ArrayStats(low, high, total / finite, nans, infs, False, negative, cells)
    return SentArrayStats(shape, dtype, stats)
