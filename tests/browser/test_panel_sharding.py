"""``sharding NAME`` typed into the panel at a stop inside a sharded jit, in JupyterLab 4 and
Notebook 7: the log entry is the HTML layout XLA compiled (a grid of device cells),
not box-drawing text, and the locals table names the same layout ``locals`` does.

Screenshots go to test-artifacts/panel_sharding_<lab|notebook>.png.
"""

from __future__ import annotations

import pytest

from support.lab_helpers import live_panel, open_notebook, run_cell, save_screenshot, type_command, wait_for_output_text

pytestmark = [pytest.mark.browser, pytest.mark.multidevice]

SETUP_CELL = (
    "import os\n"
    "os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
    "os.environ.setdefault('JAX_PLATFORMS', 'cpu')\n"
    "%load_ext jaxdbg\n"
    "import jax, jax.numpy as jnp, jaxdbg\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
)

STOP_CELL = """\
axis_type = getattr(jax.sharding, "AxisType", None)
mesh = jax.make_mesh((2, 4), ("data", "model"),
                     **({} if axis_type is None else {"axis_types": (axis_type.Auto,) * 2}))

@jax.jit
def step(x):
    hidden = jnp.tanh(x * 2)
    jaxdbg.breakpoint()
    return hidden.sum()

print("result", float(step(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model"))))))
"""


def test_sharding_in_the_console_draws_the_compiled_layout(page, server):
    open_notebook(page, server, "panel_sharding.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    row = panel.locator(".jaxdbg-local", has_text="hidden")
    row.wait_for(timeout=60_000)
    assert "auto on mesh data=2, model=4" in row.inner_text()  # not cpu:0
    type_command(panel, "sharding hidden")
    layout = panel.locator(".jaxdbg-log .jaxdbg-out-html .jaxdbg-sharding")
    layout.wait_for(timeout=60_000)
    assert "as compiled" in layout.locator(".jxs-head").inner_text()
    cells = layout.locator(".jxs-cell")
    assert cells.count() == 8
    assert sorted(c.inner_text().strip() for c in cells.all()) == [str(d) for d in range(8)]
    widths = {round(c.bounding_box()["width"]) for c in cells.all()}
    assert len(widths) == 1, widths  # a grid whose cells line up
    assert "┌" not in panel.locator(".jaxdbg-log").inner_text()  # no box-drawing text
    save_screenshot(page, f"panel_sharding_{server.app}")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 61.", timeout_s=60)
