"""The breakpoint under every JAX transformation, with runtime values."""

import re

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg
from jaxdbg.internals import jax_host_calls
from support.jax_setups import automatic_axes, devices_or_skip, explicit_axes
from support.transcript import Transcript


def test_eager():
    t = Transcript("p x", "c")
    x = jnp.arange(3)  # noqa: F841
    jaxdbg.breakpoint(**t.options)
    assert t.answers("p x") == ["Array([0, 1, 2], dtype=int32)"]


_OUTSIDE = "<unavailable: traced outside the jit, scan, cond, loop or checkpoint body this breakpoint is in>"


def test_jit_and_nested_jit():
    """The outer jit's values are not the inner jit's: JAX caches the inner one's
    jaxpr, and another program that calls it must not meet this program's tracers."""
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
    assert t.answers("p a") == [_OUTSIDE]


def _reused_bodies(t):
    """For each staging construct: a function of ``s`` that stages one body object,
    the same on every call, whose breakpoint names the value it got ``v``."""

    def step(v):
        jaxdbg.breakpoint(**t.options)
        return v * 2

    def scan_body(c, v):
        jaxdbg.breakpoint(**t.options)
        return c + v, v

    def loop_body(carry):
        v, i = carry
        jaxdbg.breakpoint(**t.options)
        return v, i + 1

    def loop_cond(carry):
        return carry[1] < 1

    def fori_body(i, v):
        jaxdbg.breakpoint(**t.options)
        return v

    def keep(v):
        return v

    @jax.custom_vjp
    def vjp(v):
        return v * 2

    def vjp_fwd(v):
        jaxdbg.breakpoint(**t.options)
        return v * 2, None

    vjp.defvjp(vjp_fwd, lambda _, g: (g * 2,))
    inner_jit, checkpointed = jax.jit(step), jax.checkpoint(step)
    return {
        "scan": lambda s: jax.lax.scan(scan_body, 0.0, jnp.full(1, s))[0],
        "cond": lambda s: jax.lax.cond(s > 0, step, keep, s),
        "while_loop": lambda s: jax.lax.while_loop(loop_cond, loop_body, (s, 0))[0],
        "fori_loop": lambda s: jax.lax.fori_loop(0, 1, fori_body, s),
        "checkpoint": lambda s: checkpointed(s),
        "custom_vjp": lambda s: jax.grad(vjp)(s),
        "jit": lambda s: inner_jit(s),
    }


@pytest.mark.parametrize("construct", ["scan", "cond", "while_loop", "fori_loop", "checkpoint", "custom_vjp", "jit"])
def test_a_body_reused_by_a_second_jit_holds_no_tracer_of_the_first(construct):
    """JAX caches a staged body's jaxpr by function and types; the enclosing program's
    values seen in outer frames must not become part of it (UnexpectedTracerError
    in the second program otherwise)."""
    t = Transcript(*(["p v", "up", "p s", "c"] * 2))
    use = _reused_bodies(t)[construct]

    def outer(a, k):
        s = a * k
        return use(s)

    jax.jit(lambda a: outer(a, 2.0))(jnp.float32(1.0))
    jax.jit(lambda a: outer(a, 3.0))(jnp.float32(1.0))
    assert len(t.stops()) == 2
    assert t.answers("p v") == ["Array(2., dtype=float32)", "Array(3., dtype=float32)"]
    if construct == "custom_vjp":
        # The forward rule runs in the enclosing program's own trace: nothing is
        # staged apart, so its values are in reach (and nothing is cached).
        assert t.answers("p s") == ["Array(2., dtype=float32)", "Array(3., dtype=float32)"]
    else:
        assert t.answers("p s") == [_OUTSIDE] * 2


def test_values_a_body_closes_over_stay_visible():
    """A body's own closure over the enclosing program's value is what JAX itself
    captures (a new function each trace), so the stop shows it."""
    t = Transcript("p s", "c", "p s", "c")

    def outer(s):
        def body(c, v):
            jaxdbg.breakpoint(**t.options)
            return c + v * s, v

        return jax.lax.scan(body, 0.0, jnp.ones(1))[0]

    jax.jit(outer)(jnp.float32(5.0))
    jax.jit(lambda s: outer(s))(jnp.float32(6.0))  # a second program, a new body
    assert t.answers("p s") == ["Array(5., dtype=float32)", "Array(6., dtype=float32)"]


