"""``python -m jaxdbg.demo``: a small jitted model that stops in the terminal debugger.

Try ``where``, ``up``, ``locals``, ``p jnp.mean(hidden)``, ``ll``, then ``c``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jaxdbg

LAYER_SIZES = (4, 8, 8, 1)


def init_params(key: jax.Array) -> list[dict[str, jax.Array]]:
    params = []
    for fan_in, fan_out in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:]):
        key, sub = jax.random.split(key)
        params.append({"w": jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in), "b": jnp.zeros(fan_out)})
    return params


def mlp(params, inputs):
    hidden = inputs
    for layer in params[:-1]:
        hidden = jnp.tanh(hidden @ layer["w"] + layer["b"])
    jaxdbg.breakpoint()  # stops here with the last hidden layer's runtime values
    return hidden @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, inputs, targets):
    predictions = mlp(params, inputs)
    return jnp.mean((predictions - targets) ** 2)


@jax.jit
def train_step(params, inputs, targets, learning_rate=0.1):
    loss, grads = jax.value_and_grad(loss_fn)(params, inputs, targets)
    params = jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)
    return params, loss


def main() -> None:
    key = jax.random.PRNGKey(0)
    params = init_params(key)
    inputs = jax.random.normal(jax.random.PRNGKey(1), (16, LAYER_SIZES[0]))
    targets = jnp.sum(inputs, axis=1, keepdims=True)
    print("jaxdbg demo: one training step of a small MLP; the debugger stops inside mlp().")
    params, loss = train_step(params, inputs, targets)
    print(f"loss after the step: {float(loss):.4f}")


if __name__ == "__main__":
    main()
