"""A Flax NNX train step with a stop inside ``nnx.grad``: nnx.jit's and nnx.grad's own
frames lie between the stop (in ``loss_fn``) and ``train_step``."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import jaxdbg


def stop_inside_nnx_grad(options: dict):
    """Run the step once, stopping in ``loss_fn`` with ``options``; the gradients."""
    nnx = pytest.importorskip("flax.nnx", reason="the test extra installs flax")
    model = nnx.Linear(2, 2, rngs=nnx.Rngs(0))

    @nnx.jit
    def train_step(model, x):
        def loss_fn(model):
            y = model(x)
            jaxdbg.breakpoint(**options)
            return jnp.sum(y**2)

        return nnx.grad(loss_fn)(model)

    return train_step(model, jnp.ones((1, 2)))
