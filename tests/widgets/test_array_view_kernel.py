"""The array view's messages in a real ipykernel while the cell is paused: a row's
small picture and the large view arrive as binary buffers, the slider's slice follows,
a bad request is answered with an error and the stop goes on, and the static summary
keeps the pictures as inline images."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, answer, live_panel, press, state, static_outputs, static_texts, wait_panel

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter")]

shared_kernel = kernel_fixture(SETUP)

CELL = textwrap.dedent("""
    @jax.jit
    def activations(x):
        act = jnp.log(x)                      # NaN where x < 0, -inf at 0
        cube = jnp.arange(2 * 3 * 4.0).reshape(2, 3, 4)
        params = {"w": x.astype(jnp.bfloat16), "on": x > 0}
        jaxdbg.breakpoint()
        return act
    x = jnp.linspace(-1.0, 1.0, 64).reshape(8, 8).at[4, 4].set(0.0)
    print("done", activations(x).shape)
""")


@pytest.mark.timeout(300)
def test_array_pictures_travel_as_buffers_while_paused(shared_kernel):
    kernel = shared_kernel
    mid = kernel.execute(CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    page = state(kernel, cid)["locals_page"]
    rows = {r["name"]: r for r in page["rows"]}
    assert rows["act"]["picture"] and rows["cube"]["picture"] and not rows["params"]["picture"]
    assert "picture_colours" in state(kernel, cid)

    kernel.send_custom(cid, {"type": "picture", "frame": page["frame"], "path": ["act"]})
    msg, buffers = answer(kernel, cid, "picture", 0)
    assert msg["picture"]["rows"] == 8 and len(buffers) == 1
    codes = np.frombuffer(buffers[0], np.uint8).reshape(8, 8)
    assert codes[0, 0] == 252 and codes[4, 4] == 254 and codes[7, 7] == 255  # NaN, -inf, log(1)

    kernel.send_custom(
        cid, {"type": "view", "frame": page["frame"], "path": ["cube"], "axes": None, "indices": {"0": 1}}
    )
    msg, buffers = answer(kernel, cid, "view", 0)
    assert msg["picture"]["index"] == [1, None, None] and "min=0 max=23" in msg["stats"]
    values = np.frombuffer(buffers[1], msg["picture"]["values"]).reshape(3, 4)
    assert values.tolist() == (np.arange(24.0).reshape(2, 3, 4)[1]).tolist()

    kernel.send_custom(cid, {"type": "expand", "frame": page["frame"], "path": ["params"]})
    children, _ = answer(kernel, cid, "children", 0)
    w = [r["name"] for r in children["rows"]].index("'w'")
    kernel.send_custom(
        cid, {"type": "view", "frame": page["frame"], "path": ["params", w], "axes": None, "indices": None}
    )
    msg, buffers = answer(kernel, cid, "view", 1)
    assert msg["picture"]["dtype"] == "bfloat16" and msg["picture"]["classes"]["zero"] == 1

    kernel.send_custom(cid, {"type": "view", "frame": page["frame"], "path": ["cube"], "axes": [1, 1], "indices": None})
    msg, _ = answer(kernel, cid, "view", 2)
    assert "two different axes" in msg["error"] and msg["picture"] is None

    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "done (8, 8)" in done.stdout, done
    html = static_outputs(done)[-1]
    assert html.count("data:image/png;base64,") >= 3, html[:500]
    assert "act: float32[8,8]" in static_texts(done)[-1]
