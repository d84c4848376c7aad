"""NaN post-mortem and jaxdbg.post_mortem() in a real ipykernel."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture

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
    assert "Stopped at In[1]:7 in inner (post-mortem: FloatingPointError: invalid value (nan)" in out, out
    assert "w = jnp.log(z)" in out
    assert "7 ->     w = jnp.log(z)" in out, out
    assert "Array([ 1. , -0.5], dtype=float32)" in out, out  # z, concrete
    assert "Array([2. , 0.5], dtype=float32)" in out, out  # y
    assert "Array([1.  , 0.25], dtype=float32)" in out, out  # x, one frame up in outer


def test_nan_opens_the_panel_in_a_kernel(kernel):
    kernel.run("jaxdbg.capture.postmortem.set_nan_debugging(True)")
    try:
        msg_id = kernel.execute("outer(jnp.array([0.25]))")

        def panel_shown():
            return any(
                m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
                for m in kernel.result(msg_id).messages
            )

        kernel.wait_for(panel_shown, 120, "the debugger panel")
        assert [e["ename"] for e in kernel.result(msg_id).errors] == ["FloatingPointError"]
        kernel.interrupt()
        result = kernel.wait_reply(msg_id, timeout=60)
    finally:
        kernel.run("jaxdbg.capture.postmortem.set_nan_debugging(False)")
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
