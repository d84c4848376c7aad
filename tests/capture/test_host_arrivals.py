"""capture.breakpoints.observe_host_arrivals: the public hook benchmarks time stops with."""

import jax
import jax.numpy as jnp

import jaxdbg
from jaxdbg.capture import breakpoints
from support.transcript import Transcript


def test_observer_sees_each_host_arrival_before_its_stop():
    t = Transcript("p x", "c", "p x", "c")
    seen = []
    undo = breakpoints.observe_host_arrivals(lambda: seen.append(len(t.answers("p x"))))

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x + 1

    try:
        f(jnp.float32(1.0))
        f(jnp.float32(2.0))
    finally:
        undo()
    # Each arrival is observed before the stop it brings is served.
    assert seen == [0, 1]
    assert t.answers("p x") == ["Array(1., dtype=float32)", "Array(2., dtype=float32)"]
    undo()  # twice is harmless
    t2 = Transcript("c")
    jax.jit(lambda x: (jaxdbg.breakpoint(**t2.options), x)[1])(jnp.float32(3.0))
    assert seen == [0, 1]  # undone: no longer called
