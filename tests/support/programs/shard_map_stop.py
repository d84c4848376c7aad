"""A jax.distributed job's program, run after tests/support/job_launcher.py's PREAMBLE
(which joins the job): a breakpoint inside shard_map over every device of the job."""

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg

PROCESS = jax.process_index()
mesh = Mesh(np.array(jax.devices()), ("x",))


def body(x):
    y = x * 2
    jaxdbg.breakpoint()
    return jax.lax.psum(y, "x")


f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))
x = jax.make_array_from_callback((8,), NamedSharding(mesh, P("x")), lambda i: np.arange(8.0)[i])
out = f(x)
print("result", PROCESS, np.asarray(out.addressable_data(0)).tolist(), flush=True)
