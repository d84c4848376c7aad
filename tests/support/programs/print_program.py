"""A jit / vmap / scan / grad program that prints with jaxdbg.print or jax.debug.print.

Run as ``python print_program.py jaxdbg|jax``; the two outputs must be identical.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxdbg

show = jaxdbg.print if sys.argv[1] == "jaxdbg" else jax.debug.print


def body(carry, x):
    show("step {i}: carry={c} x={x:.3f}", i=x, c=carry, x=x)
    return carry + x, carry * 2


@jax.jit
def program(xs):
    carry, ys = jax.lax.scan(body, 0.0, xs)
    jax.vmap(lambda row: show("row {} sum {}", row, row.sum()))(ys.reshape(2, -1))
    jax.vmap(jax.vmap(lambda v: show("v={v:.2f}", v=v)))(ys.reshape(2, -1))
    show("ordered {}", carry, ordered=True)
    show("no placeholders")
    return carry


program(jnp.arange(6.0))
jax.grad(lambda x: (show("grad input {}", x), x * x)[1])(3.0)
with np.printoptions(precision=2):
    show("eager {} and {}", jnp.linspace(0, 1, 4), 5)
