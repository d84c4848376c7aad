"""PauseChannel against real kernels: clicks reach a cell blocked in a JAX callback.

Runs for ipykernel from the running venv (7.4: private subshell) and, when
JAXDBG_IPYKERNEL6_PYTHON names a Python with ipykernel 6.29, for that too (shell pump).
Each kernel has 8 host CPU devices: a plain jit still calls back on the main thread,
pmap calls back on XLA pool threads while the main thread waits inside XLA.
"""

from __future__ import annotations

import re
import textwrap
import time

import pytest

from support.kernel_harness import ipykernel_version_of, kernel_fixture

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter"), pytest.mark.multidevice]

SETUP = textwrap.dedent("""
    import threading
    import jax, jax.numpy as jnp
    import ipywidgets as widgets
    from IPython.display import display
    from jaxdbg_widgets.pause import PauseChannel, CLOSED, UNRESPONSIVE, install
    from jaxdbg.internals import ipykernel_busy, ipykernel_status
    install()
    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


def kernel_major(kernel) -> int:
    return kernel.ipykernel_major


def expected_mechanism(kernel) -> str:
    return "subshell" if kernel_major(kernel) >= 7 else "pump"


def exec_count(result) -> int:
    return result.reply["content"]["execution_count"]


BUTTON_CELL = """
b = widgets.Button(description={desc!r})
ch = PauseChannel()
ch.attach(b)
b.on_click(lambda _: ch.post("go"))
display(b)
print("mechanism", ch.mechanism)

def cb(x):
    with ch.pinned():
        print("waiting on", threading.current_thread().name, flush=True)
        print("got", ch.wait())

@jax.jit
def f(x):
    jax.debug.callback(cb, x)
    return x + 1

print("result", f(jnp.ones(2)))
"""


@pytest.mark.timeout(300)
def test_click_resumes_cell_blocked_on_main_thread(kernel):
    mid = kernel.execute(BUTTON_CELL.format(desc="Go-main"))
    kernel.wait_for_output(mid, "waiting on")
    blocked = kernel.result(mid)
    assert "waiting on MainThread" in blocked.stdout, blocked
    assert f"mechanism {expected_mechanism(kernel)}" in blocked.stdout, blocked
    assert blocked.reply is None, "the cell must still be running"
    # a cell queued during the pause, and a widget value change meanwhile
    queued = kernel.execute("print('queued ran', b.description)")
    # No message tells a client that a request queued behind a busy shell has reached
    # the kernel, so this is the one wait that cannot be an observed event.
    time.sleep(0.3)
    button = kernel.find_widget("ButtonModel", description="Go-main")
    kernel.click(button)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "got go" in done.stdout, done
    assert "result [2. 2.]" in done.stdout, done
    after = kernel.wait_reply(queued, timeout=60)
    assert after.status == "ok", after
    assert "queued ran Go-main" in after.stdout, after
    assert "queued ran" not in done.stdout
    assert exec_count(after) == exec_count(done) + 1


@pytest.mark.timeout(300)
def test_widget_update_while_paused_and_several_queued_cells_keep_order(kernel):
    code = """
t = widgets.Text(description="expr")
ok = widgets.Button(description="Eval")
box = widgets.VBox([t, widgets.HBox([ok])])
ch2 = PauseChannel()
ch2.attach(box)          # children are routed too
ok.on_click(lambda _: ch2.post(("eval", t.value)))
display(box)

def cb2(x):
    with ch2.pinned():
        print("waiting", flush=True)
        print("got", ch2.wait())

jax.jit(lambda x: (jax.debug.callback(cb2, x), x)[1])(jnp.zeros(1)).block_until_ready()
"""
    mid = kernel.execute(code)
    kernel.wait_for_output(mid, "waiting")
    queued = [kernel.execute(f"print('cell', {i})") for i in range(3)]
    text = kernel.find_widget("TextModel", description="expr")
    kernel.set_value(text, value="x * 2")
    # No pause: the value update and the click travel on the same channel, in order.
    kernel.click(kernel.find_widget("ButtonModel", description="Eval"))
    done = kernel.wait_reply(mid)
    assert "got ('eval', 'x * 2')" in done.stdout, done
    results = [kernel.wait_reply(q) for q in queued]
    for i, r in enumerate(results):
        assert r.stdout == f"cell {i}\n", r
        assert exec_count(r) == exec_count(done) + 1 + i


PMAP_CELL = """
n = jax.device_count()
chans, buttons = [], []
for i in range(n):
    bi = widgets.Button(description=f"Go-{i}")
    ci = PauseChannel()
    ci.attach(bi)
    bi.on_click(lambda _, ci=ci, i=i: ci.post(f"go{i}"))
    chans.append(ci); buttons.append(bi)
display(widgets.HBox(buttons))

def pcb(x):
    i = int(x)
    with chans[i].pinned():
        print(f"waiting {i} main={threading.current_thread() is threading.main_thread()}", flush=True)
        print(f"got {i} {chans[i].wait()}", flush=True)

g = jax.pmap(lambda x: (jax.debug.callback(pcb, x), x * 10)[1])
print("result", g(jnp.arange(n)).tolist())
"""


@pytest.mark.timeout(400)
def test_pmap_callbacks_on_xla_threads_each_with_its_own_button(kernel):
    mid = kernel.execute(PMAP_CELL)
    released: list[int] = []
    deadline = time.monotonic() + 240
    while len(released) < 8 and time.monotonic() < deadline:
        out = kernel.result(mid).stdout
        waiting = [int(i) for i in re.findall(r"waiting (\d+)", out)]
        pending = [i for i in waiting if i not in released]
        if not pending:
            time.sleep(0.05)
            continue
        i = pending[0]
        assert kernel.result(mid).reply is None
        kernel.click(kernel.find_widget("ButtonModel", description=f"Go-{i}"))
        kernel.wait_for_output(mid, f"got {i} go{i}")
        released.append(i)
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert sorted(released) == list(range(8))
    assert "main=True" not in done.stdout, "pmap callbacks should run on XLA threads"
    assert "result [0, 10, 20, 30, 40, 50, 60, 70]" in done.stdout, done
    # every "got" line, printed after a click was handled elsewhere, stayed in the cell
    assert done.stdout.count("got ") == 8
    assert kernel.run("print('after pmap')").stdout == "after pmap\n"


@pytest.mark.timeout(300)
def test_prints_from_callback_thread_stay_in_paused_cell(kernel):
    code = """
b3 = widgets.Button(description="Go-print")
ch3 = PauseChannel(); ch3.attach(b3)
b3.on_click(lambda _: (print("handler output"), ch3.post("go")))
display(b3)
def pcb3(x):
    if int(x) != 0:
        return
    with ch3.pinned():
        print("before", flush=True)
        ch3.wait()
        print("after click", threading.current_thread().name, flush=True)
jax.pmap(lambda x: (jax.debug.callback(pcb3, x), x)[1])(jnp.arange(2)).block_until_ready()
"""
    mid = kernel.execute(code)
    kernel.wait_for_output(mid, "before")
    click = kernel.click(kernel.find_widget("ButtonModel", description="Go-print"))
    done = kernel.wait_reply(mid)
    assert "after click" in done.stdout, done
    assert "MainThread" not in done.stdout
    assert "after click" not in kernel.result(click).stdout
    if ipykernel_version_of(kernel.python) >= (6, 29):
        assert "handler output" not in done.stdout  # the handler's output belongs to the click
    # else (Colab's 6.17): one global parent per stream, kept on the paused cell


# IPython's words when its traceback formatter raised (it then prints a plain traceback).
FORMATTING_FAILED = "Unexpected exception formatting exception"


def _interrupt_case(kernel, cell: str):
    mid = kernel.execute(cell)
    kernel.wait_for_output(mid, "waiting")
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "error", done
    text = " ".join(e["ename"] + " " + e["evalue"] for e in done.errors)
    if FORMATTING_FAILED in done.stdout:
        # The interrupt reached the main thread while IPython formatted the cell's error,
        # so IPython printed a plain traceback itself (on stdout or stderr, by ipykernel
        # version) instead of sending an error message. What the user reads is that text.
        text = done.stdout + done.stderr
    assert "KeyboardInterrupt" in text, done
    print("interrupt errors:", [(e["ename"], e["evalue"][:200]) for e in done.errors])
    after = kernel.run("print('next cell fine')", timeout=60)
    assert after.status == "ok" and after.stdout == "next cell fine\n", after


@pytest.mark.timeout(300)
def test_interrupt_while_paused_on_main_thread(kernel):
    _interrupt_case(
        kernel,
        """
chi = PauseChannel(); chi.attach(widgets.Button(description="never"))
def icb(x):
    print("waiting", flush=True)
    chi.wait()
jax.jit(lambda x: (jax.debug.callback(icb, x), x)[1])(jnp.ones(1)).block_until_ready()
""",
    )


@pytest.mark.timeout(300)
def test_interrupt_while_paused_on_xla_threads(kernel):
    _interrupt_case(
        kernel,
        """
chx = PauseChannel(); chx.attach(widgets.Button(description="never-x"))
def xcb(x):
    print("waiting", flush=True)
    chx.wait()
jax.pmap(lambda x: (jax.debug.callback(xcb, x), x)[1])(jnp.arange(jax.device_count())).block_until_ready()
""",
    )


@pytest.mark.timeout(300)
def test_closed_panel_ends_wait_with_sentinel(kernel):
    code = """
bc = widgets.Button(description="Go-close")
chc = PauseChannel(); chc.attach(bc)
def ccb(x):
    print("waiting", flush=True)
    r = chc.wait()
    print("wait returned", r, r is CLOSED)
jax.jit(lambda x: (jax.debug.callback(ccb, x), x)[1])(jnp.ones(1)).block_until_ready()
"""
    mid = kernel.execute(code)
    kernel.wait_for_output(mid, "waiting")
    kernel.close_comm(kernel.find_widget("ButtonModel", description="Go-close"))
    done = kernel.wait_reply(mid)
    assert "wait returned CLOSED True" in done.stdout, done


@pytest.mark.timeout(120)
def test_wait_times_out_and_returns_queued_commands(kernel):
    """(Without a kernel the channel asks for the prompt: see the last test here.)"""
    result = kernel.run("""
cht = PauseChannel(); cht.attach(widgets.Button(description="t"))
print("timeout", cht.wait(timeout=0.2))
cht.post("queued"); print("queued", cht.wait())
cht.close()
""")
    assert "timeout None" in result.stdout and "queued queued" in result.stdout, result


@pytest.mark.timeout(120)
def test_private_ipykernel_names_still_exist(kernel):
    """Fails loudly when ipykernel moves a private name the adapter relies on."""
    result = kernel.run(
        "st = ipykernel_status.adapter_status(); print('MISSING', st['missing']); "
        "print('VERSION', st['ipykernel']); print('SUB', st['subshells'], 'PUMP', st['pump'])"
    )
    assert "MISSING []" in result.stdout, result
    if kernel_major(kernel) >= 7:
        assert "SUB True" in result.stdout, result
    else:
        assert "PUMP True" in result.stdout, result


@pytest.mark.timeout(120)
def test_wait_after_cell_returned(kernel):
    """A callback that runs after its cell returned (async dispatch): normal kernel."""
    mid = kernel.execute("""
import time as _time
bl = widgets.Button(description="Go-late")
chl = PauseChannel(); chl.attach(bl)
bl.on_click(lambda _: chl.post("go"))
display(bl)
cell_ended = threading.Event()
def _cell_ended(result=None):
    cell_ended.set()
get_ipython().events.register("post_run_cell", _cell_ended)
def later():
    # Start once this cell has returned and the main shell left its request.
    assert cell_ended.wait(60)
    get_ipython().events.unregister("post_run_cell", _cell_ended)
    deadline = _time.monotonic() + 60
    while ipykernel_busy.main_shell_busy(get_ipython().kernel) and _time.monotonic() < deadline:
        _time.sleep(0.01)
    with chl.pinned():
        print("late waiting", flush=True)
        r = chl.wait(timeout=60)
        print("late got", r, chl.mechanism, flush=True)
threading.Thread(target=later).start()
""")
    assert kernel.wait_reply(mid).status == "ok"
    kernel.wait_for_output(mid, "late waiting")
    kernel.click(kernel.find_widget("ButtonModel", description="Go-late"))
    expected = "subshell" if kernel_major(kernel) >= 7 else "idle"
    got = kernel.wait_for(lambda: _whole_lines_from_any_request(kernel, "late got"), 60, "late got")
    assert got == [f"late got go {expected}\n"], got
    assert kernel.run("print('still fine')").stdout == "still fine\n"


def _whole_lines_from_any_request(kernel, start: str) -> list[str]:
    """The finished printed lines that begin with `start`, whatever request each piece
    went to: on ipykernel 6.17 a thread's prints follow the kernel's one global parent,
    and one print may be sent as several stream messages."""
    text = "".join(m["content"]["text"] for m in kernel.messages() if m["msg_type"] == "stream")
    return [line for line in text.splitlines(keepends=True) if line.startswith(start) and line.endswith("\n")]


@pytest.mark.timeout(120)
def test_wait_after_cell_returned_while_the_main_shell_handles_the_click(kernel):
    """A late callback's wait that starts while the idle main shell is handling a click
    on the stop's own widget: the kernel's loop comes back at once, so nothing may pump
    its shell socket beside it (6.x), and the click is still delivered."""
    mid = kernel.execute("""
bm = widgets.Button(description="Go-during")
chm = PauseChannel(); chm.attach(bm)
in_click, waited = threading.Event(), threading.Event()
bm.on_click(lambda _: chm.post("go"))
bm.on_click(lambda _: (in_click.set(), waited.wait(60)))  # the main shell stays in it
cell_done = threading.Event()
def _cell_done(result=None):
    cell_done.set()
get_ipython().events.register("post_run_cell", _cell_done)
def during():
    assert cell_done.wait(60)
    get_ipython().events.unregister("post_run_cell", _cell_done)
    deadline = _time.monotonic() + 60
    while ipykernel_busy.main_shell_busy(get_ipython().kernel) and _time.monotonic() < deadline:
        _time.sleep(0.01)
    with chm.pinned():
        print("during waiting", flush=True)
        assert in_click.wait(60)
        r = chm.wait(timeout=60)
        waited.set()
        print("during got", r, chm.mechanism, flush=True)
import time as _time
threading.Thread(target=during).start()
""")
    assert kernel.wait_reply(mid).status == "ok"
    kernel.wait_for_output(mid, "during waiting")
    kernel.click(kernel.find_widget("ButtonModel", description="Go-during"))
    expected = "subshell" if kernel_major(kernel) >= 7 else "idle"

    got = kernel.wait_for(lambda: _whole_lines_from_any_request(kernel, "during got"), 60, "during got")
    assert got == [f"during got go {expected}\n"], got
    assert kernel.run("print('still fine')").stdout == "still fine\n"


def test_outside_a_kernel_the_channel_asks_for_a_prompt():
    """No kernel (plain Python, as in this pytest process): fall back to input()."""
    from jaxdbg_widgets.pause import UNRESPONSIVE, PauseChannel

    channel = PauseChannel()
    assert channel.mechanism == "prompt"
    assert "kernel" in channel.detail
    assert channel.wait() is UNRESPONSIVE
    channel.post("continue")  # a command posted anyway is still delivered
    assert channel.wait() == "continue"
    channel.close()
