"""A stop in a program on several CPU devices serves its big values: the other devices
wait for it at their next collective, holding XLA's CPU thread pool, and a value that
needed that pool to reach JAX (a 4 MB local copied into a device buffer) was never
readable: the first ``p`` waited forever."""

from __future__ import annotations

import pytest

from support.hang_guard import Script

# the step of a loop over a sharded value: its all-reduce comes after the stop
STEP = """
def step(c, x):
    big = c * 0.5 + x
    {stop}
    return big + jnp.sum(big) * 0, None
"""
STOP = 'jaxdbg.breakpoint(backend="cli")'
SCAN = """
f = jax.jit(lambda c, xs: jax.lax.scan(step, c, xs)[0])
print(float(f(jax.device_put(jnp.ones(SIDE), rows), jnp.arange(2.0))[0, 0]))
"""

PROGRAMS = {
    "sharded jit": STEP.format(stop=STOP) + SCAN,
    # the stop's value passes through the host and back
    "token": STEP.format(stop='big = jaxdbg.breakpoint(token=big, backend="cli")') + SCAN,
    # a batch under vmap: the stop reads one element of the batch the host received
    "vmap in sharded jit": STEP.format(stop=STOP)
    + """
f = jax.jit(jax.vmap(lambda c: jax.lax.scan(step, c, jnp.arange(2.0))[0]))
batch = jax.device_put(jnp.ones((2,) + SIDE), NamedSharding(mesh, P(None, "d")))
print(float(f(batch)[0, 0, 0]))
""",
    "pmap": """
def per_device(c):
    big = jnp.broadcast_to(c, SIDE) * 0.5
    jaxdbg.breakpoint(backend="cli")
    return jax.lax.psum(big, "i")
print(float(jax.pmap(per_device, axis_name="i")(jnp.ones(8))[0, 0, 0]))
""",
}

PRELUDE = """
import jax, jax.numpy as jnp, jaxdbg
from jax.sharding import NamedSharding, PartitionSpec as P
kind = getattr(getattr(jax.sharding, "AxisType", None), "Auto", None)
mesh = jax.make_mesh((8,), ("d",), **({"axis_types": (kind,)} if kind else {}))
rows = NamedSharding(mesh, P("d"))
SIDE = (1024, 1024)  # 4 MB: XLA copies anything over 100 kB on its pool
"""


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_stop_reads_its_big_values_while_the_other_devices_wait(program):
    with Script(PRELUDE + PROGRAMS[program]) as run:
        end = run.expect("(jaxdbg) ", 120)
        run.send("p float(big[0, 0])\n")
        end = run.expect("(jaxdbg) ", 60, end)
        run.send("p float(jnp.sum(big))\n")
        end = run.expect("(jaxdbg) ", 60, end)
        run.send("locals\n")
        end = run.expect("(jaxdbg) ", 60, end)
        run.send("continue all\n")
        code = run.wait(120)
        out = run.output
    assert code == 0, out
    assert "(jaxdbg) 0.5\n(jaxdbg) 524288.0\n" in out, out  # the answers to the two p
    assert "float32[1024,1024] min=0.5 max=0.5" in out, out
