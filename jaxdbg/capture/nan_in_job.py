"""Which device of a ``jax.distributed`` job made a sharded ``jit``'s NaN (or Inf).

In a job JAX's own checks, and their op-by-op re-run that names the device in a single
process, stay off (:mod:`nan_watch`). checkify's checks find the primitive and its
line, but under a sharded ``jit`` no device. So the program runs once more, on the
same inputs, up to that primitive (its first equation at that line, in program order)
and returns the primitive's output, laid out over the devices as XLA partitions it.
Each process looks at its own shards of it, and the processes gather which devices
hold the value: every process learns the same devices, and only the one holding the
first of them stops.

Every process of the job runs this alike (each found the same failure), so the
program's collectives and the gathering meet. Where the primitive sits inside a loop,
a cond or a map, or the program cannot be traced again, no device is named.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from jaxdbg.capture import checkify_errors, nan_location
from jaxdbg.internals import jax_nan_checks, jax_programs
from jaxdbg.runtime import jax_routes


def devices_in_job(
    fun: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    primitive: str,
    where: checkify_errors.SourceFrame | None,
    kind: str,
) -> tuple[int, ...]:
    """The JAX ids of the devices whose shard of ``primitive``'s output at ``where``
    holds a ``kind`` (``"nan"`` / ``"inf"``), in the job's device order; () when
    that cannot be said."""
    if where is None:
        return ()
    try:
        program = jax.make_jaxpr(fun)(*args, **kwargs)
    except Exception:  # a function make_jaxpr cannot trace (static arguments): say nothing
        return ()
    path = jax_programs.path_to_equation(program, nan_location.made_at(primitive, where))
    if path is None:
        return ()
    flat = jax.tree_util.tree_leaves((args, kwargs))
    jit = jax_routes.JIT.original()  # not the watched one: its checks are this module's
    with nan_location.without_jax_nan_checks():  # JAX's re-run would leave collectives waiting
        outs = jit(lambda *values: jax_programs.run_up_to(program, path, list(values)))(*flat)
    order = [d.id for d in jax.devices()]
    local = np.zeros(len(order), dtype=np.int32)
    for out in outs:
        for shard in getattr(out, "addressable_shards", ()):
            if jax_nan_checks.holds_nonfinite(shard.data, kind):
                local[order.index(shard.device.id)] = 1
    from jax.experimental import multihost_utils

    held = np.asarray(multihost_utils.process_allgather(local)).reshape(-1, len(order)).any(axis=0)
    return tuple(order[i] for i in np.flatnonzero(held))


def held_here(device: int) -> bool:
    return any(d.id == device for d in jax.local_devices())
