"""A jax.distributed job's program, run after tests/support/job_launcher.py's PREAMBLE
(which joins the job): with jaxdbg's Inf watch on, a jit of arrays sharded over every
device of the job makes an Inf in one device's shard only, process 1's first device."""

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
print("first device", jax.local_devices()[0].id, flush=True)  # a CPU job numbers its own


@jax.jit
def body(x):
    shifted = x - 4.0
    return jnp.log(shifted) * 2  # -Inf where x holds a 4


x = jax.make_array_from_callback(
    (8,), NamedSharding(mesh, P("x")), lambda i: np.where(np.arange(8) == 5, 4.0, np.arange(8.0) + 5)[i]
)
try:
    body(x)
except FloatingPointError as error:
    print("raised", PROCESS, type(error).__name__, flush=True)
