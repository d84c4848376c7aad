"""The debugger panel in a real ipykernel, driven with the comm messages a browser sends.

One kernel per ipykernel line (7.4 from the running venv; 6.29 when
JAXDBG_IPYKERNEL6_PYTHON is set), with 8 host CPU devices. A cell runs a jitted
function that hits ``jaxdbg.breakpoint()``; the test clicks frames and buttons, types
into the expression box (value ``update`` then the ``{"event": "submit"}`` custom
message that ipywidgets 8 sends on Enter), and checks the widget state the kernel
sent back and the cell's own result.
"""

from __future__ import annotations

import re
import textwrap
import time

import pytest

from kernel_harness import kernel_pythons, kernel_set_up_with

pytestmark = [pytest.mark.kernel]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    print("backends", jaxdbg.available_debuggers(), "devices", jax.device_count())
""")


@pytest.fixture(scope="module", params=kernel_pythons())
def kernel(request):
    """One kernel per ipykernel line for the module (kernels are slow to start)."""
    with kernel_set_up_with(request.param, SETUP, expect="backends ['widgets', 'cli'] devices 8") as harness:
        yield harness


# --------------------------------------------------------------------------- helpers


def live_html(kernel, marker: str) -> list[str]:
    """Values of open HTML widgets of a live panel whose markup contains ``marker``
    (finished panels keep one static HTML widget; those are left out)."""
    return [st.get("value", "") for st in kernel.widgets().values()
            if st.get("_model_name") == "HTMLModel" and marker in st.get("value", "")
            and "jaxdbg-static" not in st.get("value", "")]


def wait_html(kernel, marker: str, needle: str, timeout: float = 30) -> str:
    """The live HTML widget with ``marker`` once it contains ``needle`` (a regex)."""
    def look():
        for value in live_html(kernel, marker):
            if re.search(needle, value):
                return value
        return None
    return kernel.wait_for(look, timeout, f"{needle!r} in a {marker} widget")


def wait_panel(kernel, msg_id: str, count: int = 1) -> None:
    """Wait until the cell shows its ``count``-th panel, as a browser would before a click.

    The widgets' comm_open comes first; until the panel's display arrives its comms may
    not be routed to where the paused cell can answer them yet.
    """
    def shown():
        return sum(1 for m in kernel.result(msg_id).messages if m["msg_type"] == "display_data"
                   and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]) >= count
    kernel.wait_for(shown, 120, f"panel {count} displayed")


def frame_button(kernel, index: int) -> str:
    def look():
        for cid, st in kernel.widgets().items():
            if st.get("_model_name") == "ButtonModel" and \
                    str(st.get("description", "")).startswith(f"{index}  "):
                return cid
        return None
    return kernel.wait_for(look, 30, f"frame button {index}")


def submit(kernel, text: str) -> None:
    """Type into the expression box and press Enter, as ipywidgets 8's TextView does."""
    box = kernel.find_widget("TextModel")
    kernel.set_value(box, value=text)
    kernel.comm_msg(box, {"method": "custom", "content": {"event": "submit"}})


def current_line(source_html: str) -> int:
    found = re.findall(r'class="jaxdbg-line jaxdbg-current" data-lineno="(\d+)"', source_html)
    assert len(found) == 1, source_html
    return int(found[0])


def static_outputs(result) -> list[str]:
    return [m["content"]["data"].get("text/html", "") for m in result.messages
            if m["msg_type"] == "update_display_data"]


def closed(kernel, comm_id: str) -> bool:
    return comm_id not in kernel.widgets()


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
def test_panel_frames_expressions_and_continue(kernel):
    mid = kernel.execute(FLOW_CELL)
    wait_panel(kernel, mid)
    source = wait_html(kernel, "jaxdbg-source-heading", "jaxdbg-current")
    assert current_line(source) == LINE_BREAKPOINT
    assert re.search(r"Stopped at In\[\d+\]:3 in inner",
                     wait_html(kernel, "jaxdbg-banner", "Stopped at"))
    assert kernel.result(mid).reply is None, "the cell must still be paused"

    kernel.click(frame_button(kernel, 2))  # a click in the frame list
    source = wait_html(kernel, "jaxdbg-source-heading", r"in outer")
    assert current_line(source) == LINE_OUTER
    kernel.click(kernel.find_widget("ButtonModel", description="Up"))
    source = wait_html(kernel, "jaxdbg-source-heading", r"in &lt;module&gt;")
    assert current_line(source) == LINE_MODULE
    kernel.click(kernel.find_widget("ButtonModel", description="Down"))
    source = wait_html(kernel, "jaxdbg-source-heading", r"in outer")
    assert current_line(source) == LINE_OUTER
    kernel.click(frame_button(kernel, 0))
    wait_html(kernel, "jaxdbg-source-heading", r"in inner")

    submit(kernel, "p y")
    wait_html(kernel, "jaxdbg-entry", r"\(jaxdbg\) p y</div><pre[^>]*>Array\(\[1\., 1\., 1\.\], dtype=float32\)")
    submit(kernel, "pp z")
    log = wait_html(kernel, "jaxdbg-entry", r"\(jaxdbg\) pp z")
    assert "&#x27;twice&#x27;: Array([2., 2., 2.], dtype=float32)" in log
    assert "&lt;b&gt;t&lt;/b&gt;" in log and "<b>t</b>" not in log
    submit(kernel, "q2 = y.sum()")
    submit(kernel, "q2 * 2")
    wait_html(kernel, "jaxdbg-entry", r"\(jaxdbg\) q2 \* 2</div><pre[^>]*>Array\(6\., dtype=float32\)")

    kernel.click(kernel.find_widget("ButtonModel", description="Continue"))
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "result [30.0, 30.0, 30.0]" in done.stdout, done
    # the cell's output now holds plain HTML: survives saving without widget state
    static = static_outputs(done)
    assert len(static) == 1, done.messages
    assert "jaxdbg-static" in static[0] and "in inner" in static[0]
    assert "(jaxdbg) p y" in static[0] and "Continued." in static[0]
    assert kernel.run("print('next cell')").stdout == "next cell\n"


