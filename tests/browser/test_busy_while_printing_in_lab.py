"""A cell that runs while writing to the live print log shows the kernel busy, in
JupyterLab 4 and Notebook 7.

JupyterLab's status bar shows the last status the kernel published on iopub, whatever
request it was for; the toolbar circle follows the running cell's own request. When
the print log's widget opens, JupyterLab asks the kernel for a subshell for widget comms
(``create_subshell_request`` on the control channel), which the kernel answers while
the cell runs, with its own busy / idle. The page records every status message it
receives and every request it sends, and the test samples what the status bar and the
kernel connection say while the cell runs.
"""

from __future__ import annotations

import pytest

from support.lab_helpers import cell, open_notebook, run_cell, save_screenshot

pytestmark = pytest.mark.browser

SETUP_CELL = """\
%load_ext jaxdbg
import os, time
import jax, jax.numpy as jnp
"""

# A scan that prints at every step and takes a little time per step, then waits for
# the test's flag file so the cell runs for as long as the test samples.
PRINTING_CELL = """\
def slow(x):
    if not os.path.exists("printing-cell-may-end"):
        time.sleep(0.005)

def body(carry, x):
    jax.debug.print("step {} carry {:.3f}", x, carry)
    jax.debug.callback(slow, x)
    return carry * 0.99 + x, None

jax.jit(lambda xs: jax.lax.scan(body, 1.0, xs))(jnp.arange(2000.0))
while not os.path.exists("printing-cell-may-end"):
    time.sleep(0.05)
"""

# Every status message the page receives (state, parent msg_type, parent msg_id) and
# every request it sends (msg_type, channel, msg_id): what the kernel answered meanwhile.
RECORD_MESSAGES_JS = """() => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  window.__statuses = [];
  k.iopubMessage.connect((_, msg) => {
    if (msg.header.msg_type === 'status') {
      window.__statuses.push([msg.content.execution_state, msg.parent_header.msg_type || null,
                              msg.parent_header.msg_id || null]);
    }
  });
  window.__sent = [];
  k.anyMessage.connect((_, args) => {
    if (args.direction === 'send') {
      const m = args.msg;
      window.__sent.push([m.header.msg_type, m.channel, m.header.msg_id]);
    }
  });
  return true;
}"""

KERNEL_STATUS_JS = (
    "() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
    " return k ? k.status : null; }"
)

SAMPLE_JS = """() => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const bar = document.querySelector('.jp-StatusBar-Widget');
  return {kernel: k ? k.status : null, bar: bar ? bar.innerText : null};
}"""

SAMPLES = 12


@pytest.mark.notebook7
def test_a_cell_writing_to_the_live_print_log_shows_busy(page, server):
    """The kernel connection (and Lab's status bar) say Busy all the while the cell runs
    and prints; the status messages the page received end with the cell's busy."""
    open_notebook(page, server, f"busy-printing-{server.app}.ipynb", [SETUP_CELL, PRINTING_CELL])
    flag = server.root_dir / "printing-cell-may-end"
    flag.unlink(missing_ok=True)
    run_cell(page, 0)
    page.evaluate(RECORD_MESSAGES_JS)
    run_cell(page, 1, wait=False)
    try:
        cell(page, 1).locator(".jaxdbg-print-log").get_by_text("step 0.0").first.wait_for(timeout=120_000)
        samples = []
        for _ in range(SAMPLES):
            page.wait_for_timeout(500)
            samples.append(page.evaluate(SAMPLE_JS))
        statuses = page.evaluate("() => window.__statuses")
        sent = page.evaluate("() => window.__sent")
        save_screenshot(page, f"busy-while-printing-{server.app}")
    finally:
        flag.write_text("")
    why = f"samples {samples}\nstatuses (state, parent type, parent id) {statuses}\nsent {sent}"
    cell_request = sent[0][2]
    assert sent[0][0] == "execute_request", why
    assert all(s["kernel"] == "busy" for s in samples), why
    if server.app == "lab":
        assert all("| Busy" in s["bar"] and "Idle" not in s["bar"] for s in samples), why
    assert statuses[-1][0] == "busy" and statuses[-1][2] == cell_request, why
    page.wait_for_function(f"() => ({KERNEL_STATUS_JS})() === 'idle'", timeout=120_000)
    if server.app == "lab":
        # The status bar is a React view redrawn on the next animation frame after the
        # connection's status changes, so it says Idle a moment after the connection.
        page.wait_for_function(f"() => ({SAMPLE_JS})().bar.includes('| Idle')", timeout=30_000)
