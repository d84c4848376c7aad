"""jaxdbg.print / jaxdbg.callback as drop-ins for jax.debug.print / callback.

Each program runs three ways in the same process: with JAX's own functions, with
jaxdbg's called directly, and with ``jax.debug.*`` standing for jaxdbg's (print routed
as ``%load_ext jaxdbg`` routes it, callback rebound by the user). What the two jaxdbg
ways write to stdout must be what JAX wrote.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import types
from typing import Iterator

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.capture import jax_print_routing, prints
from jaxdbg.runtime import jax_routes
from support.jax_setups import shard_map

JAX_PRINT = jax_routes.PRINT.original()
JAX_CALLBACK = jax_routes.CALLBACK.original()
HAS_TWO_CALL_FORM = inspect.signature(JAX_PRINT).parameters["fmt"].default is None
needs_two_call_form = pytest.mark.skipif(
    not HAS_TWO_CALL_FORM, reason=f"jax.debug.print / callback of JAX {jax.__version__} have no two-call form"
)


WAYS = {
    "jax": types.SimpleNamespace(print=JAX_PRINT, callback=JAX_CALLBACK),
    "jaxdbg": types.SimpleNamespace(print=jaxdbg.print, callback=jaxdbg.callback),
    # jax.debug.* looked up at call time: routed (print) or rebound (callback) to jaxdbg's
    "routed": types.SimpleNamespace(
        print=lambda *a, **k: jax.debug.print(*a, **k), callback=lambda *a, **k: jax.debug.callback(*a, **k)
    ),
}


@contextlib.contextmanager
def way_in_place(name: str) -> Iterator[types.SimpleNamespace]:
    """The functions of one way, with jax.debug's names routed to jaxdbg's for "routed"."""
    if name != "routed":
        yield WAYS[name]
        return
    jax_print_routing.route_jax_print()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jax.debug, "callback", jaxdbg.callback)
        try:
            yield WAYS[name]
        finally:
            jax_print_routing.unroute_jax_print()


@pytest.fixture
def run_three_ways(capfd):
    """``run(program)`` calls ``program(debug)`` for each way; returns {way: stdout}."""

    def run(program, sort=False):
        outputs = {}
        for name in WAYS:
            with way_in_place(name) as debug:
                program(debug)
                jax.effects_barrier()
            out = capfd.readouterr().out
            outputs[name] = sorted(out.splitlines()) if sort else out
        return outputs

    return run


def same_as_jax(outputs):
    assert outputs["jax"], "the program printed nothing with JAX's own functions"
    assert outputs["jaxdbg"] == outputs["jax"]
    assert outputs["routed"] == outputs["jax"]


def raised(call):
    try:
        call()
    except Exception as exc:  # the comparison is of what was raised
        return type(exc), str(exc)
    return None


# -- the two-call form ------------------------------------------------------------------


@needs_two_call_form
def test_two_call_form_prints_and_calls_back_as_jax_does(run_three_ways):
    def program(debug):
        @jax.jit
        def f(x):
            debug.print(ordered=True)("first {}", x)
            debug.callback(ordered=True)(lambda v, scale: print("called", v * scale), x, scale=2)
            debug.print(ordered=True)("then {y}", y=x + 1)
            return x

        f(jnp.float32(1.5))
        debug.print(ordered=False)("eager {}", 3)

    same_as_jax(run_three_ways(program))


@needs_two_call_form
@pytest.mark.parametrize(
    "misuse",
    [
        "print(None, 42, ordered=True)",  # positional arguments in the first call
        "print(ordered=True, x=1)",  # format arguments in the first call
        "print(ordered=True)('hello {}', 1, ordered=True)",  # options in both calls
        "callback(None, 42, ordered=True)",
        "callback(ordered=True, x=1)",
        "callback(ordered=True)(3)",  # not callable
    ],
)
def test_two_call_misuse_raises_what_jax_raises(misuse):
    results = {}
    for name in WAYS:
        with way_in_place(name) as debug:
            results[name] = raised(lambda: eval(misuse, {"print": debug.print, "callback": debug.callback}))
    assert results["jax"] is not None
    assert results["jaxdbg"] == results["jax"] and results["routed"] == results["jax"]


@pytest.mark.skipif(HAS_TWO_CALL_FORM, reason="this JAX has the two-call form")
def test_without_the_two_call_form_in_jax_jaxdbg_has_none_either():
    for ours, theirs in ((jaxdbg.print, JAX_PRINT), (jaxdbg.callback, JAX_CALLBACK)):
        assert raised(lambda: ours(ordered=True))[0] is TypeError
        assert raised(lambda: ours(ordered=True)) == raised(lambda: theirs(ordered=True))


# -- rebinding JAX's names to jaxdbg's --------------------------------------------------


def test_rebinding_jax_debug_to_jaxdbg_does_not_recurse(monkeypatch, capfd):
    monkeypatch.setattr(jax.debug, "callback", jaxdbg.callback)
    monkeypatch.setattr(jax.debug, "print", jaxdbg.print)

    @jax.jit
    def f(x):
        jax.debug.print("x={}", x)
        jax.debug.callback(lambda v: print("cb", v), x)
        jax.vmap(lambda v: jax.debug.print("v={}", v))(jnp.arange(2.0) + x)
        return x

    f(1.0)
    jax.grad(lambda x: (jax.debug.print("g={}", x), x * x)[1])(2.0)
    assert capfd.readouterr().out == "x=1.0\ncb 1.0\nv=1.0\nv=2.0\ng=2.0\n"


# -- positional arguments in the routed print --------------------------------------------


def test_routed_print_keeps_positional_arguments_when_fmt_is_none():
    jax_print_routing.route_jax_print()
    try:
        ours = raised(lambda: jax.debug.print(None, 42, ordered=True)("hello {a}"))
    finally:
        jax_print_routing.unroute_jax_print()
    assert ours == raised(lambda: JAX_PRINT(None, 42, ordered=True)("hello {a}"))
    assert ours[0] is TypeError  # never the KeyError of a dropped argument


# -- rematerialisation --------------------------------------------------------------------


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "vmap_grad", "scan_grad"])
def test_checkpoint_prints_again_in_the_recompute_as_jax_does(transform, run_three_ways):
    def program(debug):
        def f(x):
            debug.print("forward {}", x)
            debug.callback(lambda v: print("callback", v), x)
            return jnp.sin(x) * 2

        g = jax.grad(jax.checkpoint(f))
        if transform == "grad":
            g(1.0)
        elif transform == "jit_grad":
            jax.jit(g)(1.0)
        elif transform == "vmap_grad":
            jax.vmap(g)(jnp.arange(2.0))
        else:

            def step(c, x):
                return c + jax.checkpoint(f)(x), None

            jax.grad(lambda xs: jax.lax.scan(step, 0.0, xs)[0])(jnp.arange(2.0))

    outputs = run_three_ways(program)
    same_as_jax(outputs)
    assert outputs["jax"].count("forward") >= 2  # JAX does print again


POLICIES = {
    "everything saveable": jax.checkpoint_policies.everything_saveable,
    "nothing saveable": jax.checkpoint_policies.nothing_saveable,
    "dots saveable": jax.checkpoint_policies.dots_saveable,
    "save only a": jax.checkpoint_policies.save_only_these_names("a"),
    "save names but b": jax.checkpoint_policies.save_any_names_but_these("b"),
    "save anything but a": jax.checkpoint_policies.save_anything_except_these_names("a"),
    "save anything but a and b": jax.checkpoint_policies.save_anything_except_these_names("a", "b"),
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_remat_policies_decide_as_for_jax_prints(policy, run_three_ways):
    """Where the policy saves what a print reads, the print is not run again."""
    from jax.ad_checkpoint import checkpoint_name

    def program(debug):
        def f(x):
            a = checkpoint_name(x + 1.0, "a")
            b = checkpoint_name(a * 2.0, "b")
            debug.print("a={} b={}", a, b)
            debug.print("x={}", x)
            return checkpoint_name(jnp.exp(b), "c")

        jax.grad(jax.checkpoint(f, policy=POLICIES[policy]))(jnp.float32(0.5))
        jax.jit(jax.grad(jax.checkpoint(f, policy=POLICIES[policy])))(jnp.float32(0.25))

    same_as_jax(run_three_ways(program))


def test_recomputed_rows_say_so():
    rows: list[prints.PrintRow] = []
    seen = []

    def f(x):
        jaxdbg.print("x={}", x)
        jaxdbg.callback(lambda v: seen.append(prints.current_call().recomputed), x)
        return jnp.sin(x)

    with prints.sink_installed(rows.append):
        jax.grad(jax.checkpoint(f))(1.0)
        jax.grad(f)(1.0)
    assert [(r.text, r.site.recomputed) for r in rows] == [("x=1.0", False), ("x=1.0", True), ("x=1.0", False)]
    assert seen == [False, True, False]


# -- partitioned=True -----------------------------------------------------------------


@pytest.mark.multidevice
def test_partitioned_prints_each_shard_locally_as_jax_does(run_three_ways):
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))

    def program(debug):
        @jax.jit
        def f(x):
            debug.print("shard {}", x, partitioned=True)
            # One write per line: shards call back on several threads at once.
            debug.callback(lambda v: sys.stdout.write(f"local {np.asarray(v).shape}\n"), x, partitioned=True)
            return x * 2

        f(x)

    outputs = run_three_ways(program, sort=True)
    same_as_jax(outputs)
    assert outputs["jax"].count("local (2,)") == 4  # four local shards, nothing gathered


@pytest.mark.multidevice
def test_partitioned_rows_under_shard_map_carry_their_device():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:4]), ("x",))
    rows: list[prints.PrintRow] = []

    def f(x):
        jaxdbg.print("v={}", x, partitioned=True)
        return x

    with prints.sink_installed(rows.append):
        jax.jit(shard_map()(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(jnp.arange(4.0))
        jax.effects_barrier()
    assert {r.text: r.site.device_label for r in rows} == {f"v=[{i}.]": f"device {i}" for i in range(4)}
    assert all(r.partitioned for r in rows)


@pytest.mark.multidevice
@pytest.mark.parametrize("way", ["jaxdbg", "routed"])
@pytest.mark.parametrize("spec", [("a", "b"), ("a", None), ()], ids=["split", "rows", "replicated"])
def test_partitioned_rows_under_a_sharded_jit_carry_the_device_holding_the_shard(way, spec):
    """Each row's device is one that JAX says holds the printed shard, each device once."""
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    # Devices 2..5, so that a device id is never its position in the mesh.
    mesh = Mesh(np.array(jax.devices()[2:6]).reshape(2, 2), ("a", "b"))
    x = jax.device_put(jnp.arange(16.0).reshape(4, 4), NamedSharding(mesh, P(*spec)))
    rows: list[prints.PrintRow] = []
    with way_in_place(way) as debug, prints.sink_installed(rows.append):

        @jax.jit
        def f(x):
            debug.print("v={}", x, partitioned=True)
            jax.vmap(lambda r: debug.print("row={}", r, partitioned=True))(x)
            return x * 2

        f(x)
        jax.effects_barrier()
        # The positions operand moves nothing: the print alone compiles to no collective.
        compiled = jax.jit(lambda x: debug.print("v={}", x, partitioned=True)).lower(x).compile()
    assert not [op for op in ("all-gather(", "all-reduce(", "all-to-all(") if op in compiled.as_text()]

    holds = {d.id: np.asarray(x)[index] for d, index in x.sharding.devices_indices_map(x.shape).items()}
    whole = [r for r in rows if r.text.startswith("v=")]
    assert sorted(r.site.device for r in whole) == sorted(holds)
    for r in whole:
        assert r.text == f"v={holds[r.site.device]}"
        assert r.site.device_label == f"device {r.site.device}"
    # Under vmap each element's call runs on every device (with whatever layout XLA
    # gives the element), and each of those rows says which.
    per_element = sorted((r.site.batch_index, r.site.device) for r in rows if r.text.startswith("row="))
    assert per_element == sorted(((i,), d) for i in range(4) for d in holds)


