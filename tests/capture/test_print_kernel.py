"""The print log in a real ipykernel: rows with locations, vmap / pmap labels,
batched transport, ordered prints, and the static output a cell leaves behind."""

from __future__ import annotations

import textwrap

import pytest

from support.kernel_harness import ipykernel_version_of, kernel_fixture

pytestmark = [pytest.mark.kernel]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg
    %load_ext jaxdbg
    print("devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP)


def log_comm_messages(kernel, result) -> tuple[str, list[dict]]:
    """The print log widget's comm id and the state updates it sent."""
    opens = [
        m
        for m in kernel.messages()
        if m["msg_type"] == "comm_open"
        and m["content"]["data"].get("state", {}).get("_model_name") == "AnyModel"
        and "jaxdbg-print-log" in m["content"]["data"]["state"].get("_css", "")
        and m["parent_header"].get("msg_id") == result.msg_id
    ]
    assert opens, result
    comm_id = opens[-1]["content"]["comm_id"]
    updates = [
        m
        for m in kernel.messages()
        if m["msg_type"] == "comm_msg"
        and m["content"]["comm_id"] == comm_id
        and m["content"]["data"].get("method") == "update"
    ]
    return comm_id, updates


def sent_rows(updates: list[dict]) -> list[list[str]]:
    rows: list[list[str]] = []
    for m in updates:
        chunk = m["content"]["data"]["state"].get("chunk")
        if chunk:
            assert chunk["offset"] == len(rows)
            rows.extend(chunk["rows"])
    return rows


def static_output(result) -> dict:
    """The display the log's widget was replaced with when the cell ended."""
    updates = [m for m in result.messages if m["msg_type"] == "update_display_data"]
    assert updates, result
    return updates[-1]["content"]["data"]


@pytest.mark.matrix("jax")
def test_rows_carry_location_and_batch_labels(kernel):
    result = kernel.run(
        textwrap.dedent("""
        def f(x):
            jaxdbg.print("x is {}", x)
            return x * 2
        jax.jit(jax.vmap(f))(jnp.arange(3.0))
        jax.debug.print("plain {}", 7)
    """)
    )
    assert result.status == "ok", result
    assert "x is" not in result.stdout and "plain" not in result.stdout, result
    _, updates = log_comm_messages(kernel, result)
    rows = sent_rows(updates)
    assert [r[2] for r in rows] == ["x is 0.0", "x is 1.0", "x is 2.0", "plain 7"]
    assert all(r[0].startswith("In[") and r[0].endswith(":2") for r in rows[:3]), rows
    assert [r[1] for r in rows[:3]] == ["batch 1/3", "batch 2/3", "batch 3/3"]
    assert rows[3][0].endswith(":5") and rows[3][1] == ""


@pytest.mark.multidevice
@pytest.mark.matrix("jax")
def test_pmap_rows_name_their_device(kernel):
    result = kernel.run(
        textwrap.dedent("""
        def g(x):
            jaxdbg.print("dev value {}", x)
            return x
        jax.pmap(g)(jnp.arange(4.0))
    """)
    )
    assert result.status == "ok", result
    expected = [f"device {i}  | dev value {float(i)}" for i in range(4)]

    def static_with_every_device():
        # Rows printed on XLA threads after the cell ended still reach its static output.
        for m in reversed(kernel.result(result.msg_id).messages):
            if m["msg_type"] == "update_display_data":
                text = m["content"]["data"]["text/plain"]
                return text if all(e in text for e in expected) else None
        return None

    text = kernel.wait_for(static_with_every_device, 30, "every device's row in the static log")
    assert text.count("dev value") == 4, text
    assert all(line.startswith("In[") for line in text.splitlines()[1:]), text


def test_ten_thousand_prints_batched_and_none_lost(kernel):
    result = kernel.run(
        textwrap.dedent("""
        def body(c, x):
            jax.debug.print("step {}", x)
            return c + x, None
        jax.jit(lambda xs: jax.lax.scan(body, 0, xs))(jnp.arange(10_000))
        None
    """),
        timeout=300,
    )
    assert result.status == "ok", result
    _, updates = log_comm_messages(kernel, result)
    assert len(updates) <= 100, len(updates)
    rows = sent_rows(updates)
    assert [r[2] for r in rows] == [f"step {i}" for i in range(10_000)]
    static = static_output(result)
    lines = static["text/plain"].splitlines()
    count = result.reply["content"]["execution_count"]
    assert lines[0] == f"jaxdbg print log (In[{count}] print log, 10,000 rows)"
    assert [line.rsplit("| ", 1)[1] for line in lines[1:]] == [f"step {i}" for i in range(10_000)]
    assert "9,960 more rows" in static["text/html"]


def test_ordered_prints_keep_their_order(kernel):
    result = kernel.run(
        textwrap.dedent("""
        @jax.jit
        def h(x):
            for k in range(20):
                jaxdbg.print("ordered {}", x + k, ordered=True)
            return x
        h(0)
    """)
    )
    assert result.status == "ok", result
    rows = sent_rows(log_comm_messages(kernel, result)[1])
    assert [r[2] for r in rows] == [f"ordered {k}" for k in range(20)]


@pytest.mark.matrix("jupyter")
def test_log_becomes_static_output_and_widget_closes(kernel):
    result = kernel.run('jaxdbg.print("<b>not bold</b> {}", jnp.ones(2))')
    assert result.status == "ok", result
    comm_id, _ = log_comm_messages(kernel, result)
    static = static_output(result)
    assert set(static) == {"text/html", "text/plain"}
    assert "&lt;b&gt;not bold&lt;/b&gt; [1. 1.]" in static["text/html"]
    assert "jaxdbg-static" in static["text/html"] and "Save log" in static["text/html"]
    assert static["text/plain"].endswith("| <b>not bold</b> [1. 1.]\n")
    closed = [m for m in result.messages if m["msg_type"] == "comm_close" and m["content"]["comm_id"] == comm_id]
    assert closed, result


def statuses(kernel) -> list[tuple[str, str]]:
    """(execution_state, parent msg_id) of every status message so far, in order."""
    return [
        (m["content"]["execution_state"], m["parent_header"].get("msg_id", ""))
        for m in kernel.messages()
        if m["msg_type"] == "status"
    ]


def send_control(kernel, msg_type: str, content: dict) -> str:
    """Send a request on the control channel, as a frontend does; its msg_id."""
    return kernel.send_message(msg_type, content, channel="control")["header"]["msg_id"]


def assert_busy_again_for(kernel, cell_id: str, msg_type: str) -> None:
    """The last status, once a ``msg_type`` request's idle came, is busy for the cell."""
    last = kernel.wait_for(
        lambda: (s := statuses(kernel)) and s[-1][0] == "busy" and s[-1],
        10,
        f"busy again after {msg_type}: {statuses(kernel)[-4:]}",
    )
    assert last[1] == cell_id, (last, cell_id)


@pytest.mark.matrix("jupyter")
def test_a_cell_writing_to_the_print_log_stays_busy_after_other_requests(kernel, tmp_path):
    """While a cell runs the kernel handles control messages (JupyterLab asks for a
    subshell for the widgets' comms the moment the print log's widget opens), each with
    its own busy / idle pair; the status bar follows the last status, so after each idle
    the kernel says busy again for the running cell."""
    flag = tmp_path / "may-end"
    mid = kernel.execute(
        textwrap.dedent(f"""
        import os, time
        jax.jit(lambda xs: jax.lax.scan(
            lambda c, x: (jax.debug.print("step {{}}", x) or c + x, None), 0.0, xs))(jnp.arange(50.0))
        while not os.path.exists({str(flag)!r}):
            time.sleep(0.02)
    """)
    )
    kernel.wait_for(
        lambda: any(m["msg_type"] == "comm_open" for m in kernel.result(mid).messages), 60, "the live print log"
    )
    requests = ["kernel_info_request"]
    if ipykernel_version_of(kernel.python) >= (7,):  # kernel subshells (JEP 91)
        requests.insert(0, "create_subshell_request")
    for msg_type in requests:
        sent = send_control(kernel, msg_type, {})
        kernel.wait_for(lambda: ("idle", sent) in statuses(kernel), 30, f"the idle of {msg_type}")
        assert_busy_again_for(kernel, mid, msg_type)
    flag.write_text("")
    result = kernel.wait_reply(mid, timeout=60)
    assert result.status == "ok", result
    kernel.wait_for(lambda: statuses(kernel)[-1] == ("idle", mid), 30, "the cell's own idle last")


@pytest.mark.matrix("jupyter")
def test_a_request_answered_while_the_print_logs_widget_is_made_leaves_the_cell_busy(kernel, tmp_path):
    """The widget's comm opens as it is made, and the frontend's subshell request can be
    answered (busy, idle) before the maker returns: the cell must already be kept busy
    then (a Notebook 7 page under load saw idle while the cell still ran)."""
    answered, may_end = tmp_path / "answered", tmp_path / "may-end"
    kernel.run(
        textwrap.dedent(f"""
        import os, time
        import jaxdbg_widgets.print_log.widget as _print_log_widget
        _made_promptly = _print_log_widget.PrintLogWidget

        class _MadeSlowly(_made_promptly):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                while not os.path.exists({str(answered)!r}):
                    time.sleep(0.02)

        _print_log_widget.PrintLogWidget = _MadeSlowly
    """)
    )
    try:
        mid = kernel.execute(
            textwrap.dedent(f"""
            jax.jit(lambda x: jax.debug.print("made {{}}", x))(1.0)
            while not os.path.exists({str(may_end)!r}):
                time.sleep(0.02)
        """)
        )
        kernel.wait_for(
            lambda: any(m["msg_type"] == "comm_open" for m in kernel.result(mid).messages), 60, "the print log's comm"
        )
        msg_type = "create_subshell_request" if ipykernel_version_of(kernel.python) >= (7,) else "kernel_info_request"
        sent = send_control(kernel, msg_type, {})
        kernel.wait_for(lambda: ("idle", sent) in statuses(kernel), 30, f"the idle of {msg_type}")
        answered.write_text("")
        assert_busy_again_for(kernel, mid, msg_type)
        may_end.write_text("")
        result = kernel.wait_reply(mid, timeout=60)
        assert result.status == "ok", result
    finally:
        answered.write_text("")
        may_end.write_text("")
        kernel.run("_print_log_widget.PrintLogWidget = _made_promptly")


def test_print_off_sends_jax_prints_to_stdout(kernel):
    result = kernel.run(
        textwrap.dedent("""
        %jaxdbg print off
        jax.jit(lambda x: jax.debug.print("to stdout {}", x))(1)
        %jaxdbg print on
    """)
    )
    assert result.status == "ok", result
    assert (
        "jaxdbg: jax.debug.print calls go to stdout, as JAX prints them\n"
        "to stdout 1\njaxdbg: jax.debug.print calls go to the print log\n" == result.stdout
    ), result
    assert not any(m["msg_type"] == "comm_open" for m in result.messages), result
    bad = kernel.run("%jaxdbg print maybe")
    assert "%jaxdbg print: expected on or off, not 'maybe'" in bad.stdout, bad


def test_unload_restores_stdout_prints(kernel):
    result = kernel.run(
        textwrap.dedent("""
        %unload_ext jaxdbg
        jax.jit(lambda x: jax.debug.print("after unload {}", x))(1)
        jaxdbg.print("ours after unload {}", 2)
        from jax.experimental import checkify
        html = get_ipython().display_formatter.formatters["text/html"]
        print(jax.debug.print.__module__, checkify.Error in html.type_printers,
              "checkify" in get_ipython().magics_manager.magics["cell"])
    """)
    )
    try:
        assert result.status == "ok", result
        assert "after unload 1\nours after unload 2\n" in result.stdout, result
        assert result.stdout.strip().endswith("jax._src.debugging False False"), result
        assert not any(m["msg_type"] == "comm_open" for m in result.messages), result
    finally:
        kernel.run("%load_ext jaxdbg")
