"""What `pip install jaxdbg-*.whl` gives a user, in a real JupyterLab page.

The notebook runs on the matrix's installed-wheel kernel ($JAXDBG_WHEEL_PYTHON: the built
wheel installed into its own venv, started outside the checkout with nothing of it on the
path). ``%load_ext jaxdbg`` must give the panel there: a stop inside a jitted function, a
frame click, ``p``, Continue. A file left out of the wheel (the panel's browser code once
was) makes this test fail, where every test on the editable checkout passes.
"""

from __future__ import annotations

import os
import re

import pytest

from support.lab_helpers import (
    INSTALLED_WHEEL_KERNEL,
    cell,
    open_notebook,
    run_cell,
    save_screenshot,
    type_command,
    wait_for_output_text,
    wait_heading,
    wait_log,
)

pytestmark = pytest.mark.browser

SETUP_CELL = """\
%load_ext jaxdbg
import sys, jax, jax.numpy as jnp
import jaxdbg, jaxdbg_widgets
print("from", jaxdbg.__file__, "in", sys.prefix)
"""

STOP_CELL = """\
def inner(x):
    y = x * 2
    jaxdbg.breakpoint()
    return y.sum()

@jax.jit
def outer(x):
    return inner(x + 1)

print("result", outer(jnp.arange(3.0)))
"""

PANEL_TIMEOUT_MS = 120_000


@pytest.fixture
def wheel_python() -> str:
    python = os.environ.get("JAXDBG_WHEEL_PYTHON")
    if not python:
        pytest.skip("$JAXDBG_WHEEL_PYTHON is not set (python3 dev.py test builds the wheel and sets it)")
    return python


def test_the_installed_wheel_gives_the_panel_in_lab(lab_page, lab_server, wheel_python):
    page = lab_page
    page.set_viewport_size({"width": 1400, "height": 1300})
    open_notebook(page, lab_server, "installed-wheel.ipynb", [SETUP_CELL, STOP_CELL], kernel=INSTALLED_WHEEL_KERNEL)
    run_cell(page, 0)
    where = wait_for_output_text(page, 0, "from ")
    prefix = os.path.dirname(os.path.dirname(wheel_python))
    assert re.search(rf"from {re.escape(prefix)}/lib/python[\d.]+/site-packages/jaxdbg/__init__\.py", where), where

    run_cell(page, 1, wait=False)
    live = cell(page, 1).locator(".jaxdbg-panel").filter(has=page.get_by_role("button", name="Continue", exact=True))
    live.wait_for(state="visible", timeout=PANEL_TIMEOUT_MS)
    banner = live.locator(".jaxdbg-banner").inner_text()
    assert re.search(r"Stopped at In\[\d+\]:3 in inner", banner), banner

    live.locator(".jaxdbg-frame").nth(1).click()
    wait_heading(page, live, r" in outer$")
    type_command(live, "p x")
    wait_log(page, live, r"\(jaxdbg\) p x\s*Array\(\[0\., 1\., 2\.\], dtype=float32\)")
    save_screenshot(page, "installed_wheel_paused")

    live.get_by_role("button", name="Continue", exact=True).click()
    wait_for_output_text(page, 1, "result 12.0", timeout_s=60)
    cell(page, 1).locator(".jaxdbg-static").first.wait_for(state="visible", timeout=30_000)
