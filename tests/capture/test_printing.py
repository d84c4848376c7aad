"""jaxdbg.print / jaxdbg.callback outside a notebook: JAX's text, JAX's errors, and the
location, batch element and device each row carries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.capture import jax_print_routing, prints
from support.jax_setups import automatic_axes, explicit_axes, shard_map

PROGRAM = Path(__file__).resolve().parents[1] / "support" / "programs" / "print_program.py"
THIS_FILE = __file__


def run_program(flavour: str) -> bytes:
    done = subprocess.run([sys.executable, str(PROGRAM), flavour], capture_output=True, timeout=300, check=True)
    return done.stdout


def test_terminal_text_is_byte_identical_to_jax_debug_print():
    theirs, ours = run_program("jax"), run_program("jaxdbg")
    assert b"step 5.0" in theirs and b"v=20.00" in theirs and b"grad input 3.0" in theirs
    assert ours == theirs


@pytest.fixture
def rows():
    collected: list[prints.PrintRow] = []
    with prints.sink_installed(collected.append):
        yield collected


def test_rows_carry_location_and_batch_labels(rows):
    def f(x):
        jaxdbg.print("x={}", x)
        return x

    line = f.__code__.co_firstlineno + 1
    jax.jit(jax.vmap(jax.vmap(f)))(jnp.arange(6.0).reshape(2, 3))
    assert sorted(r.text for r in rows) == [f"x={float(i)}" for i in range(6)]
    assert {r.site.location for r in rows} == {f"{THIS_FILE}:{line}"}
    assert {r.site.function for r in rows} == {"f"}
    labels = {r.text: r.site.batch_label for r in rows}
    assert labels["x=0.0"] == "batch 1/2, 1/3" and labels["x=5.0"] == "batch 2/2, 3/3"


@pytest.mark.multidevice
@pytest.mark.parametrize("axes", ["automatic", "explicit"])
def test_a_print_under_vmap_over_a_sharded_batch_prints_each_element(rows, axes):
    # JAX's own loop over the batch indexes the sharded axis, which explicit mesh axes
    # refuse ("slicing on sharded dims"): jax.debug.print raises there, on every JAX.
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((8,), ("batch",), **(explicit_axes(1) if axes == "explicit" else automatic_axes(1)))
    f = jax.jit(jax.vmap(lambda x: (jaxdbg.print("x={}", x), x * 2)[1]))
    out = f(jax.device_put(jnp.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("batch"))))
    assert out.tolist() == (2 * np.arange(16.0).reshape(8, 2)).tolist()
    jax.effects_barrier()
    assert {r.text: r.site.batch_label for r in rows} == {
        f"x={np.arange(16.0).reshape(8, 2)[i]}": f"batch {i + 1}/8" for i in range(8)
    }


@pytest.mark.multidevice
def test_a_partitioned_print_under_vmap_over_a_sharded_batch_prints_each_devices_shard(rows):
    # Only the batch axis is gathered for the loop over it; each element's own split axis
    # stays split, so each device prints its shard, as on a mesh with automatic axes.
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    printed = {}
    for axes in ("automatic", "explicit"):
        mesh = jax.make_mesh((4, 2), ("batch", "m"), **(explicit_axes(2) if axes == "explicit" else automatic_axes(2)))
        f = jax.jit(jax.vmap(lambda x: (jaxdbg.print("x={}", x, partitioned=True), x * 2)[1]))
        f(jax.device_put(jnp.arange(16.0).reshape(4, 4), NamedSharding(mesh, P("batch", "m")))).block_until_ready()
        jax.effects_barrier()
        printed[axes] = sorted((r.site.batch_label, r.site.device_label, r.text) for r in rows)
        rows.clear()
    assert ("batch 2/4", "device 1", "x=[6. 7.]") in printed["explicit"]
    assert len(printed["explicit"]) == 32 and printed["explicit"] == printed["automatic"]


@pytest.mark.multidevice
def test_pmap_and_shard_map_rows_name_their_device(rows):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    def f(x):
        jaxdbg.print("v={}", x)
        return x

    jax.pmap(f)(jnp.arange(4.0))
    jax.effects_barrier()  # pmap's callbacks run on XLA threads, as jax.debug.print's do
    assert {r.text: r.site.device_label for r in rows} == {f"v={float(i)}": f"device {i}" for i in range(4)}
    rows.clear()
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    jax.jit(shard_map()(f, mesh=mesh, in_specs=P("a", "b"), out_specs=P("a", "b")))(jnp.arange(4.0).reshape(2, 2))
    jax.effects_barrier()
    assert {r.site.device_label for r in rows} == {
        "device 0 (a=0, b=0)",
        "device 1 (a=0, b=1)",
        "device 2 (a=1, b=0)",
        "device 3 (a=1, b=1)",
    }


def test_scan_and_grad_print_once_per_step(rows):
    def body(c, x):
        jaxdbg.print("c={} x={}", c, x)
        return c + x, None

    jax.grad(lambda xs: jax.lax.scan(body, 0.0, xs)[0])(jnp.arange(3.0))
    assert [r.text for r in rows] == ["c=0.0 x=0.0", "c=0.0 x=1.0", "c=1.0 x=2.0"]
    assert all(r.site.batch_label is None and r.site.device_label is None for r in rows)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: jaxdbg.print("{}", 1, 2), "Unused positional arguments to `jax.debug.print`: [2]"),
        (lambda: jaxdbg.print("{x}", x=1, y=2), "Unused keyword arguments to `jax.debug.print`: ['y']"),
        (lambda: jaxdbg.callback(3), "first argument to jax.debug.callback must be callable"),
    ],
)
def test_errors_match_jax(call, message):
    with pytest.raises(Exception) as ours:
        call()
    assert message in str(ours.value)


def test_errors_are_the_same_as_jax_debug_print():
    for args, kwargs in ((("{}", 1, 2), {}), (("{x}",), {"x": 1, "y": 2}), (("{} {}", 1), {})):
        with pytest.raises(Exception) as theirs:
            jax.debug.print(*args, **kwargs)
        with pytest.raises(Exception) as ours:
            jaxdbg.print(*args, **kwargs)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_callback_sees_its_call_site():
    seen = []

    def record(value, scale=1):
        site = prints.current_call()
        seen.append((float(value) * scale, site.batch_label, site.function))

    def f(x):
        jaxdbg.callback(record, x, scale=10)
        return x

    jax.jit(jax.vmap(f))(jnp.arange(2.0))
    assert seen == [(0.0, "batch 1/2", "f"), (10.0, "batch 2/2", "f")]
    assert prints.current_call() is None


def test_ordered_prints_keep_program_order(rows):
    @jax.jit
    def f(x):
        for k in range(10):
            jaxdbg.print("{}", x + k, ordered=True)
        return x

    f(0)
    assert [r.text for r in rows] == [str(k) for k in range(10)]


def test_routing_off_sends_jax_prints_to_stdout_even_when_traced_before(rows, capsys):
    jax_print_routing.route_jax_print()
    try:
        f = jax.jit(lambda x: jax.debug.print("routed {}", x))
        f(1)
        assert [r.text for r in rows] == ["routed 1"] and rows[0].from_jax
        prints.set_routing(False)
        f(2)  # traced while routing was on: decided on the host
        jax.jit(lambda x: jax.debug.print("fresh {}", x))(3)
        jaxdbg.print("ours {}", 4)
    finally:
        prints.set_routing(True)
        jax_print_routing.unroute_jax_print()
    assert capsys.readouterr().out == "routed 2\nfresh 3\n"
    assert [r.text for r in rows] == ["routed 1", "ours 4"]
    assert jax.debug.print is not jax_print_routing._routed_jax_print


def test_a_failing_sink_still_prints(capsys):
    def broken(row):
        raise RuntimeError("view is gone")

    with prints.sink_installed(broken):
        jaxdbg.print("kept {}", 1)
    assert capsys.readouterr().out == "kept 1\n"
