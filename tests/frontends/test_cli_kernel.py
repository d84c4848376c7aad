"""The terminal debugger inside a real ipykernel, answered over the stdin channel."""

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter"), pytest.mark.timeout(240)]


def test_jax_debug_breakpoint_answered_over_stdin(kernel):
    kernel.run("import jax, jax.numpy as jnp, jaxdbg\njaxdbg.install_jax_hook()", timeout=120)
    kernel.answer_input("p jnp.sum(y)")
    kernel.answer_input("l")
    kernel.answer_input("c")
    result = kernel.run(
        "@jax.jit\n"
        "def f(x):\n"
        "    y = x * 2\n"
        "    jax.debug.breakpoint(backend='cli')\n"
        "    return y + 1\n"
        "print('result', f(jnp.arange(3.0)))\n",
        timeout=120,
    )
    assert result.status == "ok", result
    assert [r["content"]["prompt"] for r in kernel.input_requests] == ["(jaxdbg) "] * 3
    out = result.stdout
    assert "Stopped at In[" in out
    assert "Array(6., dtype=float32)" in out
    assert "->     jax.debug.breakpoint(backend='cli')" in out  # the cell's own source
    assert "result [1. 3. 5.]" in out
    assert kernel.run("print('alive')").stdout.strip() == "alive"


def test_quit_in_kernel_is_one_line_and_kernel_lives(kernel):
    kernel.run("import jax, jax.numpy as jnp, jaxdbg", timeout=120)
    kernel.answer_input("q")
    result = kernel.run("jax.jit(lambda x: (jaxdbg.breakpoint(backend='cli'), x + 1)[1])(1.0)", timeout=120)
    assert result.status == "error"
    [error] = result.errors
    assert error["ename"] == "DebuggerQuit"
    assert error["traceback"] == ["jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped"]
    assert "CpuCallback" not in result.stderr and "Traceback" not in result.stderr
    assert kernel.run("print(1 + 1)").stdout.strip() == "2"


def test_interrupt_at_the_prompt_ends_the_cell(kernel):
    kernel.run("import jax, jaxdbg", timeout=120)
    mid = kernel.execute("jax.jit(lambda x: (jaxdbg.breakpoint(backend='cli'), x)[1])(1.0)")
    kernel.wait_for(lambda: kernel.input_requests, timeout=60, what="the (jaxdbg) prompt")
    kernel.interrupt()
    result = kernel.wait_reply(mid, timeout=60)
    assert result.status == "error"
    assert [e["ename"] for e in result.errors] == ["KeyboardInterrupt"]
    assert "CpuCallback" not in str(result.errors)
    assert kernel.run("print('alive')").stdout.strip() == "alive"
