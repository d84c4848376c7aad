"""Which device ran one call of a ``partitioned=True`` print under a sharded ``jit``.

Under automatic SPMD the host callback is told nothing about its device, and XLA
refuses ``PartitionId`` there. What each device's partitioned call does receive
is that device's own shard of every operand. So one tiny extra operand, the
positions ``0..n-1`` of the printed value's mesh split over all its axes (one
int per device), tells each call its position in the mesh. The compiled sharding
of that operand, recorded when XLA partitions the program (JAX's
``inspect_array_sharding``), maps a position to its device. The printed value
itself is never moved.

Where JAX does not say which mesh a value is on, or the program was compiled on
different devices for the same trace, the row carries no device, never a guess.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Iterable

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.engine import program_shardings
from jaxdbg.runtime import jax_routes


class ShardDevices:
    """Position in the mesh -> device id, learned from the compiled program."""

    def __init__(self, mesh_shape: tuple[int, ...]) -> None:
        self._mesh_shape = mesh_shape
        self._device_at: dict[int, int] | None = None
        self._ambiguous = False
        self._lock = threading.Lock()

    def _compiled(self, sharding: Any) -> None:
        try:
            device_at = {
                int(np.ravel_multi_index(tuple(s.start or 0 for s in index), self._mesh_shape)): int(device.id)
                for device, index in sharding.devices_indices_map(self._mesh_shape).items()
            }
        except Exception:  # a sharding this cannot read: no devices
            device_at = {}
        with self._lock:
            # One trace compiled again for other devices: a row could be either's.
            if self._device_at is not None and self._device_at != device_at:
                self._ambiguous = True
            self._device_at = device_at

    def device(self, local_positions: Any) -> int | None:
        """The device whose call received ``local_positions`` (its one position)."""
        with self._lock:
            device_at = None if self._ambiguous else self._device_at
        local = np.asarray(local_positions).ravel()
        if device_at is None or local.size != 1:
            return None
        return device_at.get(int(local[0]))


def stage(values: Iterable[Any]) -> tuple[ShardDevices, Any] | None:
    """The positions operand for a partitioned call of ``values``, and what reads it.

    None when no value has a mesh JAX knows at trace time (then the rows say no device).
    """
    for value in values:
        where = program_shardings.of_tracer(value)
        if where is not None:
            break
    else:
        return None
    try:
        from jax.sharding import NamedSharding, PartitionSpec

        mesh = where.sharding.mesh
        shape = tuple(int(n) for n in mesh.shape.values())
        positions = jnp.arange(math.prod(shape), dtype=jnp.int32).reshape(shape)
        split = NamedSharding(mesh, PartitionSpec(*mesh.axis_names))
        if where.spec is not None and hasattr(jax.sharding, "reshard"):
            positions = jax.sharding.reshard(positions, split)  # explicit axes
        else:
            positions = jax.lax.with_sharding_constraint(positions, split)
        devices = ShardDevices(shape)
        jax_routes.INSPECT_ARRAY_SHARDING.original()(positions, callback=devices._compiled)
    except Exception:  # a JAX or mesh where this cannot be said: no device
        return None
    return devices, positions
