"""Clients without stdin (nbclient, papermill, Voila): a stop nobody can answer continues.

The cells are sent with ``allow_stdin=False``, as those clients do. Before, the typed
prompt raised StdinNotImplementedError inside the host callback and the cell failed
with a long CpuCallback traceback.
"""

from __future__ import annotations

import textwrap

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter"), pytest.mark.timeout(300)]

SETUP = "import jax, jax.numpy as jnp, jaxdbg\nprint('devices', jax.device_count())"


def _notices(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("jaxdbg: continuing past")]


def test_prompt_without_stdin_continues_with_one_line(kernel):
    assert "devices 8" in kernel.run(SETUP, timeout=180).stdout
    result = kernel.run(
        textwrap.dedent("""
        @jax.jit
        def f(x):
            y = x * 2
            jaxdbg.breakpoint(backend="cli")
            return y + 1
        print("result", f(jnp.arange(3.0)).tolist())
    """),
        timeout=120,
        allow_stdin=False,
    )
    assert result.status == "ok", result
    assert kernel.input_requests == []
    notices = _notices(result.stdout)
    assert len(notices) == 1, result.stdout
    assert "the notebook client offers no stdin" in notices[0] and "In[" in notices[0]
    assert "result [1.0, 3.0, 5.0]" in result.stdout
    assert "Traceback" not in result.stderr and "CpuCallback" not in result.stderr
    # the same kernel still asks when the client can answer
    kernel.answer_input("p y")
    kernel.answer_input("c")
    asked = kernel.run("print('again', f(jnp.arange(3.0)).tolist())", timeout=120)
    assert asked.status == "ok", asked
    assert "Array([0., 2., 4.], dtype=float32)" in asked.stdout and not _notices(asked.stdout)


@pytest.mark.multidevice
def test_pmap_stops_without_stdin_each_continue(kernel):
    """Stops on XLA threads look up the cell's own request, not the latest one."""
    kernel.run(SETUP, timeout=180)
    result = kernel.run(
        textwrap.dedent("""
        def body(x):
            jaxdbg.breakpoint(backend="cli")
            return x * 10
        print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
    """),
        timeout=180,
        allow_stdin=False,
    )
    assert result.status == "ok", result
    assert len(_notices(result.stdout)) == 8, result.stdout
    assert "result [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]" in result.stdout
    assert kernel.input_requests == []


def test_script_answers_then_continues_without_stdin(kernel):
    kernel.run(SETUP, timeout=180)
    result = kernel.run(
        textwrap.dedent("""
        import os
        os.environ["JAXDBG_COMMANDS"] = "p x; c"
        def f(x):
            jaxdbg.breakpoint(backend="cli")
            return x + 1
        print("result", jax.vmap(f)(jnp.arange(2.0)).tolist())
    """),
        timeout=120,
        allow_stdin=False,
    )
    assert result.status == "ok", result
    out = result.stdout
    assert "(jaxdbg) p x\nArray(0., dtype=float32)\n(jaxdbg) c\nContinuing." in out
    notices = _notices(out)
    assert len(notices) == 1 and "batch 2/2" in notices[0] and "ran out" in notices[0], out
    assert "result [1.0, 2.0]" in out
