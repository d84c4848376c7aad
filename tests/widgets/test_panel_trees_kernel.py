"""A Flax NNX model and its gradients in the panel (a real ipykernel, the messages a
browser sends): a pytree row opens by key path, each inner node with the summary of its
subtree and the NaN mark carried up, each leaf an array row with its picture and the
array view; a 10,000-leaf tree opens at once, its first rows only."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, answer, live_panel, press, state, submit, wait_log, wait_panel

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP)

CELL = textwrap.dedent("""
    import numpy as np
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(4, 16, rngs=rngs)
            self.l2 = nnx.Linear(16, 2, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.relu(self.l1(x)))

    model = MLP(nnx.Rngs(0))
    # An argument, not built in the step: 10,000 ops would cost the compile, not the stop.
    BIG = {f"w{i:05d}": np.full((4,), float(i), np.float32) for i in range(10_000)}

    @nnx.jit
    def train_step(model, x, big):
        grads = nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model)
        grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...].at[:3, 0].set(jnp.nan)
        jaxdbg.breakpoint()
        return grads

    train_step(model, jnp.ones((8, 4)), BIG)
    print("stepped")
""")


@pytest.mark.timeout(300)
def test_a_gradient_tree_opens_down_to_the_leaf_that_holds_the_nan(kernel):
    pytest.importorskip("flax", reason="the test extra installs flax")
    mid = kernel.execute(CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    page = state(kernel, cid)["locals_page"]
    frame = page["frame"]
    rows = {r["name"]: r for r in page["rows"]}
    grads, model = rows["grads"], rows["model"]
    assert grads["expandable"] and grads["nonfinite"] and grads["type"] == "State"
    assert grads["summary"].endswith("NaN in ['l2']['kernel'] (3)")
    assert model["expandable"] and not model["nonfinite"] and model["summary"].startswith("nnx.Module · 4 arrays")

    seen = 0

    def open_(path):
        nonlocal seen
        kernel.send_custom(cid, {"type": "expand", "frame": frame, "path": path})
        msg, _ = answer(kernel, cid, "children", seen)
        seen += 1
        return msg

    layers = open_(["grads"])["rows"]
    assert [r["name"] for r in layers] == ["'l1'", "'l2'"]
    assert [r["nonfinite"] for r in layers] == [False, True]  # the mark follows the NaN down
    assert layers[1]["summary"].endswith("NaN in ['kernel'] (3)") and layers[1]["expandable"]
    leaves = open_(["grads", 1])["rows"]
    kernel_row = next(r for r in leaves if r["name"] == "'kernel'")
    assert kernel_row["type"] == "Param" and kernel_row["array"] == "float32[16,2]"
    assert kernel_row["nonfinite"] and kernel_row["picture"] and not kernel_row["expandable"]
    assert "nan=3" in kernel_row["summary"]
    at = [r["name"] for r in leaves].index("'kernel'")

    kernel.send_custom(cid, {"type": "picture", "frame": frame, "path": ["grads", 1, at]})
    msg, buffers = answer(kernel, cid, "picture", 0)
    assert msg["picture"]["rows"] == 16 and len(buffers) == 1
    kernel.send_custom(cid, {"type": "view", "frame": frame, "path": ["grads", 1, at], "axes": None, "indices": None})
    msg, _ = answer(kernel, cid, "view", 0)
    assert msg["picture"]["classes"]["nan"] == 3 and "nan=3" in msg["stats"]

    layer = open_(["model"])["rows"]
    assert [r["name"] for r in layer] == ["l1", "l2"] and all(r["type"] == "Linear" for r in layer)
    params = open_(["model", 0])["rows"]
    assert {r["name"]: r["type"] for r in params} == {"bias": "Param", "kernel": "Param"}

    # a 10,000-leaf tree is sent with its kind and size; its summary comes once it is shown
    assert rows["big"]["pending"] and rows["big"]["summary"] == "dict · 10,000 entries · summary when shown"
    kernel.send_custom(cid, {"type": "stats", "frame": frame, "path": ["big"]})
    shown, _ = answer(kernel, cid, "stats", 0)
    assert shown["row"]["summary"].startswith("10,000 arrays · 40,000 float32 · 156 KB · ‖·‖ ")
    assert not shown["row"]["pending"]
    first = open_(["big"])
    assert first["total"] == 10_000 and len(first["rows"]) < 1_000
    assert first["rows"][2]["name"] == "'w00002'" and first["rows"][2]["summary"].startswith("min=2 max=2")

    # pp draws the tree as text in the console (rich must not display it itself in a kernel)
    submit(kernel, "pp grads")
    wait_log(kernel, r"\(jaxdbg\) pp grads\ngrads  State  nnx\.State · 4 arrays[^\n]*\n├── \['l1'\]  dict")

    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "stepped" in done.stdout, done
