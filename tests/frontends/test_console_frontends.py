"""Terminal frontends, driven through a pseudo-terminal as a person types (issue 27).

``jupyter console`` is a real Jupyter frontend that draws no widgets: a stop there is
answered at the ``(jaxdbg)`` prompt through the kernel's stdin, after one line saying why.
The IPython terminal (``ipython``) has no kernel at all and picks the terminal prompt.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from support.hang_guard import wait_for_system_call

pexpect = pytest.importorskip("pexpect")

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

BIN = Path(sys.executable).parent
PROMPT = r"\(jaxdbg\) "
NOT_DRAWN = "this frontend did not draw the jaxdbg panel; answering here"


def _env(devices: int = 1) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        JAX_PLATFORMS="cpu",
        TERM="dumb",
        PYTHONUNBUFFERED="1",
        XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
    )
    env.pop("JAXDBG_BACKEND", None)
    env.pop("JAXDBG_COMMANDS", None)
    env.pop("JPY_PARENT_PID", None)
    return env


def _spawn(args: list[str], devices: int = 1, **env: str) -> "pexpect.spawn":
    program = shutil.which(args[0], path=str(BIN)) or shutil.which(args[0])
    if program is None:
        pytest.skip(f"{args[0]} is not installed here")
    child = pexpect.spawn(
        program, args[1:], env={**_env(devices), **env}, encoding="utf-8", timeout=180, dimensions=(50, 200)
    )
    return child


def _press_ctrl_c_at_the_prompt(child) -> None:
    """Ctrl-C once the frontend's main thread sleeps in read(2) on the terminal: a SIGINT
    between ``input()``'s prompt and its read() runs the C-level handler, and read() then
    blocks anyway until the next typed line (a CI run hung with only ``^C`` echoed)."""
    wait_for_system_call(child.pid, "read")
    child.sendintr()


def _cell(child, n: int, line: str) -> None:
    """Type a one-line cell at the In[n] prompt."""
    child.expect(rf"In \[{n}\]: ")
    child.sendline(line)


def _spawn_console(sockets: str, *args: str, **env: str) -> "pexpect.spawn":
    """``jupyter console`` with its kernel on Unix sockets in ``sockets``, not TCP ports it
    could find taken (kernel_harness.py), and its connection file there too: the console
    names that file after its own PID, and one that finds a stale ``kernel-<pid>.json`` of
    an earlier, killed console in a shared runtime folder loads it and starts its kernel
    on that file's removed socket path (a test then waited 60 s for a kernel that never
    answered)."""
    argv = ["jupyter", "console", "--simple-prompt", "--transport=ipc", f"--ip={sockets}/kernel", *args]
    return _spawn(argv, devices=4, JUPYTER_RUNTIME_DIR=sockets, **env)


@pytest.fixture
def console():
    sockets = tempfile.mkdtemp(prefix="jaxdbg-console-")
    child = _spawn_console(sockets)
    try:
        yield child
    finally:
        child.sendcontrol("d")
        child.close(force=True)
        shutil.rmtree(sockets, ignore_errors=True)


def test_jupyter_console_answers_a_jitted_stop_at_the_prompt(console):
    child = console
    _cell(child, 1, "%load_ext jaxdbg")
    _cell(child, 2, "import jax, jax.numpy as jnp, jaxdbg")
    _cell(child, 3, "g = lambda x: (jaxdbg.breakpoint(), x * 2)[1]")
    _cell(child, 4, "f = jax.jit(lambda x: g(x) * 10)")
    _cell(child, 5, "f(jnp.arange(3.))")
    # What the console prints for the panel, then the one line, then the prompt.
    child.expect(r"jaxdbg: paused at In\[3\]:1 in <lambda>; no panel here, answering at the prompt below")
    child.expect(re.escape("jaxdbg: " + NOT_DRAWN))
    child.expect(PROMPT)
    child.sendline("p x")
    child.expect(r"Array\(\[0\., 1\., 2\.\], dtype=float32\)")
    child.expect(PROMPT)
    child.sendline("up")
    child.expect(r"In\[4\]:1")
    child.expect(PROMPT)
    child.sendline("pp no_such_name")  # a typo: a clear error, the stop goes on
    child.expect(r"NameError: name 'no_such_name' is not defined")
    child.expect(PROMPT)
    child.sendline("c")
    child.expect(r"Out\[5\]: Array\(\[ 0\., 20\., 40\.\], dtype=float32\)")
    # Remembered: the next stop goes to the prompt at once, and %jaxdbg says why.
    _cell(child, 6, "%jaxdbg")
    child.expect(r"not drawn by this frontend")
    _cell(child, 7, "f(jnp.ones(2))")
    child.expect(re.escape("jaxdbg: " + NOT_DRAWN))
    child.expect(PROMPT)
    # Ctrl-C at the prompt ends the cell; the kernel lives on.
    _press_ctrl_c_at_the_prompt(child)
    child.expect(r"KeyboardInterrupt")
    _cell(child, 8, "print('alive', 1 + 1)")
    child.expect(r"alive 2")
    # The print log, which this frontend cannot draw either, prints its rows as text.
    _cell(child, 9, "jax.jit(lambda x: jaxdbg.print('row {}', x * 3))(2.)")
    child.expect(r"jaxdbg print log \(")
    child.expect(r"row 6\.0")


def test_jupyter_console_answers_pmap_stops_in_device_order(console):
    child = console
    _cell(child, 1, "%load_ext jaxdbg")
    _cell(child, 2, "import jax, jax.numpy as jnp, jaxdbg")
    _cell(child, 3, "h = jax.pmap(lambda x: (jaxdbg.breakpoint(), x * 10)[1])")
    _cell(child, 4, "h(jnp.arange(4.))")
    child.expect(re.escape("jaxdbg: " + NOT_DRAWN))
    for device in range(4):
        child.expect(rf"device {device}\b")
        # said at the cell's first stop only, not again before each device's prompt
        assert NOT_DRAWN not in (child.before or ""), device
        child.expect(PROMPT)
        child.sendline("p x")
        child.expect(rf"Array\({device}\., dtype=float32\)")
        child.expect(PROMPT)
        child.sendline("c")
    child.expect(r"Out\[4\]: Array\(\[ ?0\., 10\., 20\., 30\.\], dtype=float32\)")


@pytest.mark.matrix("jax")
def test_ctrl_c_at_a_pmap_stop_in_jupyter_console_ends_the_cell(kernel_python, tmp_path):
    """The prompt reads the kernel's stdin on an XLA thread. From jaxlib 0.12.1 the main
    thread waits inside the pmap call itself, where no signal handler runs: the
    interrupt must reach the reading thread (it hung there)."""
    spec = tmp_path / "kernels" / "under-test"
    spec.mkdir(parents=True)
    argv = [kernel_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "under test", "language": "python"}))
    sockets = tempfile.mkdtemp(prefix="jaxdbg-console-")
    child = _spawn_console(sockets, "--kernel=under-test", JUPYTER_PATH=str(tmp_path))
    try:
        _cell(child, 1, "%load_ext jaxdbg")
        _cell(child, 2, "import jax, jax.numpy as jnp, jaxdbg")
        _cell(child, 3, "h = jax.pmap(lambda x: (jaxdbg.breakpoint(), x * 10)[1])")
        _cell(child, 4, "print(h(jnp.arange(4.)))")
        child.expect(re.escape("jaxdbg: " + NOT_DRAWN))
        child.expect(r"device 0\b")
        child.expect(PROMPT)
        child.sendline("p x + 100")
        child.expect(r"Array\(100\., dtype=float32\)")
        child.expect(PROMPT)
        _press_ctrl_c_at_the_prompt(child)
        child.expect(re.escape("KeyboardInterrupt: interrupted while paused in the debugger"), timeout=60)
        # The waiting devices' stops ended with it: the next cell runs, and no prompt shows.
        _cell(child, 5, "print('alive', 1 + 1)")
        index = child.expect([r"alive 2", PROMPT])
        assert index == 0, child.before
        _cell(child, 6, "print('rerun', jax.pmap(lambda x: x + 1)(jnp.arange(4.)).tolist())")
        child.expect(re.escape("rerun [1.0, 2.0, 3.0, 4.0]"))
    finally:
        child.sendcontrol("d")
        child.close(force=True)
        shutil.rmtree(sockets, ignore_errors=True)


def test_the_ipython_terminal_picks_the_terminal_prompt():
    child = _spawn(["ipython", "--simple-prompt", "--no-banner", "--colors=NoColor"])
    try:
        _cell(child, 1, "%load_ext jaxdbg")
        _cell(child, 2, "import jax, jax.numpy as jnp, jaxdbg")
        _cell(child, 3, "%jaxdbg")
        child.expect(r"backend\s+cli")
        _cell(child, 4, "f = jax.jit(lambda x: (jaxdbg.breakpoint(), x * 2)[1])")
        _cell(child, 5, "f(jnp.arange(3.))")
        child.expect(PROMPT)
        child.sendline("p x")
        child.expect(r"Array\(\[0\., 1\., 2\.\], dtype=float32\)")
        child.expect(PROMPT)
        child.sendline("c")
        child.expect(r"Out\[5\]: Array\(\[0\., 2\., 4\.\], dtype=float32\)")
        before = child.before or ""
        assert "panel" not in before and NOT_DRAWN not in before
    finally:
        child.sendcontrol("d")
        child.close(force=True)
