"""More of the debugger panel in a real ipykernel, driven as a browser drives it.

Cells queued behind a paused cell, breakpoints that fire after their cell returned
(asynchronous dispatch), vmap's Skip batch, prints from the expression box and from
the program, and ``%load_ext jaxdbg`` routing ``jax.debug.breakpoint()`` to the panel.
Each runs against ipykernel 7.4 and, when JAXDBG_IPYKERNEL6_PYTHON is set, 6.29.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import (
    SETUP,
    closed,
    live_panel,
    press,
    static_outputs,
    static_texts,
    submit,
    wait_banner,
    wait_log,
    wait_panel,
)

pytestmark = [pytest.mark.kernel]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

shared_kernel = kernel_fixture(SETUP)
fresh_kernel = kernel_fixture(SETUP, scope="function")


def panel_displays(kernel) -> list[dict]:
    """Every panel display the kernel sent, whatever its parent, in order."""
    messages = kernel.messages()
    return [m for m in messages if m["msg_type"] == "display_data" and WIDGET_VIEW in m["content"]["data"]]


def displays_in(result) -> int:
    return sum(1 for m in result.messages if m["msg_type"] == "display_data" and WIDGET_VIEW in m["content"]["data"])


def live_continue(kernel) -> str:
    """The live panel (its Continue is what the tests press)."""
    return live_panel(kernel, timeout=120)


def cell(code: str) -> str:
    return textwrap.dedent(code).strip("\n")


# --------------------------------------------------------------------------- tests


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_cells_queued_while_paused_run_after_continue_in_order(shared_kernel):
    kernel = shared_kernel
    paused = kernel.execute(
        cell("""
        @jax.jit
        def fq(x):
            y = x + 1
            jaxdbg.breakpoint()
            return y * 2
        print("paused cell result", fq(jnp.ones(2)).tolist())
    """)
    )
    wait_panel(kernel, paused)
    button = live_continue(kernel)
    queued = [
        kernel.execute('print("queued one")'),
        kernel.execute('queued_value = 40 + 2\nprint("queued two", queued_value)'),
        kernel.execute('print("queued three", queued_value + 1)'),
    ]
    # The panel keeps answering while requests wait behind the paused cell.
    submit(kernel, "p y")
    wait_log(kernel, r"\(jaxdbg\) p y\nArray\(\[2\., 2\.\], dtype=float32\)")
    for msg_id in queued:
        now = kernel.result(msg_id)
        assert now.reply is None and now.stdout == "", now
    press(kernel, "continue", cid=button)

    done = kernel.wait_reply(paused, timeout=60)
    assert done.status == "ok", done
    assert done.stdout == "paused cell result [4.0, 4.0]\n", done
    results = [kernel.wait_reply(msg_id, timeout=60) for msg_id in queued]
    assert [r.stdout for r in results] == ["queued one\n", "queued two 42\n", "queued three 43\n"]
    assert all(r.status == "ok" for r in results), results
    counts = [r.reply["content"]["execution_count"] for r in [done, *results]]
    assert counts == sorted(counts) and len(set(counts)) == 4, counts


@pytest.mark.timeout(400)
@pytest.mark.multidevice
@pytest.mark.matrix("jupyter")
def test_breakpoints_after_the_cell_returned_still_work(fresh_kernel):
    """pmap on CPU dispatches asynchronously: the cell returns before its callbacks run.
    In a fresh kernel, so that this cell's breakpoint is the first one traced there."""
    kernel = fresh_kernel
    version = kernel.run("import jaxlib; print(jaxlib.__version__)").stdout.strip()
    if tuple(int(part) for part in re.findall(r"\d+", version)[:3]) >= (0, 12, 1):
        # The panel's pmap tests that wait inside the call cover those stops there.
        pytest.skip(f"jaxlib {version} runs a pmap with host callbacks inside the call: no cell returns first")
    before = len(panel_displays(kernel))
    launch = kernel.execute(
        cell("""
        def body(x):
            jaxdbg.breakpoint()
            return x * 10
        out = jax.pmap(body)(jnp.arange(8.0))
        print("returned")
    """)
    )
    launched = kernel.wait_reply(launch, timeout=120)
    # On jaxlib 0.7, Colab's, the first stop also warns that XLA's CPU collective timeouts
    # still hold (docs/multi-device.md). It goes to stderr: said from the stop's thread
    # while the cell printed, on stdout it once landed inside "returned"'s line.
    assert launched.status == "ok" and launched.stdout == "returned\n", launched

    def serve(n: int) -> dict:
        """Wait for the n-th panel of this test, print x there, Continue; its display."""
        kernel.wait_for(lambda: len(panel_displays(kernel)) >= before + n, 120, f"panel {n}")
        display = panel_displays(kernel)[before + n - 1]
        button = live_continue(kernel)
        device = int(re.search(r"device (\d)", wait_banner(kernel, r"device \d")).group(1))
        submit(kernel, "p x")
        wait_log(kernel, rf"\(jaxdbg\) p x\nArray\({device}\., dtype=float32\)")
        press(kernel, "continue", cid=button)
        kernel.wait_for(lambda: closed(kernel, button), 60, f"panel {n} to collapse")
        return display

    # No cell runs: each panel goes to the cell that launched the computation, also
    # after a click on the previous one (a display parented to a click is dropped).
    early = [serve(n) for n in (1, 2, 3)]
    kernel.wait_for(lambda: len(panel_displays(kernel)) >= before + 4, 120, "panel 4")
    waiting = kernel.execute("print('waiting', flush=True)\nout.block_until_ready()\nprint('ready', out.tolist())")
    # Once it runs: a stop that opens before a sent cell starts belongs to the cell before.
    kernel.wait_for_output(waiting, "waiting", timeout=120)
    late = [serve(n) for n in range(4, 9)]

    parents = [d["parent_header"]["msg_id"] for d in early + late]
    assert parents[:4] == [launch] * 4, [d["parent_header"].get("msg_type") for d in early + late]
    # While a later cell runs, the next panels show in that cell.
    assert parents[4:] == [waiting] * 4, [d["parent_header"].get("msg_type") for d in late]
    finished = kernel.wait_reply(waiting, timeout=120)
    assert finished.status == "ok", finished
    assert "ready [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]" in finished.stdout, finished
    assert len(static_outputs(kernel.result(launch))) == 4
    # Stops 5 to 8, and the view of stop 4 where this cell said it waited for that stop
    # (a kernel whose pump sees the queued cell: ipykernel 7).
    waited = any(
        "this cell waits" in m["content"]["data"].get("text/plain", "")
        for m in finished.messages
        if m["msg_type"] == "display_data"
    )
    assert len(static_outputs(finished)) == 4 + waited
    assert kernel.run("print('after async pmap')").stdout == "after async pmap\n"


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter", "jax")
def test_vmap_header_and_skip_batch(shared_kernel):
    kernel = shared_kernel
    mid = kernel.execute(
        cell("""
        @jax.jit
        def fv(x):
            y = x * 3
            jaxdbg.breakpoint()
            return y + 1
        print("vmap result", jax.vmap(fv)(jnp.arange(3.0)).tolist())
    """)
    )
    wait_panel(kernel, mid)
    banner = wait_banner(kernel, r"batch 1/3")
    assert re.search(r"Stopped at In\[\d+\]:4 in fv \(breakpoint \d+, hit \d+; batch 1/3\)", banner), banner
    submit(kernel, "p y")
    wait_log(kernel, r"\(jaxdbg\) p y\nArray\(0\., dtype=float32\)")
    press(kernel, "skip")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "vmap result [1.0, 4.0, 7.0]" in done.stdout, done
    assert displays_in(done) == 1, "the other batch elements must not stop"
    static = static_outputs(done)
    assert len(static) == 1 and "Continued, skipping the rest of the batch." in static[0], static
    assert "batch 1/3" in static[0]


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_prints_from_the_box_and_the_program_reach_the_cell(shared_kernel):
    kernel = shared_kernel
    mid = kernel.execute(
        cell("""
        @jax.jit
        def fp(x):
            y = x * 2
            y = jaxdbg.breakpoint(token=y)
            jax.debug.print("program says {}", y.sum())
            return y + 1
        r = fp(jnp.ones(2))
        print("after the call", r.tolist())
    """)
    )
    wait_panel(kernel, mid)
    button = live_continue(kernel)
    submit(kernel, "print('hello from the box')")
    wait_log(kernel, r"\(jaxdbg\) print\('hello from the box'\)")
    press(kernel, "continue", cid=button)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    everything = done.stdout + "".join(static_outputs(done))
    assert "hello from the box" in everything, done
    assert "program says 4.0" in done.stdout, done
    assert done.stdout.endswith("after the call [3.0, 3.0]\n"), done
    # and nothing went to another request (e.g. the click's comm message)
    strays = [
        m
        for m in kernel.messages()
        if m["msg_type"] == "stream" and m["parent_header"].get("msg_type") != "execute_request"
    ]
    assert strays == [], strays


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter", "jax", "wheel")
def test_load_ext_routes_jax_debug_breakpoint_to_the_panel(kernel):
    """A fresh kernel: only ``%load_ext jaxdbg``, then JAX's own breakpoint."""
    setup = kernel.run("%load_ext jaxdbg\nimport jax, jax.numpy as jnp", timeout=180)
    assert setup.status == "ok", setup
    mid = kernel.execute(
        cell("""
        @jax.jit
        def fj(x):
            y = jnp.cos(x)
            jax.debug.breakpoint()
            return y.sum()
        print("jax breakpoint result", fj(jnp.zeros(3)))
    """)
    )
    wait_panel(kernel, mid)
    banner = wait_banner(kernel, "Stopped at")
    assert re.search(r"Stopped at In\[\d+\]:4 in fj", banner), banner
    assert kernel.input_requests == [], "the terminal prompt must not open"
    submit(kernel, "p y")
    wait_log(kernel, r"\(jaxdbg\) p y\nArray\(\[1\., 1\., 1\.\], dtype=float32\)")
    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "jax breakpoint result 3.0" in done.stdout, done
    assert "(jdb)" not in done.stdout and kernel.input_requests == []
    assert len(static_outputs(done)) == 1


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter", "wheel")
def test_plain_import_finds_the_panel_through_its_entry_point(kernel_python, tmp_path):
    """An installed jaxdbg_widgets declares the ``jaxdbg.backends`` entry point; a kernel
    that only runs ``import jaxdbg`` then opens the panel. The distribution metadata is
    written here (as pip would) so the test does not depend on how the checkout was installed."""
    from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS, KernelHarness

    dist = tmp_path / "jaxdbg_widgets_under_test-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: jaxdbg-widgets-under-test\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[jaxdbg.backends]\nwidgets = jaxdbg_widgets\n")
    with KernelHarness(kernel_python, env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS, "PYTHONPATH": str(tmp_path)}) as kernel:
        setup = kernel.run(
            "import sys, jax, jax.numpy as jnp, jaxdbg\n"
            "print(jaxdbg.available_debuggers(), 'jaxdbg_widgets' in sys.modules)",
            timeout=180,
        )
        assert setup.status == "ok" and "['widgets', 'cli'] True" in setup.stdout, setup
        mid = kernel.execute(
            cell("""
            @jax.jit
            def fe(x):
                jaxdbg.breakpoint()
                return x + 1
            print("entry point result", fe(jnp.ones(2)).tolist())
        """)
        )
        wait_panel(kernel, mid)
        press(kernel, "continue")
        done = kernel.wait_reply(mid, timeout=60)
        assert done.status == "ok" and "entry point result [2.0, 2.0]" in done.stdout, done
        assert kernel.input_requests == []


