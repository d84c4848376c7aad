"""A Flax NNX train step in JupyterLab: the flax frames are one row of the frame list,
Up steps over them, the gradients' NaN mark is followed down the tree to its leaf, and a
click on the leaf's name puts its path, as an expression, in the console."""

from __future__ import annotations

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    type_command,
    wait_for_output_text,
    wait_heading,
    wait_log,
)

pytestmark = pytest.mark.browser

STOP_CELL = """\
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 16, rngs=rngs)
        self.l2 = nnx.Linear(16, 2, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.relu(self.l1(x)))

model = MLP(nnx.Rngs(0))

@nnx.jit
def train_step(model, x):
    def loss_fn(model):
        return jnp.mean(model(x) ** 2)

    grads = nnx.grad(loss_fn)(model)
    grads["l2"]["kernel"][...] = grads["l2"]["kernel"][...].at[:3, 0].set(jnp.nan)
    inner_step(grads)
    return grads

def inner_step(grads):
    jaxdbg.breakpoint()

train_step(model, jnp.ones((8, 4)))
print("stepped")
"""

# Each frame row: [folded?, function text, the function column's width in px].
FRAMES_JS = """() => [...document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished) .jaxdbg-frame')].map(
  r => [r.classList.contains('jaxdbg-frame-fold'), r.querySelector('.jaxdbg-frame-function').textContent,
        r.querySelector('.jaxdbg-frame-function').getBoundingClientRect().width])"""


def _row(panel, label):
    return panel.locator(f'tr.jaxdbg-local[data-label="{label}"]')


def test_a_nan_followed_down_the_gradient_tree_and_its_path_put_in_the_console(page, lab_server):
    pytest.importorskip("flax", reason="the test extra installs flax")
    page.set_viewport_size({"width": 1280, "height": 1600})
    open_notebook(page, lab_server, "trees_in_lab.ipynb", [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    wait_heading(page, panel, r"in inner_step$")

    frames = page.evaluate(FRAMES_JS)
    folds = [text for folded, text, _ in frames if folded]
    assert folds and all("frames in flax" in text or "frame in" in text for text in folds), frames
    assert all(width > 20 for _, _, width in frames), frames  # no function column squeezed to 0
    type_command(panel, "up")
    wait_heading(page, panel, r"in train_step$")  # over nothing: the user's next frame
    type_command(panel, "up")
    wait_heading(page, panel, r"in <module>|<cell line")  # over flax's frames at once
    type_command(panel, "frame 0")
    wait_heading(page, panel, r"in inner_step$")

    grads = _row(panel, "grads")
    grads.wait_for(state="visible")
    assert "jaxdbg-nonfinite" in grads.get_attribute("class")
    grads.locator(".jaxdbg-toggle").click()
    layer = _row(panel, "grads['l2']")
    layer.wait_for(state="visible")
    assert "jaxdbg-nonfinite" in layer.get_attribute("class")
    assert "jaxdbg-nonfinite" not in _row(panel, "grads['l1']").get_attribute("class")
    layer.locator(".jaxdbg-toggle").click()
    leaf = _row(panel, "grads['l2']['kernel']")
    leaf.wait_for(state="visible")
    assert "jaxdbg-nonfinite" in leaf.get_attribute("class")
    assert leaf.locator(".jaxdbg-col-type").inner_text() == "Param"
    leaf.locator("canvas.jaxdbg-thumb").wait_for(state="visible")
    save_screenshot(page, "trees_in_lab")

    leaf.locator("button.jaxdbg-path").click()
    box = panel.locator(".jaxdbg-input")
    assert box.input_value() == "p grads['l2']['kernel']"
    box.press("Enter")
    wait_log(page, panel, r"p grads\['l2'\]\['kernel'\]\nParam\( # 32 \(128 B\)\n\s*value=Array\(\[\[\s*nan")

    type_command(panel, "c")
    wait_for_output_text(page, 1, "stepped", timeout_s=60)
