"""%jaxdbg infs on in a real ipykernel: an Inf made on one device of a shard_map, of a
sharded jit (or in a pmapped gradient's backward pass) opens the panel at the user's line, naming the
primitive, the device and the pass; Continue ends the cell with JAX's error, once."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import (
    MODULE_HEADING,
    SETUP,
    live_panel,
    press,
    state,
    submit,
    wait_banner,
    wait_log,
    wait_panel,
    wait_source,
)

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jax")]

kernel = kernel_fixture(SETUP + "%load_ext jaxdbg\n%jaxdbg infs on\n", expect="backends ['widgets', 'cli'] devices 8")

SHARD_MAP_CELL = textwrap.dedent("""
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    shard_map = getattr(jax, "shard_map", None) or __import__(
        "jax.experimental.shard_map", fromlist=["shard_map"]).shard_map

    def shard_fn(block):
        shifted = block - 10.0
        return jax.lax.psum(jnp.log(shifted), "d")  # -Inf where a block holds a 10

    mesh = Mesh(np.array(jax.devices()), ("d",))
    f = jax.jit(shard_map(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P()))
    x = (jnp.arange(16.0) + 11).at[7].set(10.0)  # only device 3's block holds a 10
    f(x)
""")

SHARDED_JIT_CELL = textwrap.dedent("""
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    @jax.jit
    def step(x):
        shifted = x - 10.0
        return jnp.log(shifted) * 2  # -Inf where x holds a 10

    mesh = Mesh(np.array(jax.devices()), ("d",))
    x = jax.device_put((jnp.arange(16.0) + 11).at[7].set(10.0),  # device 3's shard
                       NamedSharding(mesh, P("d")))
    step(x)
""")

GRADIENT_CELL = textwrap.dedent("""
    def squashed(w):
        return jnp.tanh(1e20 * w) * 1e20  # finite; its gradient at 0 is 1e40: Inf

    def loss(w):
        return jnp.sum(squashed(w))

    w = jnp.ones((8, 2)).at[5, 1].set(0.0)  # only device 5's row holds a 0
    jax.pmap(jax.grad(loss))(w)
""")


def _ends_with_one_error(kernel, mid: str, cid: str) -> None:
    """Continue: the cell ends with JAX's FloatingPointError, shown once, and no
    post-mortem panel after it; the next cell runs."""
    press(kernel, "continue", cid)
    done = kernel.wait_reply(mid, timeout=180)
    assert done.status == "error", done
    assert [e["ename"] for e in done.errors] == ["FloatingPointError"], done
    assert "(inf)" in done.errors[0]["evalue"], done
    panels_shown = [
        m
        for m in done.messages
        if m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]
    assert len(panels_shown) == 1, done  # no post-mortem panel after the stop's
    after = kernel.run("print('next cell', float(jnp.sum(jnp.ones(3))))", timeout=120)
    assert after.status == "ok" and "next cell 3.0" in after.stdout, after


def _stop_of(kernel, cell: str, function: str, device: int) -> tuple[str, str, dict]:
    """Run ``cell``: the panel its Inf opens, at ``function`` on ``device``."""
    mid = kernel.execute(cell)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    wait_banner(kernel, rf"in {function} \(device {device}\)$", cid, timeout=120)
    wait_source(kernel, rf"in {function}$", cid)
    return mid, cid, state(kernel, cid)["status"]


@pytest.mark.timeout(400)
def test_an_inf_on_one_shard_map_device_opens_the_panel_at_its_line(kernel):
    mid, cid, status = _stop_of(kernel, SHARD_MAP_CELL, "shard_fn", 3)
    assert status["reason"] == "Inf made by log", status
    submit(kernel, "p shifted", cid=cid)  # device 3's block, as JAX's re-run computed it
    wait_log(kernel, r"\(jaxdbg\) p shifted\nArray\(\[7., 0.\], dtype=float32\)", cid)
    press(kernel, "up", cid)
    wait_source(kernel, MODULE_HEADING, cid)
    submit(kernel, "p x[6:8]", cid=cid)  # the cell's own values are live
    wait_log(kernel, r"\(jaxdbg\) p x\[6:8\]\nArray\(\[17., 10.\], dtype=float32\)", cid)
    _ends_with_one_error(kernel, mid, cid)


@pytest.mark.timeout(400)
def test_an_inf_of_a_pmapped_gradient_names_the_device_and_the_backward_pass(kernel):
    mid, cid, status = _stop_of(kernel, GRADIENT_CELL, "squashed", 5)
    assert status["reason"] == "Inf made by mul in the backward pass (the gradient) of this line", status
    press(kernel, "up", cid)  # past loss, to the cell
    press(kernel, "up", cid)
    wait_source(kernel, MODULE_HEADING, cid)
    submit(kernel, "p w[5]", cid=cid)
    wait_log(kernel, r"\(jaxdbg\) p w\[5\]\nArray\(\[1., 0.\], dtype=float32\)", cid)
    _ends_with_one_error(kernel, mid, cid)


@pytest.mark.timeout(400)
def test_an_inf_on_one_device_of_a_sharded_jit_opens_the_panel_with_the_reruns_values(kernel):
    mid, cid, status = _stop_of(kernel, SHARDED_JIT_CELL, "step", 3)
    assert status["reason"] == "Inf made by log", status
    submit(kernel, "p shifted[6:8]", cid=cid)  # JAX's op-by-op re-run's frame: real values
    wait_log(kernel, r"\(jaxdbg\) p shifted\[6:8\]\nArray\(\[7., 0.\], dtype=float32\)", cid)
    _ends_with_one_error(kernel, mid, cid)
