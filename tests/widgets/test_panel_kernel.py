"""The debugger panel in a real ipykernel, driven with the comm messages a browser sends.

One kernel per ipykernel line (7.4 from the running venv; 6.29 when
JAXDBG_IPYKERNEL6_PYTHON is set), with 8 host CPU devices. A cell runs a jitted
function that hits ``jaxdbg.breakpoint()``; the test sends what the panel's browser
code sends (``model.send``: a typed line with its text, a button's command line) and
checks the widget state the kernel sent back and the cell's own result.
"""

from __future__ import annotations

import re

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import (  # noqa: F401
    MODULE_HEADING,
    PANEL_WIDGET,
    SETUP,
    closed,
    comms_opened_by,
    live_panel,
    log_text,
    panels,
    press,
    state,
    static_outputs,
    static_texts,
    submit,
    wait_banner,
    wait_log,
    wait_panel,
    wait_source,
)

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli'] devices 8")


# --------------------------------------------------------------------------- tests

FLOW_CELL = """
def inner(y):
    z = {"twice": y * 2, "tag": "<b>t</b>"}
    jaxdbg.breakpoint()
    return z["twice"] + 1

def middle(y):
    return inner(y) * 10

@jax.jit
def outer(x):
    y = jnp.sin(x) + 1
    return middle(y)

print("result", outer(jnp.zeros(3)).tolist())
"""
# Lines of FLOW_CELL as the kernel numbers them (IPython drops the leading blank line).
LINE_BREAKPOINT, LINE_MIDDLE, LINE_OUTER, LINE_MODULE = 3, 7, 12, 14


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter", "jax", "wheel")
def test_panel_frames_expressions_and_continue(kernel):
    mid = kernel.execute(FLOW_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    src = wait_source(kernel, r"in inner$")
    assert src["current"] == LINE_BREAKPOINT
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", wait_banner(kernel, "Stopped at"))
    assert [f["function"] for f in state(kernel, cid)["frames"][:3]] == ["inner", "middle", "outer"]
    assert kernel.result(mid).reply is None, "the cell must still be paused"

    press(kernel, "frame 2")  # a click in the frame list
    assert wait_source(kernel, r"in outer$")["current"] == LINE_OUTER
    press(kernel, "up")
    assert wait_source(kernel, MODULE_HEADING)["current"] == LINE_MODULE
    press(kernel, "down")
    assert wait_source(kernel, r"in outer$")["current"] == LINE_OUTER
    press(kernel, "frame 0")
    wait_source(kernel, r"in inner$")

    submit(kernel, "p y")
    wait_log(kernel, r"\(jaxdbg\) p y\nArray\(\[1\., 1\., 1\.\], dtype=float32\)")
    submit(kernel, "z", pretty=True)
    log = wait_log(kernel, r"\(jaxdbg\) pp z\n")
    # pp of a pytree (the toggle, as the command): a tree of its leaves' summaries
    assert "└── ['twice']  Array  float32[3] · min=2 max=2 mean=2 · [2., 2., 2.]" in log, log
    assert "├── ['tag']  str  '<b>t</b>'" in log
    submit(kernel, "q2 = y.sum()")
    submit(kernel, "q2 * 2")
    wait_log(kernel, r"\(jaxdbg\) q2 \* 2\nArray\(6\., dtype=float32\)")

    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "result [30.0, 30.0, 30.0]" in done.stdout, done
    # the cell's output now holds the static summary: survives saving without widget state
    static, text = static_outputs(done), static_texts(done)
    assert len(static) == 1, done.messages
    assert "jaxdbg-static" in static[0] and "in inner" in static[0]
    assert "(jaxdbg) p y" in static[0] and "Continued." in static[0]
    assert "&lt;b&gt;t&lt;/b&gt;" in static[0] and "<b>t</b>" not in static[0]
    assert text[0].startswith("Stopped at") and "(jaxdbg) pp z" in text[0] and text[0].endswith("Continued.")
    # the finished stop keeps no widget comm open (issue 6 item 13)
    assert not comms_opened_by(done) & set(kernel.widgets()), kernel.widgets().keys()
    assert kernel.run("print('next cell')").stdout == "next cell\n"


@pytest.mark.timeout(300)
def test_commands_sent_back_to_back_run_in_order(kernel):
    """Lines typed while one runs queue: none joined, lost or wiped."""
    mid = kernel.execute("""
@jax.jit
def fo(x):
    jaxdbg.breakpoint()
    return x + 1
print("result", fo(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    lines = ["import time; time.sleep(0.5); a1 = 11", "p a1 + 1", "a2 = a1 * 2", "p a2", "p x.shape"]
    for line in lines:  # all sent at once, while the first still sleeps
        submit(kernel, line, cid=cid)
    log = wait_log(kernel, r"\(jaxdbg\) p x\.shape\n\(2,\)", cid=cid)
    assert [e["command"] for e in state(kernel, cid)["log"]] == lines
    assert "(jaxdbg) p a1 + 1\n12\n" in log and "(jaxdbg) p a2\n22\n" in log
    assert state(kernel, cid)["done"].startswith("test:")
    press(kernel, "continue", cid=cid)
    assert kernel.wait_reply(mid, timeout=60).status == "ok"


@pytest.mark.timeout(400)
def test_command_sent_the_moment_the_panel_opens_is_not_lost(kernel):
    """Issue 6 item 9: a command that arrives while the panel is being set up is
    applied to that stop, never lost and never applied to a later one."""
    for attempt in range(3):
        sent: list[str] = []

        def answer(comm_id, st, sent=sent, attempt=attempt):
            if st.get("_anywidget_id") == PANEL_WIDGET and not sent:
                sent.append(comm_id)
                kernel.send_custom(
                    comm_id, {"type": "run", "id": "early:1", "typed": True, "line": f"p 'early {attempt}'"}
                )
                kernel.send_custom(comm_id, {"type": "run", "id": "early:2", "line": "frame 1"})

        kernel.on_comm_open = answer
        try:
            mid = kernel.execute(f"""
@jax.jit
def fe(x):
    jaxdbg.breakpoint()
    return x + {attempt}
print("result", fe(jnp.ones(2)).tolist())
""")
            wait_panel(kernel, mid)
        finally:
            kernel.on_comm_open = None
        cid = sent[0]
        wait_log(kernel, rf"\(jaxdbg\) p 'early {attempt}'\n'early {attempt}'", cid=cid)
        wait_source(kernel, MODULE_HEADING, cid=cid)
        press(kernel, "continue", cid=cid)
        done = kernel.wait_reply(mid, timeout=60)
        assert done.status == "ok" and f"result [{1 + attempt}.0, {1 + attempt}.0]" in done.stdout, done


@pytest.mark.timeout(300)
def test_huge_typed_line_is_not_echoed_into_later_messages(kernel):
    """Issue 6 item 14: a 10 MB line is sent once; echoes, history and the summary are cut."""
    mid = kernel.execute("""
@jax.jit
def fh(x):
    jaxdbg.breakpoint()
    return x + 1
fh(jnp.ones(2))
""")
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    submit(kernel, "'" + "a" * 10_000_000 + "'", cid=cid)
    submit(kernel, "p 'after'", cid=cid)
    wait_log(kernel, r"\(jaxdbg\) p 'after'\n'after'", cid=cid)
    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    sizes = [
        len(str(m["content"]))
        for m in kernel.messages()
        if m["msg_type"] in ("comm_msg", "update_display_data", "display_data")
        and m["parent_header"].get("msg_id") != mid
        or m["msg_type"] == "update_display_data"
    ]
    assert max(sizes) < 300_000, max(sizes)
    assert len(static_texts(done)[0]) < 10_000
    # the next stop's panel opens with a history that left the paste out
    mid2 = kernel.execute("fh(jnp.ones(2))")
    wait_panel(kernel, mid2)
    cid2 = live_panel(kernel)
    assert state(kernel, cid2)["history"][-1] == "p 'after'"
    assert max(len(h) for h in state(kernel, cid2)["history"]) < 10_000
    press(kernel, "continue", cid=cid2)
    assert kernel.wait_reply(mid2, timeout=60).status == "ok"


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_quit_ends_the_cell_with_one_line(kernel):
    mid = kernel.execute("""
@jax.jit
def fq(x):
    jaxdbg.breakpoint()
    return x + 1
fq(jnp.ones(2))
""")
    wait_panel(kernel, mid)
    press(kernel, "quit")
    done = kernel.wait_reply(mid, timeout=60)
    text = done.stderr + " ".join(e.get("ename", "") + e.get("evalue", "") for e in done.errors)
    assert "DebuggerQuit" in text, done
    assert "CpuCallback" not in text and "Traceback" not in text, done
    assert any("Quit: the computation was stopped." in s for s in static_outputs(done))
    assert not comms_opened_by(done) & set(kernel.widgets())
    after = kernel.run("print('alive', 1 + 1)")
    assert after.status == "ok" and after.stdout == "alive 2\n", after


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_closed_panel_falls_back_to_the_prompt(kernel):
    mid = kernel.execute("""
@jax.jit
def fc(x):
    jaxdbg.breakpoint()
    return x * 3
print("result", fc(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, mid)
    panel = live_panel(kernel)
    kernel.answer_input("p x")
    kernel.answer_input("c")
    kernel.close_comm(panel)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "the debugger panel was closed; type debugger commands at the prompt" in done.stdout, done
    assert "Array([1., 1.], dtype=float32)" in done.stdout and "result [3.0, 3.0]" in done.stdout


@pytest.mark.timeout(400)
@pytest.mark.multidevice
@pytest.mark.matrix("jupyter", "jax")
def test_pmap_one_panel_at_a_time_all_served(kernel):
    mid = kernel.execute("""
def body(x):
    jaxdbg.breakpoint()
    return x * 10
print("result", jax.pmap(body)(jnp.arange(8.0)).tolist())
""")
    seen_waiting = False
    devices = set()
    for served in range(8):
        wait_panel(kernel, mid, served + 1)
        cid = live_panel(kernel)
        banner = wait_banner(kernel, r"device \d", cid=cid)
        device = int(re.search(r"device (\d)", banner).group(1))
        assert device not in devices
        devices.add(device)
        if served == 0:
            # the other devices' stops queue behind this one and the header says so
            wait_banner(kernel, r"\d more breakpoints? waiting", cid=cid, timeout=30)
            seen_waiting = True
        submit(kernel, "p x", cid=cid)
        wait_log(kernel, rf"\(jaxdbg\) p x\nArray\({device}\., dtype=float32\)", cid=cid)
        press(kernel, "continue", cid=cid)
        kernel.wait_for(lambda: closed(kernel, cid), 60, "the served panel to close")
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "result [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]" in done.stdout, done
    assert seen_waiting and devices == set(range(8))
    assert len(static_outputs(done)) == 8  # every panel's static summary is in this cell
    assert not panels(kernel), [(st["status"], st["log"]) for st in panels(kernel).values()]
    assert kernel.run("print('after pmap')").stdout == "after pmap\n"


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_interrupt_while_the_panel_waits(kernel):
    mid = kernel.execute("""
@jax.jit
def fi(x):
    jaxdbg.breakpoint()
    return x - 1
fi(jnp.ones(2))
""")
    wait_panel(kernel, mid)
    live_panel(kernel)  # its state has arrived: the stop waits for a command
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "error", done
    text = done.stderr + " ".join(e.get("ename", "") + " " + e.get("evalue", "") for e in done.errors)
    assert "KeyboardInterrupt" in text, done
    assert any("Interrupted." in s for s in static_outputs(done))
    assert not any("Ended." in s for s in static_outputs(done)), static_outputs(done)  # said once
    after = kernel.run("print('still here')")
    assert after.status == "ok" and after.stdout == "still here\n", after


BIG_LOCAL_CELL = """
import jaxdbg.engine.values.summaries as _summaries
STATS_TAKEN = []
if not hasattr(_summaries, "_untouched_array_stats"):
    _summaries._untouched_array_stats = _summaries.array_stats
_summaries.array_stats = lambda v: STATS_TAKEN.append(tuple(v.shape)) or _summaries._untouched_array_stats(v)

@jax.jit
def with_big(s):
    big = jnp.arange(3_000_000, dtype=jnp.float32) * s
    small = jnp.arange(4.0) * s
    jaxdbg.breakpoint()
    return big[:2] + small[:2]

try:
    print("result", with_big(jnp.float32(2.0)).tolist())
finally:
    _summaries.array_stats = _summaries._untouched_array_stats
"""


@pytest.mark.timeout(300)
def test_a_big_locals_statistics_wait_until_its_row_is_shown(kernel):
    """The panel is sent before a big array's statistics are taken; its row says they
    are pending, and the browser's request for them (when it shows the row) gets them."""
    mid = kernel.execute(BIG_LOCAL_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    page = state(kernel, cid)["locals_page"]
    rows = {r["name"]: r for r in page["rows"]}
    assert rows["big"]["array"] == "float32[3000000]" and rows["big"].get("pending") is True, rows
    assert not rows["small"]["pending"] and rows["small"]["summary"].startswith("min=0 max=6 ")
    submit(kernel, "STATS_TAKEN")  # the shapes whose statistics the panel took so far
    taken = wait_log(kernel, r"\(jaxdbg\) STATS_TAKEN\n\[.*\]")
    assert "(4,)" in taken and "3000000" not in taken, taken

    kernel.send_custom(cid, {"type": "stats", "frame": page["frame"], "path": ["big"]})
    answer = kernel.wait_for(
        lambda: next(
            (m for m in kernel.custom_messages(cid) if isinstance(m, dict) and m.get("type") == "stats"), None
        ),
        60,
        "the big row's statistics",
    )
    assert answer["path"] == ["big"] and not answer["row"]["pending"]
    assert answer["row"]["summary"] == "min=0 max=6e+06 mean=3e+06", answer
    press(kernel, "continue")
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "result [0.0, 4.0]" in done.stdout, done


def statuses(kernel) -> list[tuple[str, str]]:
    """Every iopub status so far: (execution_state, parent msg_id), in arrival order."""
    return [
        (m["content"]["execution_state"], m["parent_header"].get("msg_id", ""))
        for m in kernel.messages()
        if m["msg_type"] == "status"
    ]


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_a_paused_cell_shows_busy_after_each_panel_message(kernel):
    """The kernel handles the panel's messages while the cell is paused, each with its
    busy/idle pair; a frontend's status bar follows the last status, so after each
    idle the kernel says busy again for the paused cell."""
    mid = kernel.execute("""
@jax.jit
def fb(x):
    jaxdbg.breakpoint()
    return x + 1
print("result", fb(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    for n, line in enumerate(["p 40 + 2", "p x.shape", "w"]):
        sent = kernel.send_custom(cid, {"type": "run", "id": f"busy:{n}", "line": line, "typed": True})
        kernel.wait_for(lambda: ("idle", sent) in statuses(kernel), 60, f"idle after {line!r}")
        # the last word is busy, for the paused cell
        last = kernel.wait_for(
            lambda: (s := statuses(kernel)) and s[-1][0] == "busy" and s[-1],
            10,
            f"busy again after {line!r}: {statuses(kernel)[-4:]}",
        )
        assert last[1] == mid, (last, mid)
    wait_log(kernel, r"\(jaxdbg\) p 40 \+ 2\n42\n", cid=cid)
    press(kernel, "continue", cid=cid)
    assert kernel.wait_reply(mid, timeout=60).status == "ok"
    kernel.wait_for(lambda: statuses(kernel)[-1] == ("idle", mid), 30, "the cell's own idle last")


@pytest.mark.timeout(300)
@pytest.mark.matrix("jupyter")
def test_a_cell_run_while_paused_shows_the_stop(kernel):
    """A page reloaded without saving shows no stop; a cell run from it waits behind
    the paused one and shows, in its own output, why, and the live panel itself."""
    first = kernel.execute("""
@jax.jit
def fq(x):
    jaxdbg.breakpoint()
    return x + 1
print("result", fq(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, first)
    cid = live_panel(kernel)
    later = kernel.execute("print('after the stop')")

    def shown():
        msgs = kernel.result(later).messages
        text = "".join(m["content"]["data"].get("text/plain", "") for m in msgs if m["msg_type"] == "display_data")
        views = [
            m["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
            for m in msgs
            if m["msg_type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        ]
        return "the kernel is paused at Stopped at In[" in text and views and (text, views)

    text, views = kernel.wait_for(shown, 60, "the stop shown in the queued cell")
    assert views == [cid] and "interrupt the kernel" in text, (text, views)
    assert kernel.result(later).reply is None  # it waits

    # answered from there: the same panel; then the queued cell runs
    submit(kernel, "p 40 + 2", cid=cid)
    wait_log(kernel, r"\(jaxdbg\) p 40 \+ 2\n42", cid=cid)
    press(kernel, "continue", cid=cid)
    assert kernel.wait_reply(first, timeout=60).status == "ok"
    done = kernel.wait_reply(later, timeout=60)
    assert done.status == "ok" and "after the stop" in done.stdout
