"""Every paused stop ends cleanly in a real kernel: early clicks, interrupts, queued
cells, and pages that reconnect while a cell is paused.

One kernel per ipykernel line (7.4 from the running venv; 6.29 when
JAXDBG_IPYKERNEL6_PYTHON is set), with 8 host CPU devices. Hangs are caught with
timeouts; the failure message then carries every kernel thread's stack.
"""

from __future__ import annotations

import contextlib
import re
import textwrap
import time
from typing import Callable, Iterator

import pytest

from support.kernel_harness import KernelHarness, kernel_fixture

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter"), pytest.mark.multidevice]

SETUP = textwrap.dedent("""
    import os, threading, time
    import jax, jax.numpy as jnp
    import ipywidgets as widgets
    from IPython.display import display
    import jaxdbg, jaxdbg_widgets
    from jaxdbg_widgets.pause import PauseChannel, install, interrupt_count
    install()
    stop_burning = threading.Event()

    def burn_cpu():
        # Load alongside the kernel's own threads: widens every race window.
        stop_burning.clear()
        def spin():
            while not stop_burning.is_set():
                sum(range(20000))
        for _ in range(2):
            threading.Thread(target=spin, daemon=True).start()

    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


@contextlib.contextmanager
def no_hang(kernel: KernelHarness) -> Iterator[None]:
    """Turn a timeout into a failure that shows where every kernel thread was."""
    try:
        yield
    except TimeoutError as exc:
        pytest.fail(f"{exc}\n\nkernel threads:\n{kernel.thread_dump()}", pytrace=False)


def reply_status(kernel: KernelHarness, msg_id: str, timeout: float = 120) -> str:
    return kernel.wait_reply(msg_id, timeout=timeout).status


def paused_cell(kernel: KernelHarness, tag: str, then: str = "") -> str:
    """A cell blocked in a jitted callback (main thread) until button ``tag`` is
    clicked; ``then`` runs after the click. Returns its msg_id once it waits."""
    name = re.sub(r"\W", "_", tag)
    mid = kernel.execute(
        textwrap.dedent(f"""
        b_{name} = widgets.Button(description={tag!r})
        ch_{name} = PauseChannel(); ch_{name}.attach(b_{name})
        b_{name}.on_click(lambda _: ch_{name}.post("go"))
        display(b_{name})
        def cb_{name}(x):
            print("waiting", flush=True)
            print("got", ch_{name}.wait(), flush=True)
        jax.jit(lambda x: (jax.debug.callback(cb_{name}, x), x)[1])(jnp.ones(1)).block_until_ready()
        {then}
    """)
    )
    kernel.wait_for_output(mid, "waiting", timeout=120)
    return mid


def click(kernel: KernelHarness, description: str) -> None:
    kernel.click(kernel.find_widget("ButtonModel", description=description, timeout=60))


# The debugger panel, whichever generation: one anywidget (commands as custom messages)
# or the ipywidgets composite (Buttons and a Text box).
PANEL_WIDGET = "jaxdbg_widgets.panel.widget.PanelWidget"
PANEL_BUTTONS = {"continue": "Continue", "quit": "Quit"}


def _live_panel_target(kernel: KernelHarness, line: str, known=()) -> tuple[str, dict] | None:
    """(comm_id, comm data) that runs ``line`` on the live panel, or None yet."""
    for cid, st in kernel.widgets().items():
        if cid in known:
            continue
        if st.get("_anywidget_id") == PANEL_WIDGET and not st.get("status", {}).get("finished"):
            return cid, {
                "method": "custom",
                "content": {"type": "run", "id": f"t-{line}", "line": line, "typed": False},
            }
        if st.get("_model_name") == "ButtonModel" and st.get("description") == PANEL_BUTTONS[line]:
            return cid, {"method": "custom", "content": {"event": "click"}}
    return None


def panel_target(kernel: KernelHarness, line: str, known=(), timeout: float = 120) -> tuple[str, dict]:
    return kernel.wait_for(lambda: _live_panel_target(kernel, line, known), timeout, f"a live panel to {line}")


def panel_press(kernel: KernelHarness, line: str, known=(), timeout: float = 120, cell: str | None = None) -> None:
    """Continue or Quit on the live panel, the moment the frontend could first do it.
    ``cell``: the paused cell's msg_id, whose output so far a timeout shows."""
    try:
        target = panel_target(kernel, line, known, timeout)
    except TimeoutError as exc:
        if cell is None:
            raise
        raise TimeoutError(f"{exc}\n\nthe cell so far: {kernel.result(cell)!r}") from None
    kernel.comm_msg(*target)


def panel_type(kernel: KernelHarness, text: str, timeout: float = 120) -> None:
    """A line typed into the panel's box and Enter."""
    cid, _ = panel_target(kernel, "continue", timeout=timeout)
    if kernel.widgets().get(cid, {}).get("_anywidget_id") == PANEL_WIDGET:
        kernel.comm_msg(
            cid, {"method": "custom", "content": {"type": "run", "id": "t-typed", "line": text, "typed": True}}
        )
        return
    box = kernel.find_widget("TextModel", timeout=timeout)
    kernel.set_value(box, value=text)
    kernel.comm_msg(box, {"method": "custom", "content": {"event": "submit"}})


def live_panel_left(kernel: KernelHarness) -> bool:
    return _live_panel_target(kernel, "continue") is not None


# ------------------------------------------------------------ 1: early clicks, quit


@pytest.mark.timeout(300)
def test_click_sent_as_soon_as_the_widget_appears_is_not_lost(kernel, tmp_path):
    """A widget opened during a stop is reachable from its first message on: the
    frontend may click before the stop gets to attach it."""
    clicked = tmp_path / "clicked"
    mid = kernel.execute(
        textwrap.dedent(f"""
        def early_cb(x):
            with PauseChannel() as ch:
                b = widgets.Button(description="early")
                b.on_click(lambda _: ch.post("early click"))
                display(b)
                print("opened", flush=True)
                while not os.path.exists({str(clicked)!r}):   # the frontend clicks now
                    time.sleep(0.02)
                ch.attach(b)
                print("got", ch.wait(timeout=90), flush=True)
        jax.jit(lambda x: (jax.debug.callback(early_cb, x), x)[1])(jnp.ones(1)).block_until_ready()
    """)
    )
    with no_hang(kernel):
        # As a page does: the click comes once the widget is shown, not the moment its
        # comm opens (before the cell could give it a click handler: such a click is
        # dropped by ipywidgets, and once was, here).
        kernel.wait_for_output(mid, "opened", timeout=120)
        kernel.click(kernel.find_widget("ButtonModel", description="early", timeout=120))
        time.sleep(0.5)  # the click is in the kernel before the stop attaches the widget
        clicked.write_text("yes")
        # A lost click shows while the stop still waits for it: where every thread is.
        done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "got early click" in done.stdout, done
    kernel.assert_alive()


def _session_then_quick_quit(kernel: KernelHarness, round_: int) -> None:
    first = kernel.execute(
        textwrap.dedent(f"""
        @jax.jit
        def normal_{round_}(x):
            y = x * 2
            jaxdbg.breakpoint()
            return y
        print("first", normal_{round_}(jnp.ones(2)).tolist())
    """)
    )
    panel_press(kernel, "continue", cell=first)
    assert kernel.wait_reply(first, timeout=120).status == "ok"
    known = set(kernel.widgets())
    second = kernel.execute(
        textwrap.dedent(f"""
        @jax.jit
        def quit_{round_}(x):
            jaxdbg.breakpoint()
            return x + 1
        quit_{round_}(jnp.ones(2))
    """)
    )

    # Quit the moment the panel exists, while the rest of it may still be built.
    panel_press(kernel, "quit", known=known, cell=second)
    done = kernel.wait_reply(second, timeout=120)
    text = done.stderr + " ".join(e["ename"] + ": " + e["evalue"] for e in done.errors)
    assert "DebuggerQuit" in text, done


@pytest.mark.timeout(900)
def test_quit_clicked_early_under_load_ends_the_cell(kernel):
    """Issue 6.1: Quit in the next cell's panel hung the kernel on a loaded machine."""
    kernel.run("burn_cpu()")
    try:
        with no_hang(kernel):
            for round_ in range(3):
                _session_then_quick_quit(kernel, round_)
            kernel.assert_alive()
    finally:
        kernel.execute("stop_burning.set()")  # runs next, even after a failure here


# ------------------------------------------------- 4: interrupt while a command runs


@pytest.mark.timeout(600)
def test_interrupt_during_a_typed_expression_ends_the_pmap_stop(kernel, tmp_path):
    mid = kernel.execute(
        textwrap.dedent("""
        def body(x):
            jaxdbg.breakpoint()
            return x * 10
        print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
    """)
    )
    started = tmp_path / "evaluating"  # what a command prints is its own result, so a file says it runs
    with no_hang(kernel):
        panel_type(kernel, f"p open({str(started)!r}, 'w').close() or __import__('time').sleep(4) or x", timeout=180)
        kernel.wait_for(started.exists, 120, "the typed expression to start")
        kernel.interrupt()  # while the expression runs, not while the panel waits
        done = kernel.wait_reply(mid, timeout=180)
        assert done.status == "error", done
        text = done.stderr + " ".join(e["ename"] + ": " + e["evalue"] for e in done.errors)
        assert "KeyboardInterrupt" in text, done
        # one short line, not a traceback from wherever the main thread was
        assert all(len(e["traceback"]) <= 2 for e in done.errors), done.errors
        # no stop lives on: no live panel is left
        kernel.wait_for(lambda: not live_panel_left(kernel), 60, "every panel to finish")
        # It returns (a stale error from the stopped computation is the stops' concern).
        kernel.run("try:\n    jax.effects_barrier()\nfinally:\n    print('barrier returned')", timeout=120)
    kernel.assert_alive()


@pytest.mark.timeout(300)
def test_interrupt_between_waits_is_not_missed(kernel):
    """The baseline is the stop's start: an interrupt while the stop is busy counts."""
    mid = kernel.execute(
        textwrap.dedent("""
        def between_cb(x):
            if int(x) != 0:
                return
            with PauseChannel() as ch:
                start = interrupt_count()
                print("busy", flush=True)
                while interrupt_count() == start:   # a command runs; SIGINT arrives now
                    time.sleep(0.02)
                try:
                    ch.wait(timeout=30)
                    print("wait returned: missed", flush=True)
                except KeyboardInterrupt:
                    print("wait raised KeyboardInterrupt", flush=True)
        jax.pmap(lambda x: (jax.debug.callback(between_cb, x), x)[1])(jnp.arange(2)).block_until_ready()
    """)
    )
    with no_hang(kernel):
        kernel.wait_for_output(mid, "busy", timeout=120)
        kernel.interrupt()
        done = kernel.wait_reply(mid, timeout=120)
    assert "wait raised KeyboardInterrupt" in done.stdout, done
    kernel.assert_alive()


# ------------------------------------------- 2: cells replayed after a pause (6.29)


@pytest.mark.timeout(300)
def test_cell_queued_behind_a_pause_can_be_interrupted(kernel):
    paused = paused_cell(kernel, "Go-q1")
    queued = kernel.execute("print('long started', flush=True)\nwhile True: time.sleep(0.05)")
    time.sleep(0.3)  # not observable: requests queued behind a paused shell
    with no_hang(kernel):
        click(kernel, "Go-q1")
        assert reply_status(kernel, paused) == "ok"
        kernel.wait_for_output(queued, "long started", timeout=120)
        kernel.interrupt()
        done = kernel.wait_reply(queued, timeout=60)
    assert done.status == "error" and "KeyboardInterrupt" in str(done.errors), done
    kernel.assert_alive()


@pytest.mark.timeout(400)
def test_queued_pmap_cell_that_pauses_gets_working_buttons(kernel):
    paused = paused_cell(kernel, "Go-q2")
    queued = kernel.execute(
        textwrap.dedent("""
        qchans = [PauseChannel() for _ in range(2)]
        qbuttons = [widgets.Button(description=f"Go-pm{i}") for i in range(2)]
        for i in range(2):
            qchans[i].attach(qbuttons[i])
            qbuttons[i].on_click(lambda _, i=i: qchans[i].post(f"pm{i}"))
        display(widgets.HBox(qbuttons))
        def qcb(x):
            i = int(x)
            with qchans[i].pinned():
                print(f"pm waiting {i}", flush=True)
                print(f"pm got {qchans[i].wait()} mechanism {qchans[i].mechanism}", flush=True)
        print("result", jax.pmap(lambda x: (jax.debug.callback(qcb, x), x)[1])(jnp.arange(2)).tolist())
        pmap_cell_done = True
    """)
    )
    # queued too: it must wait for the pmap cell, though that one pauses in turn
    behind = kernel.execute("print('behind sees', globals().get('pmap_cell_done'))")
    time.sleep(0.3)  # not observable: requests queued behind a paused shell
    with no_hang(kernel):
        click(kernel, "Go-q2")
        assert reply_status(kernel, paused) == "ok"
        for i in range(2):
            kernel.wait_for_output(queued, f"pm waiting {i}", timeout=120)
            click(kernel, f"Go-pm{i}")
            kernel.wait_for_output(queued, f"pm got pm{i}", timeout=60)
        done = kernel.wait_reply(queued, timeout=120)
    assert done.status == "ok" and "result [0, 1]" in done.stdout, done
    assert "mechanism idle" not in done.stdout, done
    with no_hang(kernel):
        after = kernel.wait_reply(behind, timeout=60)
    assert after.stdout == "behind sees True\n", after
    kernel.assert_alive()


# The kernel's process is held back for a moment right after a failed cell's idle
# status, as a loaded machine's scheduler may do: ipykernel 6.x ends its abort of
# queued cells only on its loop's next turn, so a cell that arrives meanwhile is aborted.
SLOW_AFTER_A_FAILURE = """
kernel_ = get_ipython().kernel
own_status = kernel_.__dict__.get("_publish_status")
def held_back_after_a_failure(status, *args, **kwargs):
    (own_status or type(kernel_)._publish_status.__get__(kernel_))(status, *args, **kwargs)
    if status == "idle" and getattr(kernel_, "_aborting", False):
        time.sleep(0.5)
kernel_._publish_status = held_back_after_a_failure
"""

RESTORE_STATUS = """
if own_status is None:
    del kernel_._publish_status
else:
    kernel_._publish_status = own_status
"""


def test_a_cell_sent_the_moment_a_failed_cell_ends_runs(kernel):
    """What the tests send after a failure reaches a kernel that runs it (the harness
    waits out ipykernel's abort), as a user's next cell always does."""
    assert kernel.run(SLOW_AFTER_A_FAILURE).status == "ok"
    try:
        failed = kernel.run("1 / 0")
        assert failed.status == "error" and "ZeroDivisionError" in str(failed.errors), failed
        kernel.assert_alive()
    finally:
        kernel.run(RESTORE_STATUS)


# -------------------- 8: queued cells abort when the pause fails, and run when it ends well


def _queue_two(kernel: KernelHarness) -> list[str]:
    ids = [kernel.execute(f"print('queued {i} ran')") for i in range(2)]
    time.sleep(0.3)  # not observable: requests queued behind a paused shell
    return ids


def _pause_that_raises(kernel: KernelHarness) -> tuple[str, Callable[[], None]]:
    paused = paused_cell(kernel, "Go-a1", then="raise ValueError('after the pause')")
    return paused, lambda: click(kernel, "Go-a1")


def _pause_interrupted(kernel: KernelHarness) -> tuple[str, Callable[[], None]]:
    return paused_cell(kernel, "Go-a2"), kernel.interrupt


def _stop_quit_in_the_panel(kernel: KernelHarness) -> tuple[str, Callable[[], None]]:
    paused = kernel.execute(
        textwrap.dedent("""
        @jax.jit
        def abort_q(x):
            jaxdbg.breakpoint()
            return x + 1
        abort_q(jnp.ones(2))
    """)
    )
    quit_target = panel_target(kernel, "quit")
    return paused, lambda: kernel.comm_msg(*quit_target)


def _pause_continued(kernel: KernelHarness) -> tuple[str, Callable[[], None]]:
    return paused_cell(kernel, "Go-a3"), lambda: click(kernel, "Go-a3")


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "pause, ends, queued_run",
    [
        pytest.param(_pause_that_raises, "error", False, id="abort-after-the-paused-cell-raises"),
        pytest.param(_pause_interrupted, "error", False, id="abort-after-the-paused-cell-is-interrupted"),
        pytest.param(_stop_quit_in_the_panel, "error", False, id="abort-after-quit-in-the-panel"),
        pytest.param(_pause_continued, "ok", True, id="still-run-after-a-clean-continue"),
    ],
)
def test_queued_cells_after_the_pause_ends(kernel, pause, ends, queued_run):
    """Cells queued behind a paused one are aborted when it fails, and run when it ends well."""
    with no_hang(kernel):
        paused, end_the_pause = pause(kernel)
        queued = _queue_two(kernel)
        end_the_pause()
        assert reply_status(kernel, paused) == ends
        for i, msg_id in enumerate(queued):
            result = kernel.wait_reply(msg_id, timeout=120)
            if queued_run:
                assert result.status == "ok" and result.stdout == f"queued {i} ran\n", result
            else:
                assert result.status == "aborted", result
                assert "ran" not in result.stdout, result
    kernel.assert_alive()


