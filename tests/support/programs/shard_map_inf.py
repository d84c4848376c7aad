"""A jax.distributed job's program, run after tests/support/job_launcher.py's PREAMBLE
(which joins the job): with jaxdbg's Inf watch on, a shard_map over every device of
the job makes an Inf on one device only, global device 2 (process 1's first)."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg  # noqa: F401 (the NaN watch's switch)
from jaxdbg.capture import nan_watch

PROCESS = jax.process_index()
nan_watch.set_enabled(True, infs=True)
mesh = Mesh(np.array(jax.devices()), ("x",))


def body(block):
    shifted = block - 4.0
    return jax.lax.psum(jnp.log(shifted), "x")  # -Inf where the block holds a 4


f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))
x = jax.make_array_from_callback(
    (8,), NamedSharding(mesh, P("x")), lambda i: np.where(np.arange(8) == 5, 4.0, np.arange(8.0) + 5)[i]
)
try:
    f(x)
except FloatingPointError as error:
    print("raised", PROCESS, type(error).__name__, flush=True)
