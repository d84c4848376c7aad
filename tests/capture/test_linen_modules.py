"""A bound Flax Linen Module at a stop (``self`` in a ``__call__``): its variables travel
with the stop, and ``self`` answers as the Module bound to their runtime values.

Real Flax Linen and optax (the ``test`` extra); skipped where flax is not installed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine.values import linen_modules
from support.transcript import Transcript

nn = pytest.importorskip("flax.linen")


def _block(t: Transcript):
    class Block(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x):
            h = nn.Dense(self.features)(x)
            h = nn.LayerNorm()(h)
            jaxdbg.breakpoint(**t.options)
            return jax.nn.gelu(h)

    return Block


def test_self_in_a_jitted_linen_call_shows_the_runtime_parameters_not_tracers():
    t = Transcript(
        "locals",
        "p float(self.variables['params']['Dense_0']['kernel'].sum())",
        "p self.features",
        "p isinstance(self, nn.Module)",
        "tree self",
        "c",
    )
    model = _block(t)(8)
    x = jnp.ones((4, 3))
    params = jax.jit(model.init)(jax.random.key(0), x)
    # What init made: the stop saw these values (as the program had them), not tracers.
    kernel = params["params"]["Dense_0"]["kernel"]
    locals_row = t.answers("locals")[0].splitlines()[0]
    assert locals_row.split()[:3] == ["self", "Block", "nn.Module"], locals_row
    assert "4 arrays · 48 float32" in locals_row  # 3*8 + 8 Dense, 8 + 8 LayerNorm
    assert "Tracer" not in t.text
    printed = t.answers("p float(self.variables['params']['Dense_0']['kernel'].sum())")
    assert float(printed[0]) == pytest.approx(float(kernel.sum()), rel=1e-6) and float(printed[0]) != 0.0
    assert t.answers("p self.features") == ["8"]
    assert t.answers("p isinstance(self, nn.Module)") == ["True"]
    assert "['Dense_0']" in t.answers("tree self")[0] and "['kernel']" in t.answers("tree self")[0]


def test_self_can_be_called_at_the_stop_on_its_runtime_parameters():
    same = "p float(jnp.abs(self.project(x) - y).max())"
    t = Transcript("c", same, "p self.dense.features", "c")

    class Outer(nn.Module):  # setup style, a method without the breakpoint
        def setup(self):
            self.dense = nn.Dense(4)

        def project(self, x):
            return self.dense(x)

        def __call__(self, x):
            y = self.project(x)
            jaxdbg.breakpoint(**t.options)
            return y

    x = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)
    outer = Outer()
    variables = outer.init(jax.random.key(2), x)  # eager: its stop is continued
    jax.jit(outer.apply)(variables, x)
    assert t.answers(same) == ["0.0"]
    assert t.answers("p self.dense.features") == ["4"]


def test_a_train_steps_linen_stop_reads_each_steps_parameters():
    optax = pytest.importorskip("optax")
    read = "p float(self.variables['params']['Dense_0']['kernel'].sum())"
    t = Transcript(read, "c", read, "c", read, "c")

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.Dense(1)(x)
            jaxdbg.breakpoint(**t.options)
            return y

    net, tx = Net(), optax.sgd(0.1)
    x, target = jnp.ones((2, 3)), jnp.zeros((2, 1))
    params = net.init(jax.random.key(0), x)  # eager: stops too, on the live Module
    opt = tx.init(params)

    @jax.jit
    def step(params, opt):
        grads = jax.grad(lambda p: jnp.mean((net.apply(p, x) - target) ** 2))(params)
        updates, opt = tx.update(grads, opt)
        return optax.apply_updates(params, updates), opt

    seen = []
    for _ in range(2):
        seen.append(float(params["params"]["Dense_0"]["kernel"].sum()))
        params, opt = step(params, opt)
    printed = [float(answer) for answer in t.answers(read)]
    # the eager init's stop, then one per step, each with that step's parameters
    assert printed[1:] == pytest.approx(seen, rel=1e-6)
    assert seen[0] != pytest.approx(seen[1])


def test_replay_of_a_linen_call_runs_as_the_module_and_leaves_the_stop_unchanged():
    mean = "p float(self.variables['batch_stats']['BatchNorm_0']['mean'].sum())"
    same = "p float(jnp.abs(_replay_result - h).max())"
    t = Transcript("c", mean, "replay", "c", "c", same, mean, "c")

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.Dense(4)(x)
            h = nn.BatchNorm(use_running_average=False)(h)  # updates batch_stats: mutable in the replay
            jaxdbg.breakpoint(**t.options)
            return h

    x = jnp.arange(8.0).reshape(2, 4)
    block = Block()
    variables = block.init(jax.random.key(0), x)  # eager: its stop is continued
    jax.jit(lambda v: block.apply(v, x, mutable=["batch_stats"]))(variables)
    assert "raised" not in t.text and "***" not in t.text, t.text
    assert t.answers(same) == ["0.0"]  # the replay, run as the Module, made the stop's h
    before, after = t.answers(mean)
    assert before == after and float(before) != 0.0  # its batch_stats update was its own


def test_a_saved_linen_stop_reopens_with_the_modules_class_variables_and_fields(tmp_path):
    path = tmp_path / "linen.npz"
    t = Transcript(f"save {path}", "c")
    model = _block(t)(8)
    jax.jit(model.init)(jax.random.key(0), jnp.ones((2, 3)))
    t2 = Transcript("locals", "p self.features", "p self.variables['params']['LayerNorm_0']['scale'].sum()", "c")
    jaxdbg.open_stop(str(path), **t2.options)
    assert t2.answers("locals")[0].splitlines()[0].split()[:3] == ["self", "Block", "nn.Module"]
    assert t2.answers("p self.features") == ["8"]
    assert t2.answers("p self.variables['params']['LayerNorm_0']['scale'].sum()")[0].startswith("Array(8.")


def test_an_unbound_module_and_other_values_are_left_as_they_are():
    dense = nn.Dense(3)
    assert linen_modules.standing_for(dense) is dense  # unbound: no variables to show
    assert linen_modules.standing_for(np.ones(2)) is not None
    bound = dense.bind(dense.init(jax.random.key(0), jnp.ones((1, 2))))
    stand_in = linen_modules.standing_for(bound)
    assert type(stand_in) is linen_modules.LinenModule
    assert linen_modules.standing_for(stand_in) is stand_in
    leaves, treedef = jax.tree_util.tree_flatten(stand_in)
    assert len(leaves) == 2
    rebuilt = jax.tree_util.tree_unflatten(treedef, [leaf * 0 for leaf in leaves])
    assert float(jnp.abs(rebuilt(jnp.ones((1, 2)))).max()) == 0.0  # bound to the new values
    assert float(jnp.abs(stand_in(jnp.ones((1, 2)))).max()) > 0.0  # the old ones kept theirs


def test_a_stop_in_an_nn_scan_body_stops_once_per_step_with_the_steps_values():
    """Linen's nn.scan traces its body once with JAX's partial evaluation before the real
    lax.scan: a stop staged there ran outside the loop, at every call, its locals missing."""
    t = Transcript(*["p float(c.sum()), float(x.sum())", "c"] * 3)

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, c, x):
            jaxdbg.breakpoint(**t.options)
            return nn.Dense(2)(x) + c, None

    class Stack(nn.Module):
        @nn.compact
        def __call__(self, xs):
            scan = nn.scan(Cell, variable_axes={"params": 0}, split_rngs={"params": True}, length=3)
            return scan()(jnp.zeros(2), xs)[0]

    xs = jnp.arange(6.0).reshape(3, 2)
    stack = Stack()
    variables = jax.jit(stack.init)(jax.random.key(0), xs)
    stops = t.stops()
    assert len(stops) == 3, t.text
    assert [float(a.strip("()").split(", ")[1]) for a in t.answers("p float(c.sum()), float(x.sum())")] == [
        1.0,
        5.0,
        9.0,
    ]
    assert "unavailable" not in t.text
    assert variables["params"]["ScanCell_0"]["Dense_0"]["kernel"].shape == (3, 2, 2)


def test_a_module_that_cannot_be_bound_still_answers_its_fields_and_says_why_for_the_rest():
    stand_in = linen_modules.LinenModule(nn.Dense(3), variables="not a mapping of collections")
    assert stand_in.features == 3  # a field: no binding needed
    assert not hasattr(stand_in, "shape")  # a probe (is it an array?) reads "no", never raises
    with pytest.raises(AttributeError, match="could not be bound to the stop's variables"):
        _ = stand_in.variables
