"""Under ``jax.checking_leaks()``, what a user runs while hunting a tracer leak of their
own, jaxdbg's staged calls report no leak: the host functions JAX keeps past the trace
(a print's rule, a stop's callbacks) hold no tracer of it."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import io
import sys
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state
from support import nnx_steps
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


class _Settings:
    """A plain object (no pytree) the step makes, holding a traced value."""

    def __init__(self, scale):
        self.scale = scale
        self.name = "settings"


class _Trainer:
    """A plain class: its instance's attributes hold the step's traced values."""

    def __init__(self, w, lr):
        self.w = w
        self.lr = lr
        self.history = [w * 2]
        self.settings = _Settings(w[0, 0] + 1)

    def loss(self, x):
        return jnp.sum(x @ self.w)

    def step(self, x, options):
        loss_of = self.loss  # a bound method of it

        def scaled(a):  # a closure over it
            return self.w * a

        jaxdbg.breakpoint(**options)
        return self.loss(x) + loss_of(x) + scaled(1.0).sum()


def test_a_plain_objects_traced_attributes_have_their_values_at_the_stop_and_leak_nothing():
    # `self` of a class that is no pytree was kept whole: `p self.w` answered a tracer,
    # not the step's value, and the trace's tracers outlived it in the stop's frame.
    t = Transcript(
        "p self.w",
        "p self.lr, self.history[0][0, 0], type(self).__name__",
        "p self.settings.scale, self.settings.name",
        "p self.loss(x)",
        "p loss_of(x)",
        "p scaled(3.0)[0, 0]",
        "c",
    )
    try:
        with jax.checking_leaks():
            out = jax.jit(lambda w, x: _Trainer(w, 0.5).step(x, t.options))(2 * jnp.eye(2), jnp.ones(2))
            jax.block_until_ready(out)
    finally:
        breakpoint_state.reset()
    assert float(out) == 12.0
    assert t.answers("p self.w")[0].startswith("Array([[2., 0.],"), t.text
    assert t.answers("p self.lr, self.history[0][0, 0], type(self).__name__") == [
        "(0.5, Array(4., dtype=float32), '_Trainer')"
    ], t.text
    assert t.answers("p self.settings.scale, self.settings.name") == ["(Array(3., dtype=float32), 'settings')"], t.text
    assert t.answers("p self.loss(x)") == ["Array(4., dtype=float32)"], t.text
    assert t.answers("p loss_of(x)") == ["Array(4., dtype=float32)"], t.text
    assert t.answers("p scaled(3.0)[0, 0]") == ["Array(6., dtype=float32)"], t.text


@dataclasses.dataclass(frozen=True)
class _Frozen:
    scale: Any
    name: str = "frozen"


@dataclasses.dataclass(frozen=True, slots=True)
class _FrozenSlots:
    scale: Any


class _Node:
    def __init__(self, value, parent=None):
        self.value = value
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


def test_frozen_dataclasses_slots_cycles_partials_and_recursive_closures_have_their_values_at_the_stop():
    t = Transcript(
        "p frozen, slotted.scale",
        "p leaf.value, leaf.parent.value, leaf.parent.children[0]",
        "p scaled(2.0), countdown(3)",
        "c",
    )

    def step(x):
        frozen, slotted = _Frozen(x * 3), _FrozenSlots(x * 4)  # noqa: F841 (read at the stop)
        root = _Node(x)
        leaf = _Node(x + 1, root)  # noqa: F841 (leaf.parent.children[0] is leaf: a cycle)
        scaled = functools.partial(jnp.multiply, x)  # noqa: F841

        def countdown(n):  # a recursive closure over x
            return x if n == 0 else countdown(n - 1) + 1

        jaxdbg.breakpoint(**t.options)
        return x + root.value

    try:
        with jax.checking_leaks():
            jax.block_until_ready(jax.jit(step)(jnp.float32(2.0)))
    finally:
        breakpoint_state.reset()
    assert t.answers("p frozen, slotted.scale") == [
        "(_Frozen(scale=Array(6., dtype=float32), name='frozen'), Array(8., dtype=float32))"
    ], t.text
    assert t.answers("p leaf.value, leaf.parent.value, leaf.parent.children[0]") == [
        "(Array(3., dtype=float32), Array(2., dtype=float32), <the _Node holding this, made above>)"
    ], t.text
    assert t.answers("p scaled(2.0), countdown(3)") == ["(Array(4., dtype=float32), Array(5., dtype=float32))"], t.text


def test_a_stop_inside_flax_nnx_grad_leaks_nothing_through_its_library_frames():
    # nnx.grad's frames, between the stop and the step, hold its own callable object,
    # whose field is the user's loss_fn, a closure over the step's traced x.
    t = Transcript("p y", "c")
    try:
        with jax.checking_leaks():
            jax.block_until_ready(jax.tree.leaves(nnx_steps.stop_inside_nnx_grad(t.options)))
    finally:
        breakpoint_state.reset()
    assert t.answers("p y")[0].startswith("Array([["), t.text


def _calls_deep(depth: int) -> bool:
    """Whether Python can still make ``depth`` nested calls here."""

    def nested(left: int) -> int:
        return 0 if left == 0 else 1 + nested(left - 1)

    try:
        nested(depth)
    except RecursionError:
        return False
    return True


def test_a_stop_among_objects_that_jax_cannot_flatten_leaves_pythons_recursion_limit_alone():
    # An argparse parser's registries are dicts keyed by None and strings, which JAX's
    # flatten cannot sort; each failed flatten left Python's recursion limit one call lower.
    import argparse

    t = Transcript(*["p x", "c"] * 4)
    parsers = [argparse.ArgumentParser() for _ in range(50)]

    def step(x):
        settings = parsers  # the frame's objects, walked for the step's tracers
        jaxdbg.breakpoint(**t.options)
        return x + len(settings)

    margin = sys.getrecursionlimit() - len(inspect.stack()) - 50
    assert _calls_deep(margin)
    try:
        for size in range(1, 5):  # a trace each
            jax.block_until_ready(jax.jit(step)(jnp.zeros(size)))
    finally:
        breakpoint_state.reset()
    assert _calls_deep(margin)
    assert t.answers("p x")[0] == "Array([0.], dtype=float32)", t.text


class _CountedTable(dict):
    """A dict that counts how often its values are read."""

    reads = 0

    def values(self):
        _CountedTable.reads += 1
        return super().values()


class _Holder:
    def __init__(self):
        self.table = _CountedTable(a=1)


def test_only_the_frames_a_trace_runs_in_are_searched_for_its_tracers():
    # A frame further out (a test runner's, a training loop's) was suspended before the
    # trace began: its objects hold none of the trace's tracers, and walking them at each
    # trace took a second and more (pytest-xdist's worker: 1.4 s a trace).
    t = Transcript("c")
    outside = _Holder()  # noqa: F841 (a local of a frame outside the trace)

    def step(x):
        inside = _Holder()  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x

    _CountedTable.reads = 0
    try:
        jax.block_until_ready(jax.jit(step)(1.0))
    finally:
        breakpoint_state.reset()
    assert _CountedTable.reads == 1  # `inside`'s table only
