"""Many stops in a real kernel: a run is a cell; reports come after the cell; reset."""

import re

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

SETUP = """
import jax, jax.numpy as jnp, jaxdbg

def body(carry, x):
    jaxdbg.breakpoint(backend="cli")
    return carry + x, x

f = jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])
xs = jnp.arange(5.0)
"""


def _prompts(kernel) -> int:
    return len(kernel.input_requests)


def test_continue_all_covers_the_cell_and_the_next_cell_stops_again(kernel):
    assert kernel.run(SETUP, timeout=180).status == "ok"

    kernel.answer_input("ca")
    result = kernel.run("a = f(xs)\nb = f(xs)\nprint(a, b)", timeout=180)  # two lines, one cell
    assert result.status == "ok", result
    assert _prompts(kernel) == 1
    cell = re.search(r"Stopped at In\[\d+\]:\d+ in body \(breakpoint (\d+), hit 1\)", result.stdout)
    assert cell, result.stdout
    number = cell.group(1)
    count = re.search(r"in cell (In\[\d+\])\.", result.stdout).group(1)
    assert f"Continuing past every remaining stop of breakpoint {number} in cell {count}." in result.stdout
    # reported when the cell finished, after the cell's own output
    assert result.stdout.rstrip().endswith(
        f"jaxdbg: continued past 9 more stops of breakpoint {number} in cell {count}"
    ), result.stdout
    assert "10.0 10.0" in result.stdout

    kernel.answer_input("disable")
    kernel.answer_input("c")
    result = kernel.run("print(f(xs))", timeout=180)  # a new cell is a new run
    assert result.status == "ok", result
    assert f"(breakpoint {number}, hit 11)" in result.stdout
    assert _prompts(kernel) == 3  # each command line is one prompt

    result = kernel.run("print('disabled', f(xs))", timeout=180)
    assert "disabled 10.0" in result.stdout and _prompts(kernel) == 3

    kernel.answer_input("ca")
    result = kernel.run("%load_ext jaxdbg\n%jaxdbg reset\nprint('again', f(xs))", timeout=180)
    assert result.status == "ok", result
    assert "every breakpoint is enabled again" in result.stdout
    assert f"(breakpoint {number}, hit 12)" in result.stdout and "again 10.0" in result.stdout
    assert _prompts(kernel) == 4


@pytest.mark.multidevice
def test_continue_all_under_pmap_in_a_kernel_serves_no_other_device(kernel):
    assert kernel.run("import jax, jax.numpy as jnp, jaxdbg", timeout=180).status == "ok"
    kernel.answer_input("ca")
    result = kernel.run(
        "g = jax.pmap(lambda x: (jaxdbg.breakpoint(backend='cli'), x * 2)[1])\n"
        "print('pmap', g(jnp.arange(8.0)).tolist())",
        timeout=180,
    )
    assert result.status == "ok", result
    assert _prompts(kernel) == 1
    assert "pmap [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]" in result.stdout
    assert re.search(r"jaxdbg: continued past 7 more stops of breakpoint \d+ in cell In\[\d+\]", result.stdout), (
        result.stdout
    )
