"""checkify errors in a real ipykernel: the location, the mapped table, and %%checkify."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture

pytestmark = [pytest.mark.kernel]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    from jax.experimental import checkify
    import jaxdbg
    %load_ext jaxdbg
    def scale(x):
        checkify.check(jnp.all(x >= 0), "scale needs positive values, got {}", x)
        return jnp.log(x) / x[1]
    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


def result_bundle(result) -> dict:
    results = [m for m in result.messages if m["msg_type"] == "execute_result"]
    assert results, result
    return results[-1]["content"]["data"]


@pytest.mark.matrix("jax")
def test_error_as_cell_result_shows_its_location(kernel):
    result = kernel.run(
        textwrap.dedent("""
        err, out = jaxdbg.checkify(jax.jit(scale))(jnp.array([-1.0, 2.0]))
        err
    """)
    )
    assert result.status == "ok", result
    data = result_bundle(result)
    text, html = data["text/plain"], data["text/html"]
    assert text.startswith("checkify error: scale needs positive values, got [-1.  2.]"), text
    assert "at In[" in text and ":6 in scale" in text, text
    assert "->    6 |     checkify.check(jnp.all(x >= 0)" in text, text
    assert "jaxdbg-checkify" in html and "scale needs positive values" in html


def test_plain_checkify_error_renders_too(kernel):
    result = kernel.run(
        textwrap.dedent("""
        err, _ = checkify.checkify(scale, errors=checkify.float_checks)(jnp.array([1.0, 0.0]))
        err
    """)
    )
    data = result_bundle(result)
    assert data["text/plain"].startswith("checkify error: division by zero"), data
    assert ":7 in scale" in data["text/plain"]


@pytest.mark.matrix("jax")
def test_vmapped_error_shows_a_table_of_indices(kernel):
    result = kernel.run(
        textwrap.dedent("""
        xs = jnp.array([[1.0, 2.0], [-1.0, 2.0], [3.0, 0.0]])
        err, _ = jax.vmap(jaxdbg.checkify(scale, errors="all"))(xs)
        jaxdbg.show(err)
        None
    """)
    )
    assert result.status == "ok", result
    shown = [m["content"]["data"] for m in result.messages if m["msg_type"] == "display_data"]
    assert shown, result
    text = shown[-1]["text/plain"]
    assert text.splitlines()[0] == "checkify errors at 2 of 3 mapped indices", text
    rows = text.splitlines()[2:4]
    assert rows[0].split()[0] == "1" and "scale needs positive values" in rows[0], text
    assert rows[1].split()[0] == "2" and "division by zero" in rows[1] and ":7 in scale" in rows[1], text
    assert "<td" in shown[-1]["text/html"] and "division by zero" in shown[-1]["text/html"]


def test_checkify_cell_magic_checks_jitted_calls(kernel):
    kernel.run("step = jax.jit(lambda x: scale(x) * 2)")
    jitted_type = kernel.run("print(type(step).__name__)").stdout.strip()
    result = kernel.run(
        textwrap.dedent("""
        %%checkify --errors all
        y = step(jnp.array([2.0, 4.0]))
        z = step(jnp.array([2.0, 0.0]))
        "not reached"
    """)
    )
    assert result.status == "ok", result
    data = result_bundle(result)
    assert data["text/plain"].startswith("checkify error: division by zero"), data
    assert "not reached" not in data["text/plain"]
    # The lines before the failing one ran, and the cell left the user's jitted function as it was.
    check = kernel.run(
        "_, expected = jaxdbg.checkify(step, errors='all')(jnp.array([2.0, 4.0]))\n"
        "print(type(step).__name__, float(y.sum()) == float(expected.sum()))"
    )
    assert check.stdout.split() == [jitted_type, "True"], check


def test_checkify_cell_magic_jit_inside_cell_and_bad_option(kernel):
    result = kernel.run(
        textwrap.dedent("""
        %%checkify
        @jax.jit
        def f(x):
            return scale(x)
        f(jnp.array([-3.0, 1.0]))
    """)
    )
    data = result_bundle(result)
    assert "scale needs positive values" in data["text/plain"], data
    bad = kernel.run("%%checkify --errors bogus\n1")
    assert bad.status == "ok" and "unknown checkify error set 'bogus'" in bad.stdout, bad
    clean = kernel.run("%%checkify\njax.jit(scale)(jnp.array([1.0, 2.0])).tolist()")
    assert result_bundle(clean)["text/plain"].startswith("[0.0"), clean


def test_checkify_cell_runs_what_it_cannot_check(kernel):
    kernel.run("from functools import partial\npower = jax.jit(lambda x, n: x ** n, static_argnums=1)")
    result = kernel.run("%%checkify --errors all\npower(jnp.float32(2.0), 3)")
    assert result.status == "ok", result
    assert result_bundle(result)["text/plain"] == "Array(8., dtype=float32)", result
    assert "jaxdbg: not checked: <lambda>" in result.stdout, result
