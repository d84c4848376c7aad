"""Interrupting a pmap stop's panel in a real ipykernel: one line, and nothing stale after."""

from __future__ import annotations

import re

import pytest

from jaxdbg.runtime.quit_reporting import INTERRUPT_LINE
from support.panel_driver import SETUP, live_panel, wait_panel

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jax"), pytest.mark.multidevice, pytest.mark.timeout(400)]

PMAP_CELL = """
def body(x):
    jaxdbg.breakpoint()
    return x * 10
print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
"""


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_interrupting_an_idle_pmap_panel_is_one_line_and_leaves_nothing_stale(kernel):
    assert kernel.run(SETUP, timeout=180).status == "ok"
    for attempt in range(2):  # the second time checks that nothing of the first lingers
        mid = kernel.execute(PMAP_CELL)
        wait_panel(kernel, mid)
        live_panel(kernel)  # the panel is up and waiting for a click
        kernel.interrupt()
        done = kernel.wait_reply(mid, timeout=120)
        assert done.status == "error", done
        assert [(e["ename"], [plain(t) for t in e["traceback"]]) for e in done.errors] == [
            ("KeyboardInterrupt", [INTERRUPT_LINE])
        ], (attempt, done)
        assert "Traceback" not in done.stderr, done
        # the other seven devices' stops ended with it: no second panel in this cell
        shown = sum(1 for m in done.messages if m["msg_type"] == "display_data")
        assert shown == 1, (attempt, done.messages)
        after = kernel.run("jax.effects_barrier(); print('barrier ok')", timeout=120)
        assert after.status == "ok" and after.stdout == "barrier ok\n", (attempt, after)
    plain_interrupt = kernel.execute("import time\nfor _ in range(600): time.sleep(0.1)")
    kernel.wait_for(
        lambda: any(
            m["msg_type"] == "status" and m["content"]["execution_state"] == "busy"
            for m in kernel.result(plain_interrupt).messages
        ),
        60,
        "busy",
    )
    kernel.interrupt()
    done = kernel.wait_reply(plain_interrupt, timeout=60)
    # an interrupt with no stop around is an ordinary KeyboardInterrupt, traceback and all
    assert [e["ename"] for e in done.errors] == ["KeyboardInterrupt"], done
    assert len(done.errors[0]["traceback"]) > 1, done
