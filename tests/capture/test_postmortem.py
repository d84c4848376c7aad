"""jaxdbg.post_mortem at a terminal prompt: frames from the traceback, concrete values
where the code ran eagerly, JAX's eager re-run for a NaN in a jitted call."""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg


def inner(y):
    z = y - 1.0
    w = jnp.log(z)
    return w * 2


@jax.jit
def outer(x):
    return inner(x * 2).sum()


LOG_LINE = inner.__code__.co_firstlineno + 2


def run_prompt(exc, commands: str) -> str:
    out = io.StringIO()
    jaxdbg.post_mortem(exc, backend="cli", stdin=io.StringIO(commands), stdout=out)
    return out.getvalue()


def test_nan_in_jit_stops_at_the_users_line_with_real_values():
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            outer(jnp.array([1.0, 0.25]))
    text = run_prompt(info.value, "p z\nup\np x\nc\n")
    assert f"Stopped at {__file__}:{LOG_LINE} in inner (post-mortem: FloatingPointError" in text
    assert "Array([ 1. , -0.5], dtype=float32)" in text
    assert "Array([1.  , 0.25], dtype=float32)" in text


def test_nan_in_a_jitted_gradient_shows_the_forward_values():
    # JAX's re-run of the gradient linearizes the forward pass: its locals are JAX's
    # tracers of that, each carrying the forward value.
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            jax.jit(jax.grad(lambda v: (inner(v * 2) ** 2).sum()))(jnp.array([1.0, 0.25]))
    text = run_prompt(info.value, "p z\nc\n")
    assert f"Stopped at {__file__}:{LOG_LINE} in inner (post-mortem: FloatingPointError" in text
    assert "(jaxdbg) p z\nArray([ 1. , -0.5], dtype=float32)" in text


def test_any_exception_and_the_last_one():
    def divide(a, b):
        ratio = a / b
        return ratio + {}

    try:
        divide(jnp.ones(2), 0)
    except TypeError as exc:
        text = run_prompt(exc, "p ratio\nc\n")
    assert "in divide (post-mortem: TypeError" in text
    assert "Array([inf, inf], dtype=float32)" in text
    with pytest.raises(ValueError, match="Unknown jaxdbg debugger backend 'nope'"):
        try:
            divide(1, 1)
        except TypeError as exc:
            jaxdbg.post_mortem(exc, backend="nope")


def test_quit_leaves_the_post_mortem_saying_nothing_more_is_stopped():
    try:
        jnp.ones(2) + {}
    except TypeError as exc:
        text = run_prompt(exc, "q\n")
    assert text.split("(jaxdbg) q\n", 1)[1] == "Quitting: the computation has ended already.\n"
