"""Under ``jax.checking_leaks()``, what a user runs while hunting a tracer leak of their
own, jaxdbg's staged calls report no leak: the host functions JAX keeps past the trace
(a print's rule, a stop's callbacks) hold no tracer of it."""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state
from support.jax_setups import automatic_axes, devices_or_skip
from support.transcript import Transcript


def _vmapped_breakpoint_if(options: dict, xs):
    return jax.jit(jax.vmap(lambda x: (jaxdbg.breakpoint_if(x > 1.0, **options), x * 2)[1]))(xs)


def _printed(options: dict, xs):
    return jax.jit(lambda x: (jaxdbg.print("x={}", x), x * 2)[1])(xs)


def _called_back(options: dict, xs):
    return jax.jit(lambda x: (jaxdbg.callback(lambda value: None, x), x * 2)[1])(xs)


def _printed_in_a_sharded_jit(options: dict, xs):
    mesh = jax.make_mesh((4,), ("d",), devices=devices_or_skip(4), **automatic_axes(1))
    sharded = jax.device_put(jnp.tile(xs, 2), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d")))
    return jax.jit(lambda x: (jaxdbg.print("x={}", x), x * 2)[1])(sharded)


@pytest.mark.parametrize(
    "program",
    [_vmapped_breakpoint_if, _printed, _called_back, _printed_in_a_sharded_jit],
    ids=["breakpoint_if under vmap", "print", "callback", "print in a sharded jit"],
)
def test_jax_checking_leaks_finds_no_tracer_kept_by_jaxdbg(program, capsys):
    answers = io.StringIO("continue all\n" * 4)
    options = {"backend": "cli", "stdin": answers, "stdout": io.StringIO()}
    try:
        with jax.checking_leaks():
            out = jax.block_until_ready(program(options, jnp.arange(4.0)))
    finally:
        breakpoint_state.reset()
    assert float(out.sum()) > 0


def test_two_stops_of_a_scan_step_leave_no_tracer_behind():
    # What a stop keeps for the next one of its trace (the scalar the next one's question
    # waits for) is not kept under the leak check.
    t = Transcript()

    def step(carry, x):
        carry = carry + x
        jaxdbg.breakpoint(**t.options)
        jaxdbg.breakpoint_if(x > 1.0, **t.options)
        return carry, None

    t.stdin.write("p x\ncontinue all\np x\ncontinue all\n")
    t.stdin.seek(0)
    try:
        with jax.checking_leaks():
            out = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])(jnp.arange(4.0))
            jax.block_until_ready(out)
    finally:
        breakpoint_state.reset()
    assert float(out) == 6.0
    assert t.answers("p x") == ["Array(0., dtype=float32)", "Array(2., dtype=float32)"], t.text
