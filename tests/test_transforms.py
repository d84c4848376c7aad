"""The breakpoint under every JAX transformation, with runtime values."""

import re

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxdbg
from transcript import Transcript


def test_eager():
    t = Transcript("p x", "c")
    x = jnp.arange(3)
    jaxdbg.breakpoint(**t.options)
    assert t.answers("p x") == ["Array([0, 1, 2], dtype=int32)"]


def test_jit_and_nested_jit():
    t = Transcript("p h", "up", "p a", "c")

    @jax.jit
    def inner(h):
        h = h + 1
        jaxdbg.breakpoint(**t.options)
        return h

    @jax.jit
    def outer(a):
        return inner(a * 2)

    assert outer(jnp.float32(3.0)) == 7.0
    assert t.answers("p h") == ["Array(7., dtype=float32)"]
    assert t.answers("p a") == ["Array(3., dtype=float32)"]


def test_vmap_stops_per_element_and_names_it():
    t = Transcript("p y", "c", "p y", "c", "p y", "c")

    def f(x):
        y = x * 2
        jaxdbg.breakpoint(**t.options)
        return y

    jax.jit(jax.vmap(f))(jnp.arange(3.0))
    assert [s.rsplit("; ", 1)[1] for s in t.stops()] == ["batch 1/3)", "batch 2/3)", "batch 3/3)"]
    assert t.answers("p y") == ["Array(0., dtype=float32)", "Array(2., dtype=float32)",
                                "Array(4., dtype=float32)"]


def test_skip_skips_the_rest_of_the_batch():
    t = Transcript("p x", "skip", "p 'second call'", "skip")

    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x

    g = jax.jit(jax.vmap(f))
    g(jnp.arange(5.0))
    assert len(t.stops()) == 1
    g(jnp.arange(5.0) + 10)  # the next run stops again
    assert len(t.stops()) == 2 and "batch 1/5" in t.stops()[1]


def test_nested_vmap_names_both_levels():
    t = Transcript(*["p (a, b)", "c"] * 4)
    f = jax.vmap(jax.vmap(lambda a, b: (jaxdbg.breakpoint(**t.options), a + b)[1],
                          in_axes=(0, None)), in_axes=(None, 0))
    f(jnp.arange(2.0), jnp.arange(2.0) + 10)
    assert "; batch 2/2, 1/2)" in t.stops()[2]
    assert t.answers("p (a, b)")[2] == "(Array(0., dtype=float32), Array(11., dtype=float32))"


def test_grad_sees_forward_values():
    t = Transcript("p h", "c")

    def loss(w):
        h = jnp.sin(w) * 3
        jaxdbg.breakpoint(**t.options)
        return h.sum()

    g = jax.jit(jax.grad(loss))(jnp.zeros(2))
    np.testing.assert_allclose(g, [3.0, 3.0])
    assert t.answers("p h") == ["Array([0., 0.], dtype=float32)"]


def test_scan_fori_while():
    t = Transcript(*["p (c, step)", "c"] * 3, *["p i", "c"] * 2, "p n", "c")

    def body(c, step):
        c = c + step
        jaxdbg.breakpoint_if(step >= 1, **t.options)
        return c, c

    jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs))(jnp.arange(4.0))
    assert t.answers("p (c, step)")[0] == "(Array(1., dtype=float32), Array(1., dtype=float32))"
    assert len(t.stops()) == 3

    def step(i, acc):
        jaxdbg.breakpoint(**t.options)
        return acc + i

    jax.jit(lambda: jax.lax.fori_loop(0, 2, step, 0))()
    assert t.answers("p i") == ["Array(0, dtype=int32)", "Array(1, dtype=int32)"]

    def cond_fn(n):
        return n < 3

    def body_fn(n):
        jaxdbg.breakpoint_if(n == 2, **t.options)
        return n + 1

    jax.jit(lambda: jax.lax.while_loop(cond_fn, body_fn, 0))()
    assert t.answers("p n") == ["Array(2, dtype=int32)"]


