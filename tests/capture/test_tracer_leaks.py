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


def test_a_train_steps_loss_closure_leaks_nothing_and_runs_at_the_stop_on_the_steps_data():
    # `loss_fn` closes over the step's traced x and y: kept as it is, the stop's frame held
    # them past the trace, and calling it at the stop raised.
    # `grad_fn` closes over `loss_fn`, JAX's wrapper over the closure.
    t = Transcript("p loss_fn(w)", "p loss_fn.__name__", "p grad_fn(w)[0]", "c")

    @jax.jit
    def train_step(w, x, y):
        def loss_fn(w):
            return jnp.mean((x @ w - y) ** 2)

        grad_fn = jax.value_and_grad(loss_fn)
        loss, grads = grad_fn(w)
        jaxdbg.breakpoint(**t.options)
        return w - 0.1 * grads, loss

    try:
        with jax.checking_leaks():
            _, loss = jax.block_until_ready(train_step(jnp.ones((3, 2)), jnp.ones((4, 3)), jnp.zeros((4, 2))))
    finally:
        breakpoint_state.reset()
    assert float(loss) == 9.0
    assert t.answers("p loss_fn(w)") == ["Array(9., dtype=float32)"], t.text
    assert t.answers("p loss_fn.__name__") == ["'loss_fn'"], t.text
    assert t.answers("p grad_fn(w)[0]") == ["Array(9., dtype=float32)"], t.text


@pytest.mark.parametrize("how", ["apply", "init"])
def test_a_linen_modules_stop_leaves_no_tracer_behind(how):
    # The stop's `self` stood for the live Module, whose scope holds the trace's variables
    # and RNGs; in init the scope's variables were also filled in after the stop.
    nn = pytest.importorskip("flax.linen")
    first = ["c"] if how == "apply" else []  # the stop in the eager init that makes the variables
    t = Transcript(*first, "p self.name, self.features", "p sorted(self.variables.get('params', {}))", "c")

    class Block(nn.Module):
        features: int = 2

        @nn.compact
        def __call__(self, x):
            jaxdbg.breakpoint(**t.options)
            return nn.Dense(self.features)(x)

    block, x = Block(name="block"), jnp.ones((1, 3))
    variables = Block(name="block").init(jax.random.key(0), x) if how == "apply" else None
    try:
        with jax.checking_leaks():
            if how == "init":
                jax.block_until_ready(jax.jit(block.init)(jax.random.key(0), x))
            else:
                jax.block_until_ready(jax.jit(block.apply)(variables, x))
    finally:
        breakpoint_state.reset()
    expected = "[]" if how == "init" else "['Dense_0']"
    assert t.answers("p sorted(self.variables.get('params', {}))")[-1] == expected, t.text
    assert t.answers("p self.name, self.features")[-1] == "('block', 2)", t.text


def test_an_equinox_train_steps_closures_leak_nothing_and_run_at_the_stop():
    # Equinox's `filter_value_and_grad(loss_fn)` is a Module whose field is the closure.
    eqx = pytest.importorskip("equinox")
    t = Transcript("p loss_fn(model)", "p grad_fn(model)[0]", "c")
    model = eqx.nn.Linear(3, 2, key=jax.random.key(0))

    @eqx.filter_jit
    def step(model, x, y):
        def loss_fn(m):
            return jnp.mean((jax.vmap(m)(x) - y) ** 2)

        grad_fn = eqx.filter_value_and_grad(loss_fn)
        loss, grads = grad_fn(model)
        jaxdbg.breakpoint(**t.options)
        return loss

    try:
        with jax.checking_leaks():
            loss = jax.block_until_ready(step(model, jnp.ones((4, 3)), jnp.zeros((4, 2))))
    finally:
        breakpoint_state.reset()
    for command in ("p loss_fn(model)", "p grad_fn(model)[0]"):  # the step's loss, from the stop's data
        (answer,) = t.answers(command)
        assert answer.startswith("Array(") and float(answer[6:].split(",")[0]) == pytest.approx(float(loss)), t.text