@pytest.mark.multidevice
def test_partitioned_rows_on_explicit_mesh_axes_carry_their_device():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh_context = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
    mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,), devices=jax.devices()[4:8])
    rows: list[prints.PrintRow] = []
    with mesh_context(mesh), prints.sink_installed(rows.append):
        x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
        jax.jit(lambda x: jaxdbg.print("v={}", x, partitioned=True))(x)
        jax.effects_barrier()
    holds = {d.id: np.asarray(x)[index] for d, index in x.sharding.devices_indices_map(x.shape).items()}
    assert sorted((r.site.device, r.text) for r in rows) == sorted((d, f"v={v}") for d, v in holds.items())


@pytest.mark.multidevice
def test_a_trace_compiled_for_other_devices_leaves_rows_without_a_device():
    """One trace, two device sets: a row cannot say which program printed it."""
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    rows: list[prints.PrintRow] = []

    @jax.jit
    def f(x):
        jaxdbg.print("v={}", x, partitioned=True)
        return x

    with prints.sink_installed(rows.append):
        for devices in (jax.devices()[:2], jax.devices()[2:4]):
            f(jax.device_put(jnp.arange(4.0), NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))))
            jax.effects_barrier()
    if f._cache_size() != 2 or len(rows) != 4:
        pytest.skip("this JAX traced the function again for the second mesh")
    assert [r.site.device for r in rows[:2]] != [None, None]
    assert all(r.site.device is None for r in rows[2:])


def test_transposing_a_function_that_prints_prints_nothing_as_jax(run_three_ways):
    def program(debug):
        def f(x):
            debug.print("transposed {}", x)
            return 2 * x

        (ct,) = jax.linear_transpose(f, 1.0)(1.0)
        debug.print("cotangent {}", ct)

    outputs = run_three_ways(program)
    same_as_jax(outputs)
    assert outputs["jax"] == "cotangent 2.0\n"
