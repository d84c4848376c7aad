"""Faults found by running the whole fault matrix in real kernels: what user code
raises, interrupts of long commands, quits that surface later, descriptors per cell.

One kernel per ipykernel line of the matrix, shared by the module, with 8 host CPU
devices. The panel is driven with the messages its browser code sends.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from kernel_harness import kernel_pythons, kernel_set_up_with
from test_panel_kernel import live_panel, panels, press, submit, wait_log, wait_panel

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice]

SETUP = textwrap.dedent("""
    import io, os, time
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    print("devices", jax.device_count())
""")


@pytest.fixture(scope="module", params=kernel_pythons())
def kernel(request):
    with kernel_set_up_with(request.param, SETUP) as harness:
        yield harness


def assert_alive(kernel) -> None:
    after = kernel.run("print('alive', 6 * 7)", timeout=120)
    assert after.status == "ok" and after.stdout == "alive 42\n", after


def no_live_panel(kernel) -> bool:
    return not any(not st.get("status", {}).get("finished") for st in panels(kernel).values())


# ------------------------------------------ user code that raises KeyboardInterrupt

RAISING_CELL = """
def raises_keyboard_interrupt():
    raise KeyboardInterrupt("raised by the program")

def body(x):
    g = raises_keyboard_interrupt
    jaxdbg.breakpoint()
    return x + 1

print("result", {call}.tolist())
"""
CALLS = {"jit": "jax.jit(body)(jnp.ones(1))", "pmap": "jax.pmap(body)(jnp.ones(1))"}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("transform", sorted(CALLS))
def test_typed_expression_raising_keyboard_interrupt_does_not_end_the_stop(kernel, transform):
    mid = kernel.execute(RAISING_CELL.format(call=CALLS[transform]))
    wait_panel(kernel, mid)
    cid = submit(kernel, "g()")
    wait_log(kernel, r"\(jaxdbg\) g\(\)\n\*\*\* KeyboardInterrupt: raised by the program", cid=cid)
    submit(kernel, "p x + 1", cid=cid)
    wait_log(kernel, r"\(jaxdbg\) p x \+ 1\nArray\(\[?2\.", cid=cid)
    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "result [2.0]" in done.stdout, done
    assert_alive(kernel)
