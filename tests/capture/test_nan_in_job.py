"""nan_in_job: a sharded jit run up to the primitive that made a NaN (Inf) tells which
devices' shards hold it (real JAX on 8 host CPU devices; a job of one process here, the
job of several in tests/distributed/test_nan_stop_in_job.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxdbg.capture import nan_in_job, nan_location
from support.jax_setups import devices_or_skip


def _sharded(values):
    return jax.device_put(values, NamedSharding(Mesh(np.array(devices_or_skip(8)), ("d",)), P("d")))


@jax.jit
def _inner(v):
    return jnp.log(v - 4.0)  # -Inf where v holds a 4


def _outer(x):
    return _inner(x * 1.0) + jnp.sum(x)  # the log inside a nested jit; the sum mixes devices


def test_the_devices_whose_shard_of_the_primitives_output_holds_the_inf():
    f = jax.jit(_outer)
    x = _sharded((jnp.arange(16.0) + 5).at[3].set(4.0).at[14].set(4.0))  # devices 1 and 7
    origin = nan_location.locate(f, (x,), {}, infs=True)
    assert origin.primitive == "log" and origin.devices == ()  # checkify names no device
    assert nan_in_job.devices_in_job(f, (x,), {}, "log", origin.where, "inf") == (1, 7)
    assert nan_in_job.devices_in_job(f, (x,), {}, "log", origin.where, "nan") == ()


def test_a_primitive_inside_a_loop_names_no_device():
    def looped(x):
        return jax.lax.fori_loop(0, 2, lambda i, v: _inner(v), x)

    f = jax.jit(looped)
    x = _sharded((jnp.arange(16.0) + 5).at[3].set(4.0))
    origin = nan_location.locate(f, (x,), {}, infs=True)
    assert origin is not None and origin.primitive == "log"
    assert nan_in_job.devices_in_job(f, (x,), {}, "log", origin.where, "inf") == ()
