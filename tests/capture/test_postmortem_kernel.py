"""NaN post-mortem and jaxdbg.post_mortem() in a real ipykernel."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import live_panel, press, wait_banner, wait_panel

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter", "jax")]

SETUP = textwrap.dedent("""
    import os
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg.capture.postmortem
    %load_ext jaxdbg
    def inner(y):
        z = y - 1.0
        w = jnp.log(z)
        return w * 2
    @jax.jit
    def outer(x):
        y = x * 2
        return inner(y).sum()
    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


def test_nan_opens_the_debugger_at_the_line_with_real_values(kernel):
    kernel.run("os.environ['JAXDBG_BACKEND'] = 'cli'\n%jaxdbg nans on")
    try:
        for line in ("p z", "p y", "up", "p x", "c"):
            kernel.answer_input(line)
        result = kernel.run("outer(jnp.array([1.0, 0.25]))", timeout=120)
    finally:
        kernel.run("del os.environ['JAXDBG_BACKEND']\n%jaxdbg nans off")
    assert [e["ename"] for e in result.errors] == ["FloatingPointError"], result
    out = result.stdout
    # The stop opens during the call, before the error (and its traceback) is shown.
    assert "Stopped at In[1]:7 in inner (NaN made by log)" in out, out
    kinds = [m["msg_type"] for m in result.messages if m["msg_type"] in ("stream", "error")]
    assert kinds.index("stream") < kinds.index("error"), kinds
    assert "w = jnp.log(z)" in out
    assert "7 ->     w = jnp.log(z)" in out, out
    assert "Array([ 1. , -0.5], dtype=float32)" in out, out  # z, concrete
    assert "Array([2. , 0.5], dtype=float32)" in out, out  # y
    assert "Array([1.  , 0.25], dtype=float32)" in out, out  # x, one frame up in outer


def test_nan_opens_the_panel_in_a_kernel(kernel):
    kernel.run("jaxdbg.capture.postmortem.set_nan_debugging(True)")
    try:
        msg_id = kernel.execute("outer(jnp.array([0.25]))")
        wait_panel(kernel, msg_id)
        cid = live_panel(kernel)
        wait_banner(kernel, r"In\[1\]:7 in inner$", cid, timeout=120)
        assert not kernel.result(msg_id).errors  # paused in the call: no error yet
        press(kernel, "continue", cid)
        result = kernel.wait_reply(msg_id, timeout=120)
    finally:
        kernel.run("jaxdbg.capture.postmortem.set_nan_debugging(False)")
    assert [e["ename"] for e in result.errors] == ["FloatingPointError"], result
    static = [
        m["content"]["data"].get("text/html", "") for m in result.messages if m["msg_type"] == "update_display_data"
    ]
    assert any("inner" in html and "In[1]" in html for html in static), result


def test_post_mortem_on_any_exception(kernel):
    failing = kernel.run(
        textwrap.dedent("""
        def divide(a, b):
            ratio = a / b
            return ratio + {}
        divide(jnp.ones(2), 0)
    """)
    )
    assert failing.errors, failing
    kernel.run("os.environ['JAXDBG_BACKEND'] = 'cli'")
    try:
        kernel.answer_input("p ratio")
        kernel.answer_input("c")
        result = kernel.run("jaxdbg.post_mortem()")
    finally:
        kernel.run("del os.environ['JAXDBG_BACKEND']")
    assert "post-mortem: TypeError" in result.stdout, result
    assert "in divide (post-mortem: TypeError" in result.stdout, result
    assert "Array([inf, inf], dtype=float32)" in result.stdout, result
