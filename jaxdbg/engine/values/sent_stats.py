"""A local's statistics as a program computed them and sent them to the host, in place of
its values: what a watch keeps of a big pytree or array at a passed stop.

The program sends a few small arrays, computed where the values are
(:func:`leaf_stats_in_program`, :func:`array_stats_in_program`, which
jaxdbg.capture.staging stages); these classes make of them what the host would have taken from the values
themselves (a tree's :class:`~jaxdbg.engine.values.tree_hits.TreeHit`, an array's
:class:`~jaxdbg.engine.values.summaries.ArrayStats`), so a watch's history reads the same.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.engine import program_shardings
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


# -- computed in the program ------------------------------------------------------------


def leaf_stats_in_program(leaves: list) -> list:
    """Per float leaf: its largest finite ``|x|`` and the sum of its finite values' squares
    divided by that one's square (so no float32 sum overflows); its NaN and Inf counts."""
    magnitudes, counts = [], []
    for leaf in leaves:
        x = jnp.abs(leaf) if jnp.iscomplexobj(leaf) else leaf
        x = x.astype(jnp.promote_types(x.dtype, jnp.float32))  # bfloat16 / float16 read in float32
        finite = jnp.isfinite(x)
        nans = jnp.sum(jnp.isnan(x), dtype=jnp.int32)
        infs = jnp.int32(x.size) - jnp.sum(finite, dtype=jnp.int32) - nans
        kept = jnp.where(finite, jnp.abs(x), 0)
        top = jnp.max(kept, initial=0)
        magnitudes.append(jnp.stack([top, jnp.sum(jnp.square(kept / jnp.where(top > 0, top, 1)))]))
        counts.append(jnp.stack([nans, infs]))
    common = jnp.result_type(*magnitudes)
    return [jnp.stack([m.astype(common) for m in magnitudes]), jnp.stack(counts)]


def array_stats_in_program(value: Any) -> list:
    """A real float array's finite values' min, max and sum; its NaN, Inf, -Inf and finite
    counts; the flat indices of its first NONFINITE_LISTED non-finite values (-1 past
    them, found only where there are some) and those values."""
    x = value.astype(jnp.promote_types(value.dtype, jnp.float32))  # bfloat16 / float16 in float32
    finite = jnp.isfinite(x)
    nans = jnp.sum(jnp.isnan(x), dtype=jnp.int32)
    count = jnp.sum(finite, dtype=jnp.int32)
    infs = jnp.int32(x.size) - count - nans
    negative = jnp.sum(x == -jnp.inf, dtype=jnp.int32)
    low = jnp.min(jnp.where(finite, x, jnp.inf))
    high = jnp.max(jnp.where(finite, x, -jnp.inf))
    extremes = jnp.stack([low, high, jnp.sum(jnp.where(finite, x, 0))])
    listed = summaries.NONFINITE_LISTED

    def places(x):  # the first ones: the top scores, where a non-finite value scores minus its index
        flat = x.reshape(-1)  # flattened only here, where there are some: a sharded one may move
        score = jnp.where(jnp.isfinite(flat), -flat.size, -jnp.arange(flat.size, dtype=jnp.int32))
        scores, at = jax.lax.top_k(score, listed)
        return jnp.where(scores > -flat.size, at, -1).astype(jnp.int32), flat[at]

    def none(x):  # varying as x does under shard_map, as the other branch's are
        return tuple(
            program_shardings.varying_as(v, x) for v in (jnp.full((listed,), -1, jnp.int32), jnp.zeros(listed, x.dtype))
        )

    at, found = jax.lax.cond(nans + infs > 0, places, none, x)
    return [extremes, jnp.stack([nans, infs, negative, count]), at, found]
