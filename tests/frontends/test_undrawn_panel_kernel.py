"""A stop is answered in every Jupyter frontend: the panel where it draws, a prompt where
it cannot (issue 27).

The kernel client here is a frontend without a widget manager (as jupyter console,
qtconsole or an editor's client): it answers stdin requests but never says that it holds
or drew the panel. One kernel per test, so each starts with nothing remembered.
"""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import PANEL_WIDGET, SETUP, live_panel, panels, press, static_texts, submit, wait_log

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

own_kernel = kernel_fixture(SETUP, expect="devices 8", scope="function")


@pytest.fixture(autouse=True)
def without_a_widget_manager(own_kernel):
    """This module's client never says on its own that it holds or drew a panel."""
    own_kernel.draws_panels = False


NOT_DRAWN = "jaxdbg: this frontend did not draw the jaxdbg panel; answering here"

STOP_CELL = textwrap.dedent("""
    @jax.jit
    def f(x):
        y = x * 2
        jaxdbg.breakpoint()
        return y + 1
    print("result", f(jnp.arange(3.0)).tolist())
""")


def _status(kernel) -> str:
    """What ``%jaxdbg`` shows (a table: its text form)."""
    result = kernel.run("%jaxdbg", timeout=60)
    return result.stdout + "".join(
        m["content"]["data"].get("text/plain", "")
        for m in result.messages
        if m["msg_type"] in ("execute_result", "display_data")
    )


def _panel_comms(result) -> list[str]:
    return [
        m["content"]["comm_id"]
        for m in result.messages
        if m["msg_type"] == "comm_open" and m["content"]["data"].get("state", {}).get("_anywidget_id") == PANEL_WIDGET
    ]


def _panel_texts(result) -> list[str]:
    return [
        m["content"]["data"].get("text/plain", "")
        for m in result.messages
        if m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]


@pytest.mark.matrix("jupyter")
def test_a_frontend_without_widgets_gets_the_prompt_and_it_is_remembered(own_kernel):
    kernel = own_kernel
    assert kernel.run("%load_ext jaxdbg", timeout=120).status == "ok"
    kernel.answer_input("p y")
    kernel.answer_input("up")
    mid = kernel.execute(STOP_CELL)
    kernel.wait_for(lambda: len(kernel.input_requests) == 3, 120, "the third (jaxdbg) prompt")
    # A view drawn late (a page that joins now) takes no commands: the prompt has the stop.
    [cid] = _panel_comms(kernel.result(mid))
    kernel.send_custom(cid, {"type": "held"})
    kernel.send_custom(cid, {"type": "run", "id": "late:1", "line": "p 'twice'", "typed": True})
    kernel.answer_input("c")
    first = kernel.wait_reply(mid, timeout=120)
    assert first.status == "ok", first
    assert "twice" not in first.stdout
    [summary] = static_texts(first)
    assert (
        "this frontend did not draw the jaxdbg panel within 5 s; this stop is being answered at the prompt." in summary
    ), summary
    # What such a frontend prints for the panel: the stop and what happens next.
    [text] = _panel_texts(first)
    assert text.startswith("jaxdbg: paused at In[") and " in f; " in text, text
    assert text.endswith("no panel here, answering at the prompt below"), text
    out = first.stdout
    assert out.count(NOT_DRAWN) == 1, out
    assert [r["content"]["prompt"] for r in kernel.input_requests] == ["(jaxdbg) "] * 3
    assert "Array([0., 2., 4.], dtype=float32)" in out
    assert "result [1.0, 3.0, 5.0]" in out
    assert "<jaxdbg debugger panel>" not in str(first.messages)

    # %jaxdbg says what was found; the next stop goes to the prompt without waiting.
    status = _status(kernel)
    assert "panel" in status and "not drawn by this frontend" in status, status
    kernel.answer_input("c")
    second = kernel.run(STOP_CELL, timeout=120)
    assert second.status == "ok", second
    assert _panel_comms(second) == [], "no panel was shown again"
    assert second.stdout.count(NOT_DRAWN) == 1 and "result [1.0, 3.0, 5.0]" in second.stdout
    assert len(kernel.input_requests) == 4

    # %jaxdbg backend widgets forces the panel again: no prompt, the panel answers.
    assert "jaxdbg backend: widgets" in kernel.run("%jaxdbg backend widgets").stdout
    assert "forced" in _status(kernel)
    mid = kernel.execute(STOP_CELL)
    cid = live_panel(kernel)
    submit(kernel, "p y", cid=cid)
    wait_log(kernel, r"Array\(\[0\., 2\., 4\.\]", cid=cid)
    press(kernel, "continue", cid=cid)
    third = kernel.wait_reply(mid, timeout=120)
    assert third.status == "ok" and "result [1.0, 3.0, 5.0]" in third.stdout, third
    assert NOT_DRAWN not in third.stdout and len(kernel.input_requests) == 4