def test_vmap_stops_per_element_and_names_it():
    t = Transcript("p y", "c", "p y", "c", "p y", "c")

    def f(x):
        y = x * 2
        jaxdbg.breakpoint(**t.options)
        return y

    jax.jit(jax.vmap(f))(jnp.arange(3.0))
    assert [s.rsplit("; ", 1)[1] for s in t.stops()] == ["batch 1/3)", "batch 2/3)", "batch 3/3)"]
    assert t.answers("p y") == ["Array(0., dtype=float32)", "Array(2., dtype=float32)", "Array(4., dtype=float32)"]


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
    f = jax.vmap(
        jax.vmap(lambda a, b: (jaxdbg.breakpoint(**t.options), a + b)[1], in_axes=(0, None)), in_axes=(None, 0)
    )
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


def _locals_row(t, name):
    table = t.answers("locals")[0]
    return next(line for line in table.splitlines() if line.startswith(name + " "))


@pytest.mark.multidevice
def test_sharded_jit_shows_the_program_sharding_in_banner_and_table():
    mesh = jax.make_mesh((8,), ("x",), **explicit_axes(1))
    t = Transcript("locals", "whatis y", "c")

    @jax.jit
    def f(x):
        y = x + 1
        jaxdbg.breakpoint(**t.options)
        return y

    f(jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))).block_until_ready()
    assert "mesh x=8" in t.stops()[0]
    assert "[P('x',) on mesh x=8]" in _locals_row(t, "y")  # not the gathered copy's cpu:0
    assert t.answers("whatis y") == ["Array float32[16] sharding=P('x',) on mesh x=8"]


@pytest.mark.multidevice
def test_pmap_banner_and_sharding_column_name_the_same_device():
    t = Transcript(*["locals", "c"] * 8)

    def f(x):
        y = x * 10
        jaxdbg.breakpoint(**t.options)
        return y

    jax.pmap(f)(jnp.arange(8.0)).block_until_ready()
    tables = t.answers("locals")
    assert len(tables) == len(t.stops()) == 8
    for banner, table in zip(t.stops(), tables):
        device = re.search(r"device (\d)", banner).group(1)
        row = next(line for line in table.splitlines() if line.startswith("y "))
        assert row.endswith(f"[device {device}]"), (banner, row)