# --------------------------------------------- 11: a page that reconnects while paused


class SecondClient:
    """Another frontend on the same kernel (a reloaded page): own session id."""

    def __init__(self, kernel: KernelHarness) -> None:
        from jupyter_client import BlockingKernelClient

        self.client = BlockingKernelClient()
        self.client.load_connection_info(kernel.km.get_connection_info())
        self.client.start_channels()

    def request(self, msg_type: str, content: dict, timeout: float = 30) -> dict:
        msg = self.client.session.msg(msg_type, content)
        self.client.shell_channel.send(msg)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.client.get_shell_msg(timeout=0.5)
            except Exception:
                continue
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                return reply
        raise TimeoutError(f"no reply to {msg_type} within {timeout}s")

    def send_comm(self, comm_id: str, data: dict) -> str:
        msg = self.client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def iopub_for(self, parent_id: str, msg_type: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.client.get_iopub_msg(timeout=0.5)
            except Exception:
                continue
            if msg["parent_header"].get("msg_id") == parent_id and msg["msg_type"] == msg_type:
                return msg
        raise TimeoutError(f"no {msg_type} for {parent_id} within {timeout}s")

    def close(self) -> None:
        self.client.stop_channels()


@pytest.mark.timeout(300)
def test_reloaded_page_rebuilds_the_paused_widgets_and_resumes(kernel):
    paused = paused_cell(kernel, "Go-r1")
    button = kernel.find_widget("ButtonModel", description="Go-r1")
    page = SecondClient(kernel)
    try:
        with no_hang(kernel):
            info = page.request("kernel_info_request", {})
            assert info["content"]["status"] == "ok"
            assert info["content"]["language_info"]["name"] == "python"
            comms = page.request("comm_info_request", {"target_name": "jupyter.widget"})
            assert button in comms["content"]["comms"], comms
            # what ipywidgets does for each live model after a reload
            asked = page.send_comm(button, {"method": "request_state"})
            state = page.iopub_for(asked, "comm_msg")
            assert state["content"]["data"]["state"]["description"] == "Go-r1"
            page.send_comm(button, {"method": "custom", "content": {"event": "click"}})
            done = kernel.wait_reply(paused, timeout=60)
        assert done.status == "ok" and "got go" in done.stdout, done
    finally:
        page.close()
    kernel.assert_alive()


@pytest.mark.timeout(300)
def test_reloaded_page_finds_the_debugger_panel(kernel):
    paused = kernel.execute(
        textwrap.dedent("""
        @jax.jit
        def reload_f(x):
            jaxdbg.breakpoint()
            return x * 2
        print("result", reload_f(jnp.ones(2)).tolist())
    """)
    )
    panel_comm, continue_data = panel_target(kernel, "continue")
    page = SecondClient(kernel)
    try:
        with no_hang(kernel):
            assert page.request("kernel_info_request", {})["content"]["status"] == "ok"
            comms = page.request("comm_info_request", {"target_name": "jupyter.widget"})
            assert panel_comm in comms["content"]["comms"], comms
            page.send_comm(panel_comm, continue_data)
            done = kernel.wait_reply(paused, timeout=60)
        assert done.status == "ok" and "result [2.0, 2.0]" in done.stdout, done
    finally:
        page.close()
    kernel.assert_alive()


def shell_reply(kernel: KernelHarness, msg_id: str, timeout: float = 90) -> dict:
    """The shell reply to a request (the first completion imports jedi: seconds)."""
    with no_hang(kernel):
        return kernel.wait_for(lambda: kernel.result(msg_id).reply, timeout, f"the reply to {msg_id}")


@pytest.mark.timeout(300)
def test_other_cells_tab_completion_and_help_answer_while_paused(kernel):
    """The notebook's Tab / Shift+Tab in another cell (complete_request and
    inspect_request on the shell channel) are answered while a stop holds its cell."""
    paused = kernel.execute(
        textwrap.dedent("""
        @jax.jit
        def complete_f(x):
            jaxdbg.breakpoint()
            return x * 2
        print("result", complete_f(jnp.ones(2)).tolist())
    """)
    )
    panel_target(kernel, "continue")
    completed = shell_reply(kernel, kernel.complete("stop_bur", 8))
    assert "stop_burning" in completed["content"]["matches"], completed["content"]
    inspected = shell_reply(kernel, kernel.inspect("stop_burning", 12))
    assert inspected["content"]["status"] == "ok" and inspected["content"]["found"], inspected["content"]
    assert kernel.result(paused).reply is None, "the stop must still be paused"
    panel_press(kernel, "continue")
    done = kernel.wait_reply(paused, timeout=60)
    assert done.status == "ok" and "result [2.0, 2.0]" in done.stdout, done
    kernel.assert_alive()


def views_report(kernel: KernelHarness, comm_id: str, count: int) -> str:
    """What a widget's frontend code sends when its number of views changes."""
    return kernel.comm_msg(comm_id, {"method": "custom", "content": {"type": "jaxdbg-views", "count": count}})


@pytest.mark.timeout(300)
def test_cleared_output_is_reported_to_the_paused_stop(kernel):
    mid = kernel.execute(
        textwrap.dedent("""
        bh = widgets.Button(description="Go-hidden")
        chh = PauseChannel(); chh.attach(bh)
        bh.on_click(lambda _: chh.post("go"))
        display(bh)
        def hcb(x):
            print("waiting", flush=True)
            print("first", chh.wait(), flush=True)
            print("second", chh.wait(), flush=True)
        jax.jit(lambda x: (jax.debug.callback(hcb, x), x)[1])(jnp.ones(1)).block_until_ready()
    """)
    )
    kernel.wait_for_output(mid, "waiting", timeout=120)
    button = kernel.find_widget("ButtonModel", description="Go-hidden")
    with no_hang(kernel):
        kernel.comm_msg(button, {"method": "custom", "content": {"type": "other"}})  # not ours
        views_report(kernel, button, 0)
        kernel.wait_for_output(mid, "first HIDDEN", timeout=60)
        kernel.click(button)
        done = kernel.wait_reply(mid, timeout=60)
    assert "second go" in done.stdout, done


def panel_views(result) -> list[str]:
    return [
        m["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
        for m in result.messages
        if m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]


@pytest.mark.timeout(300)
def test_panel_whose_views_were_cleared_is_shown_again(kernel):
    mid = kernel.execute(
        textwrap.dedent("""
        @jax.jit
        def cleared_f(x):
            jaxdbg.breakpoint()
            return x * 2
        print("result", cleared_f(jnp.ones(2)).tolist())
    """)
    )
    with no_hang(kernel):
        shown = kernel.wait_for(lambda: panel_views(kernel.result(mid)), 120, "the panel")
        views_report(kernel, shown[0], 0)  # Clear Output in the page
        again = kernel.wait_for(
            lambda: len(panel_views(kernel.result(mid))) == 2 and panel_views(kernel.result(mid)), 60, "the panel again"
        )
        assert again[1] == again[0], again
        assert kernel.result(mid).reply is None, "still paused"
        kernel.interrupt()
        assert kernel.wait_reply(mid, timeout=60).status == "error"
    kernel.assert_alive()
