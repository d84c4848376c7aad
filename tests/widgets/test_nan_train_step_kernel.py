"""%jaxdbg nans on in a real ipykernel, on a Flax NNX train step jitted before the watch
was turned on (as users do once the loss prints nan): the panel opens at the user's
line during the call, before any traceback, with the Module's values; Continue ends
the cell with JAX's error, once, and the next cell runs."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, live_panel, press, submit, wait_banner, wait_log, wait_panel

pytestmark = [pytest.mark.kernel]
pytest.importorskip("flax.nnx")
pytest.importorskip("optax")

kernel = kernel_fixture(SETUP + "%load_ext jaxdbg\n", expect="backends ['widgets', 'cli'] devices 8")

MODEL_CELL = textwrap.dedent("""
    import optax
    from flax import nnx

    class Scaled(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(3, 4, rngs=rngs)
            self.scale = nnx.Param(jnp.array(0.3))

        def __call__(self, x):
            h = jax.nn.relu(self.l1(x))
            var = self.scale[...]
            return jnp.mean(h) + jnp.log(var)

    @nnx.jit
    def train_step(model, opt, x):
        loss, grads = nnx.value_and_grad(lambda m: m(x))(model)
        opt.update(model, grads)
        return loss

    model = Scaled(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.sgd(0.2), wrt=nnx.Param)
    x = jnp.ones((2, 3))
    print("step 0", train_step(model, opt, x))
""")


def test_an_nnx_train_step_jitted_before_the_watch_opens_the_panel_at_the_log(kernel):
    first = kernel.run(MODEL_CELL, timeout=180)
    assert first.status == "ok" and "step 0" in first.stdout, first
    kernel.run("%jaxdbg nans on")
    try:
        mid = kernel.execute("for i in range(1, 5):\n    print('step', i, train_step(model, opt, x))")
        wait_panel(kernel, mid)
        cid = live_panel(kernel)
        wait_banner(kernel, r"In\[\d+\]:12 in __call__$", cid, timeout=120)
        assert not kernel.result(mid).errors  # paused in the call: no traceback yet
        submit(kernel, "p var", cid=cid)
        wait_log(kernel, r"p var\nArray\(-0\.3666", cid)
        submit(kernel, "p self.l1.kernel.shape", cid=cid)
        wait_log(kernel, r"p self\.l1\.kernel\.shape\n\(3, 4\)", cid)
        press(kernel, "continue", cid)
        done = kernel.wait_reply(mid, timeout=120)
    finally:
        kernel.run("%jaxdbg nans off")
    assert [e["ename"] for e in done.errors] == ["FloatingPointError"], done
    assert "step 1" not in done.stdout, done  # the NaN was in step 1's call
    assert "Invalid nan value encountered" not in done.stdout, done
    after = kernel.run("print('next cell', float(jnp.sum(jnp.ones(3))))", timeout=120)
    assert after.status == "ok" and "next cell 3.0" in after.stdout, after