@pytest.mark.timeout(300)
def test_quit_ends_the_cell_with_one_line(kernel):
    mid = kernel.execute("""
@jax.jit
def fq(x):
    jaxdbg.breakpoint()
    return x + 1
fq(jnp.ones(2))
""")
    wait_panel(kernel, mid)
    kernel.click(kernel.find_widget("ButtonModel", description="Quit", timeout=60))
    done = kernel.wait_reply(mid, timeout=60)
    text = done.stderr + " ".join(e.get("ename", "") + e.get("evalue", "") for e in done.errors)
    assert "DebuggerQuit" in text, done
    assert "CpuCallback" not in text and "Traceback" not in text, done
    assert any("Quit: the computation was stopped." in s for s in static_outputs(done))
    after = kernel.run("print('alive', 1 + 1)")
    assert after.status == "ok" and after.stdout == "alive 2\n", after


@pytest.mark.timeout(300)
def test_closed_panel_falls_back_to_the_prompt(kernel):
    mid = kernel.execute("""
@jax.jit
def fc(x):
    jaxdbg.breakpoint()
    return x * 3
print("result", fc(jnp.ones(2)).tolist())
""")
    wait_panel(kernel, mid)
    kernel.find_widget("ButtonModel", description="Continue", timeout=60)
    # earlier stops' panels stay open, collapsed to one static child; take the live one
    panel = [cid for cid, st in kernel.widgets().items()
             if st.get("_model_name") == "VBoxModel" and "jaxdbg-panel" in st.get("_dom_classes", [])
             and len(st.get("children", [])) > 1]
    assert len(panel) == 1
    kernel.answer_input("p x")
    kernel.answer_input("c")
    kernel.close_comm(panel[0])
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok", done
    assert "the debugger panel was closed; type debugger commands at the prompt" in done.stdout, done
    assert "Array([1., 1.], dtype=float32)" in done.stdout and "result [3.0, 3.0]" in done.stdout


@pytest.mark.timeout(400)
@pytest.mark.multidevice
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
        button = kernel.find_widget("ButtonModel", description="Continue", timeout=120)
        banner = wait_html(kernel, "jaxdbg-banner", r"device \d")
        device = int(re.search(r"device (\d)", banner).group(1))
        assert device not in devices
        devices.add(device)
        if served == 0:
            # the other devices' stops queue behind this one and the header says so
            banner = wait_html(kernel, "jaxdbg-banner", r"\d more breakpoints? waiting", timeout=30)
            seen_waiting = True
        live_continue = [cid for cid, st in kernel.widgets().items()
                         if st.get("_model_name") == "ButtonModel" and st.get("description") == "Continue"]
        assert live_continue == [button], "one live panel at a time"
        submit(kernel, "p x")
        wait_html(kernel, "jaxdbg-entry", rf"\(jaxdbg\) p x</div><pre[^>]*>Array\({device}\., dtype=float32\)")
        kernel.click(button)
        kernel.wait_for(lambda: closed(kernel, button), 60, "the served panel to collapse")
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "ok", done
    assert "result [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]" in done.stdout, done
    assert seen_waiting and devices == set(range(8))
    assert len(static_outputs(done)) == 8  # every panel's static summary is in this cell
    assert kernel.run("print('after pmap')").stdout == "after pmap\n"


@pytest.mark.timeout(300)
def test_interrupt_while_the_panel_waits(kernel):
    mid = kernel.execute("""
@jax.jit
def fi(x):
    jaxdbg.breakpoint()
    return x - 1
fi(jnp.ones(2))
""")
    wait_panel(kernel, mid)
    time.sleep(0.3)
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "error", done
    text = done.stderr + " ".join(e.get("ename", "") + " " + e.get("evalue", "") for e in done.errors)
    assert "KeyboardInterrupt" in text, done
    assert any("Interrupted." in s for s in static_outputs(done))
    after = kernel.run("print('still here')")
    assert after.status == "ok" and after.stdout == "still here\n", after
