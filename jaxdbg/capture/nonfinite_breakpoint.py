"""``breakpoint_on_nonfinite``: stop where any leaf of the given arrays holds NaN or Inf,
with the banner naming each such leaf by the caller's variable and its counts."""

from __future__ import annotations

import functools
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.capture.breakpoints import place_breakpoint

# How many frames sit between the user's call and place_breakpoint (the public function).
_CALLER = 1


def _is_float(leaf: Any) -> bool:
    try:
        return bool(jnp.issubdtype(jnp.result_type(leaf), jnp.inexact))
    except TypeError:
        return False


def _leaf_names(arrays: tuple, caller_locals: dict[str, Any]) -> list[str]:
    """Name each leaf after the caller's variable when possible: ``grads['w']``."""
    by_id = {id(v): k for k, v in caller_locals.items()}
    names = []
    for path, _ in jax.tree_util.tree_flatten_with_path(arrays)[0]:
        position, rest = path[0].idx, path[1:]
        base = by_id.get(id(arrays[position]), f"argument {position}")
        names.append(base + jax.tree_util.keystr(rest))
    return names


def _nonfinite_reason(names: list[str], values: list[Any]) -> str:
    found = []
    for name, value in zip(names, values):
        host = np.asarray(value)
        if not np.issubdtype(host.dtype, np.inexact):
            host = host.astype(np.float32)  # bfloat16 and friends
        nan, inf = int(np.isnan(host).sum()), int(np.isinf(host).sum())
        if nan or inf:
            counts = " and ".join(c for c in (f"{nan} NaN" if nan else "", f"{inf} Inf" if inf else "") if c)
            found.append(f"{name} ({counts})")
    return ("non-finite values in " + ", ".join(found)) if found else "non-finite values"


def breakpoint_on_nonfinite(
    *arrays: Any,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **backend_options: Any,
) -> Any:
    """Stop when any leaf of ``arrays`` holds NaN or Inf; the banner says which and how many."""
    names = _leaf_names(arrays, sys._getframe(1).f_locals)
    leaves = jax.tree_util.tree_leaves(arrays)
    floats = [(n, l) for n, l in zip(names, leaves) if _is_float(l)]
    if not floats:
        return token
    pred = functools.reduce(jnp.logical_or, [~jnp.all(jnp.isfinite(l)) for _, l in floats])
    float_names = [n for n, _ in floats]
    return place_breakpoint(
        pred=pred,
        skip=_CALLER,
        backend=backend,
        filter_frames=filter_frames,
        num_frames=num_frames,
        ordered=ordered,
        token=token,
        options=backend_options,
        reason=functools.partial(_nonfinite_reason, float_names),
        reason_operands=[l for _, l in floats],
    )