@pytest.mark.matrix("jupyter")
def test_no_view_and_no_stdin_continues_with_one_line(own_kernel):
    """nbclient, papermill, nbconvert --execute: nobody can click or type."""
    kernel = own_kernel
    result = kernel.run(STOP_CELL, timeout=120, allow_stdin=False)
    assert result.status == "ok", result
    assert kernel.input_requests == []
    [text] = _panel_texts(result)
    assert text.endswith("no panel here, continuing, since nothing can answer a prompt here"), text
    notices = [line for line in result.stdout.splitlines() if line.startswith("jaxdbg: continuing past")]
    assert len(notices) == 1, result.stdout
    assert "this frontend did not draw the jaxdbg panel" in notices[0]
    assert "the notebook client offers no stdin" in notices[0]
    assert "result [1.0, 3.0, 5.0]" in result.stdout


@pytest.mark.matrix("jupyter")
def test_a_frontend_that_draws_the_panel_never_gets_a_stdin_request(own_kernel):
    """The panel's browser code says it holds the panel: no fallback, however long the
    stop stays paused, and %jaxdbg reports the panel drawn."""
    kernel = own_kernel
    assert kernel.run("%load_ext jaxdbg", timeout=120).status == "ok"
    held: list[str] = []

    def widget_manager(cid: str, state: dict) -> None:  # anywidget's initialize
        if state.get("_anywidget_id") == PANEL_WIDGET:
            held.append(cid)
            kernel.send_custom(cid, {"type": "held"})

    kernel.on_comm_open = widget_manager
    try:
        mid = kernel.execute(STOP_CELL)
        kernel.wait_for(lambda: held, 120, "the panel held")
        cid = held[0]
        submit(kernel, "import time; time.sleep(8)", cid=cid)  # past the wait
        submit(kernel, "p y", cid=cid)
        wait_log(kernel, r"Array\(\[0\., 2\., 4\.\]", cid=cid, timeout=120)
        press(kernel, "continue", cid=cid)
        result = kernel.wait_reply(mid, timeout=120)
    finally:
        kernel.on_comm_open = None
    assert result.status == "ok" and "result [1.0, 3.0, 5.0]" in result.stdout, result
    assert kernel.input_requests == [] and NOT_DRAWN not in result.stdout
    status = _status(kernel)
    assert "drawn by this frontend" in status and "not drawn" not in status, status


@pytest.mark.matrix("jupyter")
def test_panel_messages_on_the_main_shell_channel_are_answered_while_paused(own_kernel):
    """Named requirement: VS Code does not use kernel subshells, so its widget messages
    arrive on the main shell channel with no subshell id. The paused panel answers them."""
    kernel = own_kernel
    mid = kernel.execute(STOP_CELL)
    cid = kernel.wait_for(lambda: next(iter(panels(kernel)), None), 120, "the panel")

    def send(content: dict) -> None:
        msg = kernel.send_message("comm_msg", {"comm_id": cid, "data": {"method": "custom", "content": content}})
        assert "subshell_id" not in msg["header"]

    send({"type": "held"})
    send({"type": "drawn"})
    send({"type": "run", "id": "vscode:1", "line": "p y", "typed": True})
    wait_log(kernel, r"\(jaxdbg\) p y\nArray\(\[0\., 2\., 4\.\]", cid=cid)
    assert kernel.result(mid).reply is None, "the cell is still paused"
    send({"type": "run", "id": "vscode:2", "line": "continue", "typed": False})
    result = kernel.wait_reply(mid, timeout=120)
    assert result.status == "ok" and "result [1.0, 3.0, 5.0]" in result.stdout, result
    assert kernel.input_requests == []