def test_cond_branch_and_checkpoint():
    t = Transcript("p x", "c", "p x", "c")

    def f(x):
        def hot():
            jaxdbg.breakpoint(**t.options)
            return x * 2
        return jax.lax.cond(x > 0, hot, lambda: x)

    jax.jit(f)(-1.0)
    assert t.stops() == []
    jax.jit(f)(2.0)
    assert t.answers("p x")[0].startswith("Array(2., dtype=float32")
    jax.grad(jax.checkpoint(f))(3.0)
    assert len(t.stops()) == 2


def test_pmap_names_devices_and_serves_every_stop():
    assert jax.device_count() == 8
    t = Transcript(*["p y", "c"] * 8)

    def f(x):
        y = x * 10
        jaxdbg.breakpoint(**t.options)
        return y

    jax.pmap(f)(jnp.arange(8.0)).block_until_ready()
    devices = sorted(int(re.search(r"device (\d)", s).group(1)) for s in t.stops())
    assert devices == list(range(8))
    values = sorted(float(a.split("(")[1].split(",")[0]) for a in t.answers("p y"))
    assert values == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]


def test_sharded_jit_over_eight_devices():
    mesh = jax.make_mesh((8,), ("x",))
    t = Transcript("p y.shape", "p float(y.sum())", "c")

    @jax.jit
    def f(x):
        y = x + 1
        jaxdbg.breakpoint(**t.options)
        return y

    x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))
    f(x).block_until_ready()
    assert t.answers("p y.shape") == ["(16,)"]
    assert t.answers("p float(y.sum())") == ["136.0"]


def test_token_is_returned_and_works_under_vmap():
    t = Transcript("p y", "c", "p y", "c")

    def f(x):
        y = x + 1
        y = jaxdbg.breakpoint(token=y, **t.options)
        return y * 2

    out = jax.jit(jax.vmap(f))(jnp.arange(2.0))
    np.testing.assert_allclose(out, [2.0, 4.0])
    assert t.answers("p y") == ["Array(1., dtype=float32)", "Array(2., dtype=float32)"]


def test_ordered_and_token_together_is_an_error():
    with pytest.raises(ValueError, match="mutually exclusive"):
        jaxdbg.breakpoint(ordered=True, token=jnp.zeros(()))


def test_ordered_breakpoint_runs_in_program_order():
    t = Transcript("c", "c")
    order = []

    @jax.jit
    def f(x):
        jax.debug.callback(lambda: order.append("print"), ordered=True)
        jaxdbg.breakpoint(ordered=True, **t.options)
        return x

    f(1.0)
    assert order == ["print"] and len(t.stops()) == 1


def test_breakpoint_if_false_does_not_stop():
    t = Transcript("c")
    jax.jit(lambda x: (jaxdbg.breakpoint_if(x > 5, **t.options), x)[1])(1.0)
    jaxdbg.breakpoint_if(False, **t.options)
    assert t.stops() == []


def test_breakpoint_if_under_vmap_stops_only_where_true():
    t = Transcript("p x", "c", "p x", "c")
    jax.jit(jax.vmap(lambda x: (jaxdbg.breakpoint_if(x % 2 == 1, **t.options), x)[1]))(jnp.arange(4.0))
    assert ["batch 2/4" in t.stops()[0], "batch 4/4" in t.stops()[1]] == [True, True]
    assert t.answers("p x") == ["Array(1., dtype=float32)", "Array(3., dtype=float32)"]


def test_breakpoint_on_nonfinite_names_leaf_and_counts():
    t = Transcript("p logits", "c")

    @jax.jit
    def f(x):
        logits = jnp.log(x)
        params = {"w": x * 2}
        jaxdbg.breakpoint_on_nonfinite(params, logits, **t.options)
        return logits

    f(jnp.array([1.0, 2.0]))
    assert t.stops() == []
    f(jnp.array([1.0, 0.0, -1.0, -2.0]))
    banner = t.stops()[0]
    assert "non-finite values in logits (2 NaN and 1 Inf)" in banner
    assert "params" not in banner


