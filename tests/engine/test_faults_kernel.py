"""Faults found by running the whole fault matrix in real kernels: what user code
raises, interrupts of long commands, quits that surface later, descriptors per cell.

One kernel per ipykernel line of the matrix, shared by the module, with 8 host CPU
devices. The panel is driven with the messages its browser code sends.
"""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import pytest

from jaxdbg import DebuggerQuit
from jaxdbg.runtime import quit_reporting
from support.kernel_harness import kernel_fixture
from support.panel_driver import panels, press, submit, wait_log, wait_panel

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice]

SETUP = textwrap.dedent("""
    import io, os, time
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    print("devices", jax.device_count())
""")


kernel = kernel_fixture(SETUP)
# A kernel of its own, for a test that counts what a kernel holds or interrupts it.
own_kernel = kernel_fixture(SETUP, scope="function")


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
    kernel.assert_alive()


# ------------------------------------------------- a quit, wherever it surfaces

QUIT_SETUP = """
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
try:
    from jax import shard_map
except ImportError:
    from jax.experimental.shard_map import shard_map
quit_mesh = Mesh(jax.devices(), ("i",))

def quit_body(x):
    jaxdbg.breakpoint(commands="q")
    return x * 2

quit_calls = {
    "jit": lambda: jax.jit(quit_body)(jnp.arange(8.0)),
    "pmap": lambda: jax.pmap(quit_body)(jnp.arange(8.0)),
    "shard_map": lambda: jax.jit(shard_map(quit_body, mesh=quit_mesh, in_specs=P("i"),
                                           out_specs=P("i")))(jnp.arange(8.0)),
    "vmap": lambda: jax.vmap(quit_body)(jnp.arange(8.0)),
    # the stop on the first device, the next step's collective (the sum) on every device
    "sharded jit": lambda: jax.jit(lambda x: jax.lax.scan(quit_step, x, jnp.arange(3.0))[0])(
        jax.device_put(jnp.arange(8.0), NamedSharding(quit_mesh, P("i")))),
}

def quit_step(c, _):
    jaxdbg.breakpoint(commands="q")
    return c + c.sum() * 0, None
"""
# Each way the stopped computation's error can reach the user: cells run in turn.
SURFACES = {
    "cell value": ["quit_calls[{t!r}]()"],
    "print": ["print(quit_calls[{t!r}]())"],
    "block_until_ready": ["quit_calls[{t!r}]().block_until_ready()"],
    "effects_barrier": ["r = quit_calls[{t!r}]()\njax.effects_barrier()\nprint('barrier returned')"],
    "later cell": ["r = quit_calls[{t!r}]()", "print(r + 1)"],
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("surface", sorted(SURFACES))
# How a quit surfaces depends on JAX's error wrapping, so jit's five surfaces run on every
# kernel of the matrix; the other transforms reach the same code on the current kernel.
@pytest.mark.parametrize(
    "transform", [pytest.param("jit", marks=pytest.mark.matrix("jupyter")), "pmap", "shard_map", "vmap", "sharded jit"]
)
def test_a_quit_is_one_line_wherever_it_surfaces(kernel, transform, surface):
    assert kernel.run(QUIT_SETUP, timeout=120).status == "ok"
    results = []
    for cell in SURFACES[surface]:
        results.append(kernel.run(cell.format(t=transform), timeout=180))
        if results[-1].errors:
            break  # the quit surfaced (the later cells' names were never bound)
    errors = [e for r in results for e in r.errors]
    if surface == "effects_barrier" and not errors:
        # A barrier does not raise a stopped computation's error again; its result still
        # raises where it is used, which shows that the computation did quit.
        assert "barrier returned" in results[-1].stdout, results
        results.append(kernel.run("print(r + 1)", timeout=180))
        errors = results[-1].errors
    assert errors, results
    for error in errors:
        shown = "\n".join(error["traceback"])
        assert len(shown.splitlines()) == 1, shown
        assert "DebuggerQuit" in shown and "JaxRuntimeError" not in shown, shown
    for r in results:
        assert "Traceback" not in r.stderr and "JaxRuntimeError" not in r.stderr, r.stderr
    kernel.run("jax.effects_barrier()", timeout=120)
    kernel.assert_alive()


@pytest.mark.timeout(300)
def test_a_quit_calls_result_used_again_names_the_input_it_came_from(kernel):
    # As an nnx.jit step's model keeps the quit step's results: the next step raises the
    # quit again without stopping, and the line says why, not that the debugger quit again.
    assert kernel.run(QUIT_SETUP, timeout=120).status == "ok"
    assert kernel.run('r = quit_calls["sharded jit"]()', timeout=180).status == "ok"
    first, again = kernel.run("print(r + 1)", timeout=180), kernel.run("print(r * 2)", timeout=180)
    assert [e["traceback"] for e in first.errors] == [[quit_reporting.QUIT_LINE]], first
    assert [e["traceback"] for e in again.errors] == [[quit_reporting.INPUT_LINES[DebuggerQuit]]], again
    assert "Traceback" not in first.stderr + again.stderr, (first, again)
    kernel.run("jax.effects_barrier()", timeout=120)
    kernel.assert_alive()


# ------------------------------------------------ descriptors over many paused cells

FD_COUNT = "print('fds', len(os.listdir('/proc/self/fd')))"
STOP_CELL = """
@jax.jit
def paused(x):
    jaxdbg.breakpoint()
    return x + 1
print("result", paused(jnp.ones(1)).tolist())
"""


def fd_count(kernel) -> int:
    out = kernel.run(FD_COUNT, timeout=60).stdout
    return int(re.search(r"fds (\d+)", out).group(1))


@pytest.mark.timeout(900)
def test_cells_with_a_stop_leave_no_descriptors_open(own_kernel):
    kernel = own_kernel

    def paused_cell():
        mid = kernel.execute(STOP_CELL)
        wait_panel(kernel, mid)
        press(kernel, "continue")
        done = kernel.wait_reply(mid, timeout=120)
        assert done.status == "ok" and "result [2.0]" in done.stdout, done

    for _ in range(3):  # first stops open what lives for the whole kernel (threads, pipes)
        paused_cell()
    before = fd_count(kernel)
    for _ in range(30):
        paused_cell()
    after = fd_count(kernel)
    assert after - before <= 3, (before, after)


# ------------------------------------------ an interrupted long command at a pmap stop

# A command's prints belong to its own log entry, shown when it returns, so a command
# says it started by writing a file the test waits for.
LONG_COMMAND = (
    "open({flag!r}, 'w').close(); [time.sleep(0.1) for _ in range(70)]; print('typed loop finished', flush=True)"
)


def wait_started(kernel, flag: Path) -> None:
    kernel.wait_for(lambda: flag.exists(), 120, f"the typed command to start ({flag.name})")


@pytest.mark.timeout(400)
def test_interrupting_a_long_command_at_a_pmap_stop_ends_it_for_good(own_kernel, tmp_path):
    kernel = own_kernel
    mid = kernel.execute(
        textwrap.dedent("""
        def body(x):
            jaxdbg.breakpoint()
            return x * 10
        print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
    """)
    )
    wait_panel(kernel, mid)
    flag = tmp_path / "started"
    cid = submit(kernel, LONG_COMMAND.format(flag=str(flag)))  # noqa: F841
    wait_started(kernel, flag)
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "error", done
    assert all(len(e["traceback"]) <= 2 for e in done.errors), done.errors
    assert "KeyboardInterrupt" in " ".join(e["ename"] for e in done.errors), done
    # The stop ended with its cell: no live panel stays.
    assert no_live_panel(kernel), [st.get("status") for st in panels(kernel).values()]
    # Long enough for the loop to have finished, had it gone on.
    after = kernel.run("time.sleep(9); print('next cell')", timeout=120)
    assert after.stdout == "next cell\n", after
    assert "typed loop finished" not in kernel.result(mid).stdout, kernel.result(mid)
    assert no_live_panel(kernel)
    kernel.run("jax.effects_barrier()", timeout=120)
    kernel.assert_alive()


SHARDED_SCAN_CELL = """
from jax.sharding import NamedSharding, PartitionSpec as P

def sharded_step(c, _):
    jaxdbg.breakpoint()
    return c + c.sum() * 0, None  # the next step's collective waits for every device

sharded_scan = jax.jit(lambda x: jax.lax.scan(sharded_step, x, jnp.arange(3.0))[0])
sharded_xs = jax.device_put(jnp.arange(8.0), NamedSharding(jax.make_mesh((8,), ("i",)), P("i")))
print("result", sharded_scan(sharded_xs).tolist())
"""


@pytest.mark.timeout(400)
# On every JAX: how the interrupt reaches the stop and how the error surfaces both change.
@pytest.mark.matrix("jax")
def test_interrupting_a_sharded_jit_stop_ends_the_cell_and_the_next_call_stops_again(own_kernel):
    kernel = own_kernel
    mid = kernel.execute(SHARDED_SCAN_CELL)
    wait_panel(kernel, mid)
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "error", done
    assert [len(e["traceback"]) for e in done.errors] == [1], done.errors
    assert "interrupted while paused in the debugger" in done.errors[0]["traceback"][0], done.errors
    # Every device's program ended at the stop: the same program runs, and stops, again.
    again = kernel.execute('print("result", sharded_scan(sharded_xs).tolist())')
    wait_panel(kernel, again)
    press(kernel, "continue all")
    assert kernel.wait_reply(again, timeout=120).stdout.startswith("result [0.0, 1.0"), kernel.result(again)
    kernel.assert_alive()


# Long enough to outlast the interrupt's grace (runtime.interrupts.STUCK_GRACE_S, 1 s) on a
# loaded machine, so the command is given up while inside its call.
STUCK_S = 8
STUCK_COMMAND = "open({flag!r}, 'w').close(); time.sleep(%d); print('typed loop finished', flush=True)" % STUCK_S


@pytest.mark.timeout(400)
# On every JAX: from jaxlib 0.12.1 the main thread waits inside the pmap call itself,
# where only the SIGINT watch's thread hears the interrupt (docs/quit-and-interrupt.md).
@pytest.mark.matrix("jax")
def test_an_interrupted_command_stuck_in_a_call_is_given_up_with_one_notice(own_kernel, tmp_path):
    kernel = own_kernel
    from support.panel_driver import static_texts

    mid = kernel.execute(
        textwrap.dedent("""
        def body(x):
            jaxdbg.breakpoint()
            return x * 10
        print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
    """)
    )
    wait_panel(kernel, mid)
    flag = tmp_path / "started"
    submit(kernel, STUCK_COMMAND.format(flag=str(flag)))
    wait_started(kernel, flag)
    started = time.monotonic()
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=120)  # the cell does not wait for the call
    assert done.status == "error", done
    assert all(len(e["traceback"]) <= 2 for e in done.errors), done.errors
    assert no_live_panel(kernel), [st.get("status") for st in panels(kernel).values()]
    summary = static_texts(done)[-1]
    assert summary.count("cannot be interrupted") == 1, summary
    # Long enough for the call to have returned and the command to have gone on.
    past_the_call = max(0.0, started + STUCK_S + 2 - time.monotonic())
    after = kernel.run(f"time.sleep({past_the_call:.1f}); print('next cell')", timeout=120)
    assert after.stdout == "next cell\n", after
    assert "typed loop finished" not in kernel.result(mid).stdout + after.stdout
    assert no_live_panel(kernel)
    kernel.run("jax.effects_barrier()", timeout=120)
    kernel.assert_alive()
