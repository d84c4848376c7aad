"""The panel's frame list folds installed libraries' frames (a Flax NNX step in a real
ipykernel): one row per run, Up / Down over them, ``library_frames on`` lists them."""

from __future__ import annotations

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, live_panel, press, state, submit, wait_log, wait_panel, wait_source

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli'] devices")

NNX_CELL = """
import os
os.environ.pop("JAXDBG_LIBRARY_FRAMES", None)
from flax import nnx

model = nnx.Linear(2, 2, rngs=nnx.Rngs(0))

@nnx.jit
def train_step(model, x):
    def loss_fn(model):
        y = model(x)
        jaxdbg.breakpoint()
        return jnp.sum(y ** 2)
    return nnx.grad(loss_fn)(model)

train_step(model, jnp.ones((1, 2)))
print("stepped")
"""


def _frames(kernel, cid):
    return state(kernel, cid)["frames"]


@pytest.mark.timeout(300)
def test_flax_frames_are_one_row_and_up_steps_over_them(kernel):
    pytest.importorskip("flax", reason="the test extra installs flax")
    mid = kernel.execute(NNX_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    wait_source(kernel, r"in loss_fn$")
    rows = _frames(kernel, cid)
    assert rows[0]["function"] == "loss_fn" and rows[0]["index"] == 0
    folds = [r for r in rows if "fold" in r]
    assert folds and folds[0]["fold"].endswith("frames in flax") and folds[0]["count"] >= 2
    step = next(r for r in rows if r.get("function") == "train_step")
    assert step["index"] == rows[0]["index"] + 1 + folds[0]["count"]  # real indices, past the fold
    assert not state(kernel, cid)["status"]["oldest"]

    press(kernel, "up")  # over flax's frames at once
    wait_source(kernel, r"in train_step$")
    assert state(kernel, cid)["selected"] == step["index"]

    press(kernel, f"frame {folds[0]['index']}")  # a click on the fold: its first frame, unfolded
    wait_source(kernel, r"in \S+$")
    kernel.wait_for(
        lambda: any(r.get("index") == folds[0]["index"] and "function" in r for r in _frames(kernel, cid)),
        30,
        "the selected library frame on its own row",
    )

    submit(kernel, "library_frames on")
    wait_log(kernel, r"\(jaxdbg\) library_frames on\n")
    kernel.wait_for(lambda: not any("fold" in r for r in _frames(kernel, cid)), 30, "every frame on its own row")
    assert any("site-packages/flax/" in r["path"] for r in _frames(kernel, cid))
    submit(kernel, "library_frames off")
    kernel.wait_for(lambda: any("fold" in r for r in _frames(kernel, cid)), 30, "folded again")

    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "stepped" in done.stdout, done
