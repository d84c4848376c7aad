"""Extension commands a notebook user types besides load and unload, in a real kernel."""

import re

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def test_reload_ext_reloads_and_keeps_every_feature(kernel):
    loaded = kernel.run("%load_ext jaxdbg", timeout=120)
    assert loaded.status == "ok", loaded
    reloaded = kernel.run("%reload_ext jaxdbg", timeout=120)
    assert reloaded.status == "ok" and not reloaded.errors, reloaded
    status = kernel.run(
        "%jaxdbg\nimport jaxdbg.engine.registry, jaxdbg.runtime.jax_routes\n"
        "print(sorted(jaxdbg.engine.registry.registered_debuggers()), "
        "jaxdbg.runtime.jax_routes.is_installed())"
    )
    assert status.status == "ok", status
    assert "['cli', 'widgets'] True" in status.stdout, status
    shown = "".join(
        m["content"]["data"].get("text/plain", "") for m in status.messages if m["msg_type"] == "display_data"
    )
    assert "jaxdbg status" in shown, status


def test_continue_all_names_the_cell_that_stopped(kernel_python):
    from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS, KernelHarness

    env = {"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS, "JAXDBG_BACKEND": "cli"}
    with KernelHarness(kernel_python, env=env) as kernel:
        setup = kernel.run("import jax, jax.numpy as jnp, jaxdbg\n%load_ext jaxdbg", timeout=120)
        assert setup.status == "ok", setup
        for _ in range(2):  # the second time, after a cell has finished
            kernel.answer_input("ca")
            cell = kernel.run("jax.vmap(lambda v: (jaxdbg.breakpoint(), v)[1])(jnp.arange(3.0))", timeout=120)
            assert cell.status == "ok", cell
            label = re.search(r"Stopped at (In\[\d+\]):1", cell.stdout).group(1)
            assert f"remaining stop of breakpoint 1 in cell {label}." in cell.stdout, cell
            assert f"continued past 2 more stops of breakpoint 1 in cell {label}\n" in cell.stdout, cell


def test_unload_ext_undoes_a_backend_chosen_with_the_magic(kernel):
    chosen = kernel.run(
        "import os, jaxdbg\nbefore = jaxdbg.get_debugger()\n%load_ext jaxdbg\n%jaxdbg backend widgets", timeout=120
    )
    assert "jaxdbg backend: widgets" in chosen.stdout, chosen
    # The choice was the extension's: after unloading, the backend is chosen as before
    # loading (the one it named may be unregistered by the unload).
    after = kernel.run(
        "%unload_ext jaxdbg\nprint(repr(os.environ.get('JAXDBG_BACKEND')))\nprint(jaxdbg.get_debugger() is before)"
    )
    assert after.status == "ok", after
    assert after.stdout.splitlines() == ["None", "True"], after


def test_breakpoints_off_lets_a_step_compiled_with_its_stop_run_through_and_on_brings_it_back(kernel_python):
    from support.kernel_harness import KernelHarness

    with KernelHarness(kernel_python, env={"JAXDBG_BACKEND": "cli"}) as kernel:
        setup = kernel.run(
            "import jax, jax.numpy as jnp, jaxdbg\n%load_ext jaxdbg\n"
            "step = jax.jit(lambda x: (jaxdbg.breakpoint(), x * 3)[1])",
            timeout=120,
        )
        assert setup.status == "ok", setup
        kernel.answer_input("c")
        first = kernel.run("print('first', step(jnp.ones(2)).tolist())", timeout=120)
        assert "Stopped at" in first.stdout and "first [3.0, 3.0]" in first.stdout, first
        # No answer is queued: a stop here would wait at the prompt and the cell time out.
        off = kernel.run("%jaxdbg breakpoints off\nprint('second', step(jnp.ones(2)).tolist())", timeout=120)
        assert off.status == "ok" and "Stopped at" not in off.stdout, off
        assert "jaxdbg breakpoints: off" in off.stdout and "second [3.0, 3.0]" in off.stdout, off
        kernel.answer_input("c")
        on = kernel.run("%jaxdbg breakpoints on\nprint('third', step(jnp.ones(2)).tolist())", timeout=120)
        assert "Stopped at" in on.stdout and "third [3.0, 3.0]" in on.stdout, on


def test_unload_ext_puts_back_the_breakpoints_and_library_frames_the_magic_switched(kernel_python):
    from support.kernel_harness import KernelHarness

    with KernelHarness(kernel_python, env={"JAXDBG_BACKEND": "cli"}) as kernel:
        setup = kernel.run(
            "import os, jax, jax.numpy as jnp, jaxdbg\n%load_ext jaxdbg\n"
            "step = jax.jit(lambda x: (jaxdbg.breakpoint(), x * 3)[1])\n"
            "%jaxdbg breakpoints off\n%jaxdbg library_frames on\n"
            "print('off', step(jnp.ones(2)).tolist())",  # compiled without its stop
            timeout=120,
        )
        assert setup.status == "ok" and "Stopped at" not in setup.stdout, setup
        unloaded = kernel.run(
            "%unload_ext jaxdbg\nprint(os.environ.get('JAXDBG_BREAKPOINTS'), os.environ.get('JAXDBG_LIBRARY_FRAMES'))",
            timeout=120,
        )
        assert unloaded.status == "ok" and "None None" in unloaded.stdout, unloaded
        kernel.answer_input("c")
        again = kernel.run("print('after', step(jnp.ones(2)).tolist())", timeout=120)
        assert "Stopped at" in again.stdout and "after [3.0, 3.0]" in again.stdout, again