def test_frame_filtering_drops_machinery_and_hidden_frames():
    t = Transcript("where", "c")

    def helper():
        __tracebackhide__ = True
        jaxdbg.breakpoint(**t.options)

    def user():
        helper()

    jax.jit(lambda: user())()
    functions = [line.split()[2] for line in t.answers("where")[0].splitlines()
                 if re.match(r"^[> ] +\d", line)]
    assert functions[0] == "user" and "helper" not in functions
    assert "jax/_src" not in t.answers("where")[0] and "_pytest" not in t.answers("where")[0]


def test_num_frames_and_unfiltered():
    t = Transcript("where", "c", "where", "c")
    jaxdbg.breakpoint(num_frames=1, **t.options)
    assert len([l for l in t.answers("where")[0].splitlines() if re.match(r"^[> ] +\d", l)]) == 1
    jaxdbg.breakpoint(filter_frames=False, **t.options)
    assert "_pytest" in t.answers("where")[1] or "pluggy" in t.answers("where")[1]


def test_quit_inside_jit_is_one_clear_line():
    from jaxdbg import quit_reporting

    t = Transcript("q")
    with pytest.raises(Exception) as info:
        jax.jit(lambda x: (jaxdbg.breakpoint(**t.options), x + 1)[1])(1.0)
    assert quit_reporting.stop_reason(info.value) == quit_reporting.QUIT_LINE
    # the process keeps going: the next stop works normally
    t2 = Transcript("p x", "c")
    jax.jit(lambda x: (jaxdbg.breakpoint(**t2.options), x)[1])(4.0)
    assert t2.answers("p x")[0].startswith("Array(4., dtype=float32")


def test_quit_in_pmap_stops_every_device():
    from jaxdbg import quit_reporting

    t = Transcript("q")
    with pytest.raises(Exception) as info:
        jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    assert quit_reporting.stop_reason(info.value) == quit_reporting.QUIT_LINE
    assert len(t.stops()) == 1


