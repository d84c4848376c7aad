"""Watch histories as numpy arrays: ``jaxdbg.watch_history()``, for a notebook to plot
(this process's watches, or those a saved stop kept: ``watch_history(stop=PATH)``).

Each watch's history is one structured array, a record per value kept (the oldest
first), whose fields depend on what the watch holds:

- every watch: ``hit`` (the breakpoint's hit number; -1 at a stop of a disabled
  breakpoint, which is not a hit) and ``value`` (a real scalar's value, a pytree's
  global norm; NaN where the value is none or raised);
- an array: ``min``, ``max``, ``mean`` (over its finite values), ``nan``, ``inf``;
- a pytree: ``nan`` and ``inf`` over its float leaves, then one field per float leaf,
  named by its key path (``'.l1.kernel'``, ``"['bn']['mean']"``): that leaf's norm
  (NaN at hits that kept no per-leaf numbers, see :data:`watches.LEAF_VALUES`).
"""

from __future__ import annotations

import math
import os

import numpy as np

from jaxdbg.engine import saved_stops, watches

_ARRAY_FIELDS = ("min", "max", "mean")


def _real(x: float | complex | None) -> float:
    return math.nan if x is None or isinstance(x, complex) else float(x)


def history_array(watch: watches.Watch) -> np.ndarray:
    """One watch's values as a structured array (see the module's docstring)."""
    values = watch.values
    fields: list[tuple[str, type]] = [("hit", np.int64), ("value", np.float64)]
    arrays = any(v.stats is not None for v in values)
    paths: dict[str, None] = {}  # every leaf seen, first seen first
    for v in values:
        if v.leaves is not None:
            paths.update(dict.fromkeys(v.leaves.paths))
    trees = bool(paths) or any(v.leaves is not None for v in values)
    if arrays:
        fields += [(name, np.float64) for name in _ARRAY_FIELDS]
    if arrays or trees:
        fields += [("nan", np.int64), ("inf", np.int64)]
    fields += [(path, np.float64) for path in paths if path not in ("hit", "value", "nan", "inf")]
    out = np.zeros(len(values), dtype=np.dtype(fields))
    for name, kind in fields[1:]:
        if kind is np.float64:
            out[name] = math.nan
    for i, v in enumerate(values):
        out["hit"][i] = -1 if v.hit is None else v.hit
        if v.number is not None:
            out["value"][i] = v.number
        if v.stats is not None:
            for name in _ARRAY_FIELDS:
                out[name][i] = _real(getattr(v.stats, name))
        nonfinite = v.nonfinite
        if nonfinite is not None:
            out["nan"][i], out["inf"][i] = nonfinite
        if v.leaves is not None:
            for path, norm in zip(v.leaves.paths, v.leaves.norms):
                if path in paths:
                    out[path][i] = norm
    return out


def watch_history(breakpoint: int | None = None, *, stop: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """The values every watch has kept, as numpy arrays keyed by expression.

    Each array holds a record per value, oldest first: ``hit`` and ``value`` for every
    watch (``plt.plot(h["hit"], h["value"])``); an array watch adds ``min``, ``max``,
    ``mean``, ``nan`` and ``inf``; a pytree watch (``value`` is its global norm) adds
    ``nan`` and ``inf`` and each float leaf's norm under its key path
    (``h[".l1.kernel"]``; ``h.dtype.names`` lists them). ``hit`` is -1 at a stop of a
    disabled breakpoint. A value that raised has NaN in its number fields.

    Args:
      breakpoint: only this breakpoint's watches (its number, as ``breakpoints``
        lists it). By default every breakpoint's; an expression watched at several
        breakpoints is keyed ``"EXPR @ N"`` for each.
      stop: a stop saved with ``save PATH``: the watches it kept (those of its
        breakpoint, per-leaf norms included), read from the file as
        :func:`jaxdbg.open_stop` reads it, instead of this process's.

    Returns:
      ``{expression: structured numpy array}``, in the order the watches were set.
    """
    book = watches.LIVE if stop is None else saved_stops.load(os.fspath(stop)).watch_book()
    numbers = [breakpoint] if breakpoint is not None else book.numbers()
    found = [(number, w) for number in numbers for w in book.watches(number)]
    seen: dict[str, int] = {}
    for _, w in found:
        seen[w.expression] = seen.get(w.expression, 0) + 1
    return {
        (w.expression if seen[w.expression] == 1 else f"{w.expression} @ {number}"): history_array(w)
        for number, w in found
    }