@pytest.mark.multidevice
def test_sharded_jit_stop_prints_no_xla_rematerialization_warning(tmp_path):
    """XLA logs the warning from C++ to the process's stderr, so run a script."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "sharded.py"
    script.write_text(
        textwrap.dedent("""
        import io, jax, jax.numpy as jnp, jaxdbg
        from jax.sharding import NamedSharding, PartitionSpec as P
        for axis_type in ("Explicit", "Auto"):
            kind = getattr(getattr(jax.sharding, "AxisType", None), axis_type, None)
            mesh = jax.make_mesh((8,), ("x",), **({"axis_types": (kind,)} if kind else {}))

            @jax.jit
            def f(x):
                y = x + 1
                jaxdbg.breakpoint(backend="cli", stdin=io.StringIO("c\\n"), stdout=io.StringIO())
                return jaxdbg.breakpoint_on_nonfinite(y, token=y)

            f(jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))).block_until_ready()
        print("done")
    """)
    )
    env = {**__import__("os").environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    # Where XLA's CPU collective timeouts cannot be lifted (jaxlib 0.7), the stop says so.
    printed = [line for line in done.stdout.splitlines() if not line.startswith("jaxdbg: ")]
    assert printed == ["done"], done.stderr
    assert "Involuntary full rematerialization" not in done.stderr, done.stderr


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


def _callback_orderings(fn, *args) -> list[bool]:
    """For each host callback staged by ``fn`` (nested jaxprs too): is it ordered?"""

    def walk(jaxpr, out):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "debug_callback":
                out.append("Ordered" in type(eqn.params["effect"]).__name__)
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else [value]:
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner, out)
        return out

    return walk(jax.make_jaxpr(fn)(*args).jaxpr, [])


@pytest.fixture
def recording_backend(temporary_backend):
    """A backend that appends "stop" to the list it returns, then continues."""
    order = []

    def record(session):
        order.append("stop")
        session.execute("c")

    temporary_backend("record-order", record)
    return order


def test_ordered_breakpoint_runs_in_program_order(recording_backend):
    order = recording_backend

    def f(x):
        jax.debug.callback(lambda: order.append("before"), ordered=True)
        jaxdbg.breakpoint(ordered=True, backend="record-order")
        jax.debug.callback(lambda: order.append("after"), ordered=True)
        return x

    assert _callback_orderings(f, 1.0) == [True, True, True]
    jax.jit(f)(1.0)
    assert order == ["before", "stop", "after"]
    assert _callback_orderings(lambda x: (jaxdbg.breakpoint(), x)[1], 1.0) == [False]


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


@pytest.mark.parametrize("axes", ["automatic", "explicit"])
@pytest.mark.parametrize("flavour", ["breakpoint_if", "breakpoint_on_nonfinite"])
def test_a_conditional_stop_under_vmap_over_a_sharded_batch(flavour, axes):
    # JAX batched the stop's lax.cond on its predicate, and over an explicit mesh axis that
    # failed on the stop's values ("Resource axis: batch ... is not found in mesh").
    devices_or_skip(8)
    mesh = jax.make_mesh((8,), ("batch",), **(explicit_axes(1) if axes == "explicit" else automatic_axes(1)))
    t = Transcript("p c", "p x", "c")

    def step(c, x):
        if flavour == "breakpoint_if":
            jaxdbg.breakpoint_if(x > 100.0, **t.options)
        else:
            jaxdbg.breakpoint_on_nonfinite(jnp.log(x), **t.options)
        return c + x, None

    f = jax.jit(jax.vmap(lambda xs: jax.lax.scan(step, jnp.zeros_like(xs[0]), xs)[0]))
    xs = np.ones((8, 5), np.float32)
    xs[3, 2] = 1000.0 if flavour == "breakpoint_if" else -1.0
    sums = f(jax.device_put(jnp.asarray(xs), NamedSharding(mesh, P("batch"))))
    assert sums.tolist() == xs.sum(axis=1).tolist()
    assert len(t.stops()) == 1 and "batch 4/8; mesh batch=8" in t.stops()[0], t.text
    assert t.answers("p c") == ["Array(2., dtype=float32)"]
    assert t.answers("p x") == [repr(jnp.asarray(xs[3, 2]))]


@pytest.mark.parametrize("guarded", [False, True])
def test_a_while_loop_under_vmap_stops_where_it_still_runs_with_its_condition(guarded):
    # As the docs say: JAX runs a vmapped while_loop's body for every element until the
    # last one is done, so a plain breakpoint stops at finished elements too.
    t = Transcript(*["p i", "c"] * 8)

    def run_to(limit):
        def keep_going(carry):
            return carry[0] < limit

        def body(carry):
            i, total = carry
            if guarded:
                jaxdbg.breakpoint_if(keep_going(carry), **t.options)
            else:
                jaxdbg.breakpoint(**t.options)
            return i + 1, total + i

        return jax.lax.while_loop(keep_going, body, (0, 0))[1]

    assert jax.jit(jax.vmap(run_to))(jnp.array([1, 3])).tolist() == [0, 3]
    elements = [re.search(r"batch (\d)/2", s).group(1) for s in t.stops()]
    steps = [int(re.search(r"\((\d+)", a).group(1)) for a in t.answers("p i")]
    if guarded:
        assert list(zip(elements, steps)) == [("1", 0), ("2", 0), ("2", 1), ("2", 2)]
    else:  # element 1 finished after its first step, and stops at the next two as well
        assert list(zip(elements, steps)) == [("1", 0), ("2", 0), ("1", 1), ("2", 1), ("1", 1), ("2", 2)]


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
    functions = [line.split()[2] for line in t.answers("where")[0].splitlines() if re.match(r"^[> ] +\d", line)]
    assert functions[0] == "user" and "helper" not in functions
    assert "jax/_src" not in t.answers("where")[0] and "_pytest" not in t.answers("where")[0]


def test_num_frames_and_unfiltered():
    t = Transcript("where", "c", "where", "c")
    jaxdbg.breakpoint(num_frames=1, **t.options)
    assert len([l for l in t.answers("where")[0].splitlines() if re.match(r"^[> ] +\d", l)]) == 1
    jaxdbg.breakpoint(filter_frames=False, **t.options)
    assert "_pytest" in t.answers("where")[1] or "pluggy" in t.answers("where")[1]


def test_quit_inside_jit_is_one_clear_line():
    from jaxdbg.runtime import quit_reporting

    t = Transcript("q")
    with pytest.raises(Exception) as info:
        jax.jit(lambda x: (jaxdbg.breakpoint(**t.options), x + 1)[1])(1.0)
    assert quit_reporting.stop_reason(info.value) == quit_reporting.QUIT_LINE
    # the process keeps going: the next stop works normally
    t2 = Transcript("p x", "c")
    jax.jit(lambda x: (jaxdbg.breakpoint(**t2.options), x)[1])(4.0)
    assert t2.answers("p x")[0].startswith("Array(4., dtype=float32")


def test_quit_in_pmap_stops_every_device():
    from jaxdbg.runtime import quit_reporting

    t = Transcript("q")
    with pytest.raises(Exception) as info:
        jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    assert quit_reporting.stop_reason(info.value) == quit_reporting.QUIT_LINE
    assert len(t.stops()) == 1


def test_concurrent_threads_are_served_one_at_a_time(temporary_backend):
    import threading

    t = Transcript(*["p tag", "c"] * 4)
    active, overlaps = [], []

    def probe(session, **options):
        active.append(1)
        overlaps.append(len(active))
        try:
            jaxdbg.frontends.cli.run_cli(session, **options)
        finally:
            active.pop()

    temporary_backend("probe", probe, options=jaxdbg.frontends.cli.OPTIONS)

    @jax.jit
    def f(tag):
        jaxdbg.breakpoint(backend="probe", stdin=t.stdin, stdout=t.stdout)
        return tag

    threads = [threading.Thread(target=lambda i=i: f(jnp.int32(i)).block_until_ready()) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
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
    """When the predicate is false no operand leaves the device: every host call of the
    stop is inside the true branch of the first lax.cond the program reaches."""

    def f(x):
        jaxdbg.breakpoint_if(x.sum() > 0)
        return x

    jaxpr = jax.make_jaxpr(f)(jnp.ones(3)).jaxpr

    def sub_jaxprs(params):  # jax.extend.core.jaxprs_in_params is newer than jax 0.7
        for value in params.values():
            for item in value if isinstance(value, (list, tuple)) else [value]:
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    yield inner

    def first_cond(j):
        for eqn in j.eqns:
            if eqn.primitive.name == "cond":
                return eqn
            found = next(filter(None, map(first_cond, sub_jaxprs(eqn.params))), None)
            if found is not None:
                return found
        return None

    def contains_callback(j, outside=None):
        for eqn in j.eqns:
            if eqn is outside:
                continue
            if eqn.primitive.name in (jax_host_calls.host_call_p.name, "debug_callback"):
                return True
            if any(contains_callback(sub, outside) for sub in sub_jaxprs(eqn.params)):
                return True
        return False

    cond = first_cond(jaxpr)
    assert cond is not None and not contains_callback(jaxpr, outside=cond)
    false_branch, true_branch = cond.params["branches"]
    assert not contains_callback(false_branch.jaxpr) and contains_callback(true_branch.jaxpr)


def test_ordered_breakpoint_under_vmap(recording_backend):
    order = recording_backend
    t = Transcript("c", "c")

    def f(x):
        jax.debug.callback(lambda: order.append("before"), ordered=True)
        jaxdbg.breakpoint(ordered=True, **t.options)
        jaxdbg.breakpoint(ordered=True, backend="record-order")
        return x

    batched = jax.vmap(f)
    assert _callback_orderings(batched, jnp.arange(2.0)) == [True, True, True]
    jax.jit(batched)(jnp.arange(2.0))
    assert ["batch 1/2" in t.stops()[0], "batch 2/2" in t.stops()[1]] == [True, True]
    assert order == ["before", "stop", "stop"]


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
    f = jax.jit(
        jax.shard_map(lambda x: (jaxdbg.breakpoint(**t.options), x)[1], mesh=mesh, in_specs=spec, out_specs=spec)
    )
    f(jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, spec))).block_until_ready()
    labels = sorted(re.search(r"(device \d \(rows=\d, cols=\d\))", s).group(1) for s in t.stops())
    assert len(labels) == 8 and "device 3 (rows=1, cols=1)" in labels
    assert set(t.answers("p x.shape")) == {"(2, 2)"}


@pytest.mark.parametrize("conditional", [False, True])
def test_a_token_under_shard_map_keeps_its_per_device_type(conditional):
    # A shard_map value varies over the mesh's axes; the token back from the host must
    # too, or JAX refuses the breakpoint's lax.cond ("manual axis types do not match").
    mesh = jax.make_mesh((8,), ("x",))
    t = Transcript("p y", "continue all")

    def per_device(x):
        y = x * 2
        if conditional:
            y = jaxdbg.breakpoint_if(jax.lax.axis_index("x") == 3, token=y, **t.options)
        else:
            y = jaxdbg.breakpoint(token=y, **t.options)
        return jax.lax.psum(y, "x")  # after the stop: the token orders it before the sum

    f = jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=P("x"), out_specs=P()))
    assert f(jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))).tolist() == [112.0, 128.0]
    assert t.answers("p y") == ["Array([12., 14.], dtype=float32)" if conditional else "Array([0., 2.], dtype=float32)"]


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
        return x**2

    @h.defjvp
    def h_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        jaxdbg.breakpoint(**t.options)
        return x**2, 2 * x * dx

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
        return (y**2).sum()

    np.testing.assert_allclose(jax.grad(loss)(jnp.ones(2)), [18.0, 18.0])
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(jnp.ones(2)), [18.0, 18.0])
    assert len(t.stops()) == 2, t.text  # the breakpoint stopped under grad and under jit(grad)