# --------------------------------------------------------------------------- many stops


@pytest.mark.timeout(400)
@pytest.mark.multidevice
def test_continue_all_over_pmap_devices(shared_kernel):
    """The panel's Continue all button sends ``continue all``: one panel for 8 devices."""
    kernel = shared_kernel
    mid = kernel.execute(
        cell("""
        def body_all(x):
            jaxdbg.breakpoint()
            return x * 2
        print("all result", jax.pmap(body_all)(jnp.arange(8.0)).tolist())
    """)
    )
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    assert {"continue all", "disable", "ignore"} <= set(kernel.widgets()[cid]["tooltips"])
    press(kernel, "continue all", cid=cid)
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok" and "all result [0.0, 2.0, 4.0" in done.stdout, done
    assert displays_in(done) == 1


@pytest.mark.timeout(400)
def test_ignore_and_disable_inside_a_scan(shared_kernel):
    """``ignore 3`` skips the next three hits of the breakpoint; ``disable`` the rest."""
    kernel = shared_kernel
    mid = kernel.execute(
        cell("""
        def step(c, x):
            c = c + x
            jaxdbg.breakpoint()
            return c, c
        print("scan result", jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])(jnp.arange(10.0)))
    """)
    )
    wait_panel(kernel, mid)
    first = live_panel(kernel)
    press(kernel, "ignore 3", cid=first)
    press(kernel, "continue", cid=first)
    wait_panel(kernel, mid, 2)
    second = live_panel(kernel)
    assert re.search(r"hit 5\b", wait_banner(kernel, r"hit \d+", cid=second))
    press(kernel, "disable", cid=second)
    press(kernel, "continue", cid=second)
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok" and "scan result 45.0" in done.stdout, done
    assert displays_in(done) == 2
    kernel.run("jaxdbg.engine.breakpoint_state.reset()")


@pytest.mark.timeout(300)
@pytest.mark.skipif(
    not __import__("os").environ.get("JAXDBG_COLAB_PYTHON"),
    reason="JAXDBG_COLAB_PYTHON (a Python with Colab's pins) is not set",
)
def test_panel_on_colab_pins_ipywidgets7_anywidget09():
    """Colab's pins (ipywidgets 7.7, anywidget 0.9.21, ipykernel 6.17): the same panel
    opens, answers a typed line, ends with its summary and leaves no comm open. The stop
    is served on the cell's own thread from a live frame, so this checks the panel, not
    the breakpoint machinery of that JAX version."""
    import os

    from support.kernel_harness import KernelHarness

    with KernelHarness(os.environ["JAXDBG_COLAB_PYTHON"]) as kernel:
        versions = kernel.run(
            "import ipywidgets, anywidget, jaxdbg, jaxdbg_widgets\n"
            "print(ipywidgets.__version__, anywidget.__version__)",
            timeout=180,
        )
        assert versions.status == "ok", versions
        mid = kernel.execute(
            cell("""
            import sys
            from jaxdbg.engine.session import Session
            from jaxdbg.engine.frames import live_frame
            zz = 41
            jaxdbg_widgets.run_widget_debugger(Session([live_frame(sys._getframe())]))
            print("served")
        """)
        )
        wait_panel(kernel, mid)
        cid = live_panel(kernel)
        submit(kernel, "p zz + 1", cid=cid)
        wait_log(kernel, r"\(jaxdbg\) p zz \+ 1\n42", cid=cid)
        press(kernel, "continue", cid=cid)
        done = kernel.wait_reply(mid, timeout=60)
        assert done.status == "ok" and done.stdout == "served\n", done
        assert "(jaxdbg) p zz + 1\n42" in static_texts(done)[0]
        assert kernel.widgets() == {}
