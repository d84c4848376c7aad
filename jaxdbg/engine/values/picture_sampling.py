"""Which rows and columns of a slice an array picture keeps when the slice is bigger
than the picture: a strided or an edge sample, with every row and column that holds a NaN
or an Inf swapped in for the nearest sampled one, so that no sample hides one."""

from __future__ import annotations

import enum

import numpy as np

from jaxdbg.engine.values import summaries


class Sampling(str, enum.Enum):
    """How a slice bigger than the picture was cut down."""

    STRIDED = "strided"  # every k-th row / column, the first and the last kept
    EDGES = "edges"  # the first and the last rows / columns, the middle left out

    def __str__(self) -> str:
        return self.value


def kept_positions(n: int, side: int, sampling: Sampling) -> np.ndarray:
    """The kept positions of an axis of ``n`` when at most ``side`` may stay."""
    if n <= side:
        return np.arange(n)
    if sampling is Sampling.EDGES:
        half = side // 2
        return np.concatenate([np.arange(half), np.arange(n - half, n)])
    return np.unique(np.linspace(0, n - 1, side).round().astype(np.int64))


def slice_of(host: np.ndarray, shown: tuple[int | None, int], index: tuple[int | None, ...]) -> np.ndarray:
    """The shown slice as a (rows, cols) view of the host copy."""
    if host.ndim <= 1:
        return host.reshape(1, -1)
    row_axis, col_axis = shown
    whole = host[tuple(i if i is not None else slice(None) for i in index)]
    return whole if row_axis < col_axis else whole.T  # type: ignore[operator]


def nonfinite_in_slice(
    host: np.ndarray,
    shown: tuple[int | None, int],
    index: tuple[int | None, ...],
    limit: int,
    stats: summaries.ArrayStats,
) -> tuple[np.ndarray, int]:
    """The (row, col) of the slice's first ``limit`` NaN / Inf cells, and how many it holds."""
    if stats.nonfinite_count <= len(stats.nonfinite_cells):  # the statistics know every place
        row_axis, col_axis = shown
        here = [
            c.index
            for c in stats.nonfinite_cells
            if all(i is None or c.index[axis] == i for axis, i in enumerate(index))
        ]
        places = [(0 if row_axis is None else at[row_axis], at[col_axis]) for at in here]
        return np.array(places[:limit], np.int64).reshape(-1, 2), len(places)
    part = slice_of(host, shown, index)  # else one pass over the slice finds them
    try:
        bad = ~np.isfinite(part)
    except TypeError:  # an ml_dtypes float numpy's isfinite does not take
        bad = ~np.isfinite(part.astype(np.float32))
    return np.argwhere(bad)[:limit], int(np.count_nonzero(bad))


def keep_cells(rows: np.ndarray, cols: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kept rows and columns with the rows and columns of ``cells`` swapped in, each
    for the nearest kept one not itself holding such a cell (so the picture keeps its size
    and its place for everything else)."""
    rows, cols = rows.copy(), cols.copy()
    fixed_rows: set[int] = set()
    fixed_cols: set[int] = set()
    for r, c in cells:
        if _swap_in(rows, fixed_rows, int(r)):
            _swap_in(cols, fixed_cols, int(c))
    return np.sort(rows), np.sort(cols)


def _swap_in(kept: np.ndarray, fixed: set[int], wanted: int) -> bool:
    """Make ``wanted`` one of ``kept`` (in place), replacing the nearest position not in
    ``fixed``; False when every kept position is already fixed."""
    if wanted in fixed:
        return True
    if not (kept == wanted).any():
        for j in np.argsort(np.abs(kept - wanted), kind="stable"):
            if int(kept[j]) not in fixed:
                kept[j] = wanted
                break
        else:
            return False
    fixed.add(wanted)
    return True