def test_concurrent_threads_are_served_one_at_a_time():
    import threading

    t = Transcript(*["p tag", "c"] * 4)
    active, overlaps = [], []

    def probe(session, **options):
        active.append(1)
        overlaps.append(len(active))
        try:
            jaxdbg.cli.run_cli(session, **options)
        finally:
            active.pop()

    jaxdbg.register_debugger("probe", probe, priority=-1000)
    try:
        @jax.jit
        def f(tag):
            jaxdbg.breakpoint(backend="probe", stdin=t.stdin, stdout=t.stdout)
            return tag

        threads = [threading.Thread(target=lambda i=i: f(jnp.int32(i)).block_until_ready())
                   for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    finally:
        jaxdbg.unregister_debugger("probe")
    assert sorted(t.answers("p tag")) == [f"Array({i}, dtype=int32)" for i in range(4)]
    assert overlaps == [1, 1, 1, 1]


def test_terminal_source_is_highlighted_only_on_a_terminal():
    t = Transcript("c")
    jaxdbg.breakpoint(color=True, **t.options)
    assert "\x1b[" in t.text
    t2 = Transcript("c")
    jaxdbg.breakpoint(**t2.options)
    assert "\x1b[" not in t2.text


def test_breakpoint_if_callback_sits_inside_cond():
    """When the predicate is false no operand leaves the device."""
    def f(x):
        jaxdbg.breakpoint_if(x.sum() > 0)
        return x

    jaxpr = jax.make_jaxpr(f)(jnp.ones(3)).jaxpr
    top = [eqn.primitive.name for eqn in jaxpr.eqns]
    assert "cond" in top and "debug_callback" not in top

    def contains_callback(j):
        for eqn in j.eqns:
            if eqn.primitive.name == "debug_callback":
                return True
            for sub in jax.extend.core.jaxprs_in_params(eqn.params):
                if contains_callback(sub):
                    return True
        return False

    cond = next(e for e in jaxpr.eqns if e.primitive.name == "cond")
    false_branch, true_branch = cond.params["branches"]
    assert not contains_callback(false_branch.jaxpr) and contains_callback(true_branch.jaxpr)


def test_ordered_breakpoint_under_vmap():
    t = Transcript("c", "c")
    jax.jit(jax.vmap(lambda x: (jaxdbg.breakpoint(ordered=True, **t.options), x)[1]))(jnp.arange(2.0))
    assert ["batch 1/2" in t.stops()[0], "batch 2/2" in t.stops()[1]] == [True, True]


def test_breakpoint_if_under_pmap_stops_only_matching_devices():
    t = Transcript(*["c"] * 2)
    jax.pmap(lambda x: (jaxdbg.breakpoint_if(x > 5, **t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    assert sorted(re.search(r"device (\d)", s).group(1) for s in t.stops()) == ["6", "7"]


def test_nonfinite_under_vmap_reports_per_element():
    t = Transcript("c", "c")

    def g(x):
        y = jnp.log(x)
        jaxdbg.breakpoint_on_nonfinite(y, **t.options)
        return y

    jax.jit(jax.vmap(g))(jnp.array([[1.0, 0.0], [1.0, 2.0], [-1.0, -1.0]]))
    assert "batch 1/3; non-finite values in y (1 Inf)" in t.stops()[0]
    assert "batch 3/3; non-finite values in y (2 NaN)" in t.stops()[1]


def test_shard_map_names_each_device():
    mesh = jax.make_mesh((4, 2), ("rows", "cols"))
    t = Transcript(*["p x.shape", "c"] * 8)
    spec = P("rows", "cols")
    f = jax.jit(jax.shard_map(lambda x: (jaxdbg.breakpoint(**t.options), x)[1], mesh=mesh,
                              in_specs=spec, out_specs=spec))
    f(jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, spec))).block_until_ready()
    labels = sorted(re.search(r"(device \d \(rows=\d, cols=\d\))", s).group(1) for s in t.stops())
    assert len(labels) == 8 and "device 3 (rows=1, cols=1)" in labels
    assert set(t.answers("p x.shape")) == {"(2, 2)"}


def test_custom_vjp_forward_and_backward_rules():
    t = Transcript("p x", "c", "p g", "c")

    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def fwd(x):
        # Frames outside a custom_vjp rule hold the outer differentiation's values,
        # which a rule may not close over; num_frames=1 keeps to the rule's own frame.
        jaxdbg.breakpoint(num_frames=1, **t.options)
        return jnp.sin(x), x

    def bwd(x, g):
        jaxdbg.breakpoint(num_frames=1, **t.options)
        return (g * jnp.cos(x),)

    f.defvjp(fwd, bwd)
    assert float(jax.jit(jax.grad(lambda x: f(x) * 2))(0.0)) == 2.0
    assert t.answers("p x")[0].startswith("Array(0., dtype=float32")
    assert t.answers("p g")[0].startswith("Array(2., dtype=float32")


def test_custom_jvp_rule_under_grad_shows_tangents_as_unavailable():
    t = Transcript("p x", "p dx", "c", "p dx", "c")

    @jax.custom_jvp
    def h(x):
        return x ** 2

    @h.defjvp
    def h_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        jaxdbg.breakpoint(**t.options)
        return x ** 2, 2 * x * dx

    assert float(jax.jit(jax.grad(h))(3.0)) == 6.0  # no transpose error
    assert t.answers("p x")[0].startswith("Array(3., dtype=float32")
    assert t.answers("p dx")[0] == "<unavailable: a tangent while JAX linearizes a custom_jvp rule>"
    jax.jvp(h, (3.0,), (1.0,))  # forward mode: the tangent is a real value
    assert t.answers("p dx")[1] in ("1.0", "Array(1., dtype=float32, weak_type=True)")


def test_token_keeps_the_gradient_of_the_value_it_threads():
    t = Transcript("c", "c")

    def loss(w):
        y = w * 3.0
        y = jaxdbg.breakpoint(token=y, **t.options)
        return (y ** 2).sum()

    np.testing.assert_allclose(jax.grad(loss)(jnp.ones(2)), [18.0, 18.0])
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(jnp.ones(2)), [18.0, 18.0])
