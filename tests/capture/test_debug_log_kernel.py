"""``jax.debug.log`` with ``%load_ext jaxdbg`` in a real ipykernel: its rows are in the
cell's print log, with file:line, batch element and level, as ``jax.debug.print``'s are;
none of them is lost to Python logging at its default level."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture

pytestmark = [pytest.mark.kernel]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg
    %load_ext jaxdbg
    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


def _log_rows(kernel, result) -> list[list[str]]:
    """The rows the cell's print log widget was sent."""
    opens = [
        m
        for m in kernel.messages()
        if m["msg_type"] == "comm_open"
        and "jaxdbg-print-log" in m["content"]["data"].get("state", {}).get("_css", "")
        and m["parent_header"].get("msg_id") == result.msg_id
    ]
    assert opens, result
    comm_id = opens[-1]["content"]["comm_id"]
    rows: list[list[str]] = []
    for m in kernel.messages():
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id:
            chunk = m["content"]["data"].get("state", {}).get("chunk")
            if chunk:
                rows.extend(chunk["rows"])
    return rows


def test_jax_debug_log_rows_are_in_the_print_log_with_line_batch_and_level(kernel):
    if "has log True" not in kernel.run("print('has log', hasattr(jax.debug, 'log'))").stdout:
        pytest.skip("this kernel's JAX has no jax.debug.log")
    result = kernel.run(
        textwrap.dedent("""
        def step(x):
            jax.debug.log("loss {x}", x=x)
            jax.debug.print("printed {}", x)
            return x * 2
        jax.jit(jax.vmap(step))(jnp.arange(2.0))
        jax.jit(lambda y: jax.debug.log("alone {}", y))(5)
    """)
    )
    assert result.status == "ok", result
    rows = _log_rows(kernel, result)
    assert [r[2] for r in rows] == ["loss 0.0", "printed 0.0", "loss 1.0", "printed 1.0", "alone 5"], rows
    assert all(r[0].startswith("In[") for r in rows), rows
    assert [r[0].rsplit(":", 1)[1] for r in rows] == ["2", "3", "2", "3", "6"]  # the cell's lines
    assert [r[1] for r in rows] == ["INFO · batch 1/2", "batch 1/2", "INFO · batch 2/2", "batch 2/2", "INFO"]
    assert "loss" not in result.stdout + result.stderr and "alone" not in result.stdout + result.stderr
