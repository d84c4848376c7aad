"""The print log, a checkify error and a NaN stop in JupyterLab 4 and Notebook 7.

The print cell prints from a scan and under vmap, then waits for a flag file the test
writes, so the live log can be looked at (and filtered, and saved) while the cell runs;
once the flag exists the cell ends and the log becomes static output. Screenshots go
to test-artifacts/.
"""

from __future__ import annotations

import pytest

from support.lab_helpers import (
    cell,
    cell_output_text,
    open_notebook,
    run_cell,
    save_screenshot,
    wait_for_output_text,
)

pytestmark = pytest.mark.browser

SETUP_CELL = """\
%load_ext jaxdbg
import os, time
import jax, jax.numpy as jnp
import jaxdbg, jaxdbg.capture.postmortem
"""

PRINT_CELL = """\
def body(carry, x):
    jax.debug.print("step {} loss {:.4f}", x, carry)
    return carry * 0.9 + x, None

jax.jit(lambda xs: jax.lax.scan(body, 1.0, xs))(jnp.arange(300.0))
jax.vmap(lambda row: jaxdbg.print("row mean {}", row.mean()))(jnp.arange(6.0).reshape(3, 2))
while not os.path.exists("print-cell-may-end"):
    time.sleep(0.05)
"""

CHECKIFY_CELL = """\
from jax.experimental import checkify

def normalise(x):
    checkify.check(jnp.all(x >= 0), "normalise needs non-negative values, got {}", x)
    return x / x.sum()

xs = jnp.array([[1.0, 2.0], [-1.0, 3.0], [0.0, 0.0]])
err, _ = jax.vmap(jaxdbg.checkify(normalise, errors="all"))(xs)
err
"""

NAN_CELL = """\
def inner(y):
    z = y - 1.0
    w = jnp.log(z)
    return w * 2

@jax.jit
def outer(x):
    return inner(x * 2).sum()

jaxdbg.capture.postmortem.set_nan_debugging(True)
outer(jnp.array([1.0, 0.25]))
"""

TIMEOUT_MS = 120_000


def test_print_log_checkify_view_and_post_mortem(page, server):
    open_notebook(page, server, "prints.ipynb", [SETUP_CELL, PRINT_CELL, CHECKIFY_CELL, NAN_CELL])
    run_cell(page, 0)

    # -- live print log while the cell runs -------------------------------------------------
    run_cell(page, 1, wait=False)
    log = cell(page, 1).locator(".jaxdbg-print-log")
    log.get_by_text("303 rows").wait_for(timeout=TIMEOUT_MS)
    text = log.inner_text()
    assert "step 0.0 loss 1.0000" in text and "row mean 4.5" in text and "batch 3/3" in text
    assert "263 more rows" in text
    # each row says where it was printed: the scan body's line, or the vmapped lambda's
    locations = log.locator(".jaxdbg-pl-loc").all_inner_texts()
    assert len(locations) == 40 and locations[0] == "In[2]:2" and locations[-1] == "In[2]:6", locations
    assert set(locations) == {"In[2]:2", "In[2]:6"}, locations
    save_screenshot(page, f"print-log-live-{server.app}")

    log.locator("input[type=search]").fill("step 29")
    log.get_by_text("11 matches").wait_for(timeout=30_000)  # 29 and 290..299
    assert "step 290.0" in log.inner_text()
    save_screenshot(page, f"print-log-filtered-{server.app}")

    with page.expect_download() as download_info:
        log.get_by_role("button", name="Save").click()
    saved = download_info.value.path().read_text()
    assert saved.count("\n") == 303 and "\tbatch 2/3\trow mean 2.5" in saved

    (server.root_dir / "print-cell-may-end").write_text("")
    static = cell(page, 1).locator(".jaxdbg-static")
    static.wait_for(timeout=TIMEOUT_MS)
    assert "In[2] print log · 303 rows" in static.inner_text()
    assert "Save log" in static.inner_text()
    # the live filter's static twin: one fold per source line, each with its rows only
    by_line = static.locator("details.jaxdbg-pl-group > summary")
    assert by_line.all_inner_texts() == ["In[2]:2 · 300 rows", "In[2]:6 · 3 rows"]
    vmapped = static.locator("details.jaxdbg-pl-group", has_text="In[2]:6 · 3 rows")
    assert not vmapped.get_by_text("row mean 4.5").is_visible()
    vmapped.locator("summary").click()
    assert vmapped.get_by_text("row mean 4.5").is_visible()
    assert "step 0.0" not in vmapped.inner_text()
    save_screenshot(page, f"print-log-static-{server.app}")

    # -- a mapped checkify error --------------------------------------------------------------
    run_cell(page, 2)
    out = wait_for_output_text(page, 2, "checkify errors at 2 of 3 mapped indices", 60)
    assert "normalise needs non-negative values" in out and "division by zero" in out
    # each error says where it was raised: the check's line and the division's line
    assert "In[3]:4 in normalise" in out and "In[3]:5 in normalise" in out, out
    cell(page, 2).locator(".jaxdbg-checkify").scroll_into_view_if_needed()
    save_screenshot(page, f"checkify-view-{server.app}")

    # -- a NaN: the panel at its line, during the call, on JAX's eager re-run -------------------
    run_cell(page, 3, wait=False)
    continue_button = cell(page, 3).get_by_role("button", name="Continue", exact=True)
    continue_button.wait_for(timeout=TIMEOUT_MS)
    panel_text = cell_output_text(page, 3)
    assert "NaN made by log" in panel_text and "FloatingPointError" not in panel_text  # no traceback first
    assert "inner" in panel_text and "w = jnp.log(z)" in panel_text
    continue_button.scroll_into_view_if_needed()
    save_screenshot(page, f"post-mortem-panel-{server.app}")
    continue_button.click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[3].model.executionState !== 'running'",
        timeout=TIMEOUT_MS,
    )
    wait_for_output_text(page, 3, "FloatingPointError", 60)  # JAX's error, after Continue
