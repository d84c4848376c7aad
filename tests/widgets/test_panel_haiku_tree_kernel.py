"""Haiku's params and gradients in the panel (a real ipykernel, the messages a browser
sends): the row says ``hk params / state``, opens module by module (``'mlp/~/linear_1'``)
with the NaN mark carried down to the leaf that holds it, whose picture and array view
show the NaN; ``pp`` of the gradients draws their tree in the console."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, answer, live_panel, press, state, submit, wait_log, wait_panel

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP)

CELL = textwrap.dedent("""
    import haiku as hk

    net = hk.transform(lambda x: hk.nets.MLP([16, 2])(x))
    params = net.init(jax.random.PRNGKey(0), jnp.ones((8, 4)))

    @jax.jit
    def train_step(params, x):
        grads = jax.grad(lambda p: jnp.mean(net.apply(p, None, x) ** 2))(params)
        grads["mlp/~/linear_1"]["w"] = grads["mlp/~/linear_1"]["w"].at[:3, 0].set(jnp.nan)
        jaxdbg.breakpoint()
        return grads

    train_step(params, jnp.ones((8, 4)))
    print("stepped")
""")


@pytest.mark.timeout(300)
def test_haiku_gradients_open_module_by_module_down_to_the_leaf_that_holds_the_nan(kernel):
    pytest.importorskip("haiku", reason="the test extra installs dm-haiku")
    mid = kernel.execute(CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    page = state(kernel, cid)["locals_page"]
    frame = page["frame"]
    rows = {r["name"]: r for r in page["rows"]}
    grads, params = rows["grads"], rows["params"]
    assert grads["expandable"] and grads["nonfinite"] and grads["type"] == "dict"
    assert grads["summary"].startswith("hk params / state · 4 arrays · 114 float32 · 456 B")
    assert grads["summary"].endswith("NaN in ['mlp/~/linear_1']['w'] (3)")
    assert params["summary"].startswith("hk params / state · 4 arrays") and not params["nonfinite"]

    seen = 0

    def open_(path):
        nonlocal seen
        kernel.send_custom(cid, {"type": "expand", "frame": frame, "path": path})
        msg, _ = answer(kernel, cid, "children", seen)
        seen += 1
        return msg

    modules = open_(["grads"])["rows"]
    assert [(r["name"], r["nonfinite"]) for r in modules] == [("'mlp/~/linear_0'", False), ("'mlp/~/linear_1'", True)]
    assert modules[1]["summary"].endswith("NaN in ['w'] (3)") and modules[1]["expandable"]
    leaves = open_(["grads", 1])["rows"]
    assert [r["name"] for r in leaves] == ["'b'", "'w'"]
    w = leaves[1]
    assert w["type"] == "Array" and w["array"] == "float32[16,2]" and w["nonfinite"] and w["picture"]
    assert not leaves[0]["nonfinite"] and "nan=3" in w["summary"]

    kernel.send_custom(cid, {"type": "view", "frame": frame, "path": ["grads", 1, 1], "axes": None, "indices": None})
    msg, _ = answer(kernel, cid, "view", 0)
    assert msg["picture"]["classes"]["nan"] == 3 and "nan=3" in msg["stats"]

    submit(kernel, "pp grads")
    wait_log(
        kernel, r"\(jaxdbg\) pp grads\ngrads  dict  hk params / state · 4 arrays[^\n]*\n├── \['mlp/~/linear_0'\]  dict"
    )

    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "stepped" in done.stdout, done
