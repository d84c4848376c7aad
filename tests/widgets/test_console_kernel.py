"""The panel's console in a real ipykernel: how typed lines are read and where their output goes.

Driven with the comm messages the browser sends (see test_panel_kernel.py), on
each ipykernel line the harness offers.
"""

from __future__ import annotations

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, live_panel, press, state, submit, wait_log, wait_panel

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli'] devices 8")


SCAN_CELL = """
def step(p, x):
    l = jnp.sum(p["w"] * x)
    c = 5
    jaxdbg.breakpoint()
    return {"w": p["w"] - 0.1 * l}, l

params, losses = jax.jit(lambda p, xs: jax.lax.scan(step, p, xs))({"w": jnp.ones(2)}, jnp.ones((1, 2)))
print("losses", losses.tolist())
"""


@pytest.mark.timeout(300)
def test_typed_command_words_are_commands_even_where_locals_have_their_names(kernel):
    mid = kernel.execute(SCAN_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    for line in ("p l", "p(l)", "!p = 3", "p p", "!c"):
        submit(kernel, line, cid=cid)
    log = wait_log(kernel, r"\(jaxdbg\) !c\n5", cid=cid)
    assert "(jaxdbg) p l\nArray(2., dtype=float32)\n" in log, log
    assert "(jaxdbg) p(l)\nArray(2., dtype=float32)\n" in log, log
    assert "(jaxdbg) p p\n3\n" in log, log
    assert not state(kernel, cid).get("status", {}).get("finished")  # "!c" did not continue
    submit(kernel, "c", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "losses [2.0]" in done.stdout, done


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_what_a_typed_command_prints_is_in_its_log_entry_not_below_the_panel(kernel):
    mid = kernel.execute("""
@jax.jit
def fp(x):
    jaxdbg.breakpoint()
    return x + 1
print("result", fp(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    submit(kernel, "print('hello', x.shape)", cid=cid)
    submit(kernel, "import sys; print('to stderr', file=sys.stderr); print('then stdout')", cid=cid)
    submit(kernel, "p 'done'", cid=cid)
    log = wait_log(kernel, r"\(jaxdbg\) p 'done'\n'done'", cid=cid)
    entries = {e["command"]: e["text"] for e in state(kernel, cid)["log"]}
    assert entries["print('hello', x.shape)"] == "hello (2,)", log
    assert (
        entries["import sys; print('to stderr', file=sys.stderr); print('then stdout')"] == "to stderr\nthen stdout"
    ), log
    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "hello" not in done.stdout and "to stderr" not in done.stderr, done
    assert "result [2.0, 2.0]" in done.stdout, done
    after = kernel.run("import sys; print('next cell'); print('err', file=sys.stderr)")
    assert after.stdout == "next cell\n" and after.stderr == "err\n", after  # streams are the kernel's again
