"""A Flax NNX train step in JupyterLab and Notebook 7: the flax frames are one row of the
frame list, Up steps over them, the gradients' NaN mark is followed down the tree to its
leaf, and a click on the leaf's name puts its path, as an expression, in the console.
The NaN marks (the red summaries of every row from the tree down to the leaf) read in
every theme: light, dark and high contrast (the page switched live, as a user does).
"""

from __future__ import annotations

import re

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    WCAG_AA,
    each_theme,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    text_contrast,
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


def _stopped_in_the_train_step(page, server, name: str):
    """The notebook open, the train step stopped at its breakpoint: the live panel."""
    pytest.importorskip("flax", reason="the test extra installs flax")
    page.set_viewport_size({"width": 1280, "height": 1600})
    open_notebook(page, server, name, [EXTENSION_SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    wait_heading(page, panel, r"in inner_step$")
    return panel


def _open_down_to_the_nan(panel):
    """Opens the gradients, then their NaN-marked layer: the rows on the way, the leaf last."""
    grads = _row(panel, "grads")
    grads.wait_for(state="visible")
    grads.locator(".jaxdbg-toggle").click()
    layer = _row(panel, "grads['l2']")
    layer.wait_for(state="visible")
    layer.locator(".jaxdbg-toggle").click()
    leaf = _row(panel, "grads['l2']['kernel']")
    leaf.wait_for(state="visible")
    return grads, layer, leaf


@pytest.mark.notebook7
def test_a_nan_followed_down_the_gradient_tree_and_its_path_put_in_the_console(page, server):
    # Behaviour, so one theme; the marks' colours are checked in every theme below.
    panel = _stopped_in_the_train_step(page, server, f"trees-{server.app}.ipynb")
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

    grads, layer, leaf = _open_down_to_the_nan(panel)
    for row in (grads, layer, leaf):  # the mark leads from the tree down to the leaf
        assert "jaxdbg-nonfinite" in row.get_attribute("class")
    assert "jaxdbg-nonfinite" not in _row(panel, "grads['l1']").get_attribute("class")
    assert "jaxdbg-nonfinite" not in _row(panel, "grads['l2']['bias']").get_attribute("class")
    assert leaf.locator(".jaxdbg-col-type").inner_text() == "Param"
    leaf.locator("canvas.jaxdbg-thumb").wait_for(state="visible")
    save_screenshot(page, f"trees_in_{server.app}")

    leaf.locator("button.jaxdbg-path").click()
    box = panel.locator(".jaxdbg-input")
    assert box.input_value() == "p grads['l2']['kernel']"
    box.press("Enter")
    wait_log(page, panel, r"p grads\['l2'\]\['kernel'\]\nParam\( # 32 \(128 B\)\n\s*value=Array\(\[\[\s*nan")

    type_command(panel, "c")
    wait_for_output_text(page, 1, "stepped", timeout_s=60)


# The summaries of the marked rows, and of two unmarked ones to tell the mark's colour from.
MARKED = ".jaxdbg-local.jaxdbg-nonfinite .jaxdbg-col-summary"
UNMARKED = (
    ".jaxdbg-local[data-label=\"grads['l1']\"] .jaxdbg-col-summary,"
    " .jaxdbg-local[data-label=\"grads['l2']['bias']\"] .jaxdbg-col-summary"
)


def test_the_nan_marks_down_the_tree_read_in_every_theme(page, lab_server):
    """The tree is opened once; the page then switches theme live, as a user does."""
    panel = _stopped_in_the_train_step(page, lab_server, "trees-themes.ipynb")
    _open_down_to_the_nan(panel)
    page.mouse.move(0, 0)  # no row under the pointer: its hover colours aside
    live = ".jaxdbg-panel:not(.jaxdbg-finished)"
    for theme in each_theme(page, lab_server):
        marked, unmarked = text_contrast(page, live, MARKED), text_contrast(page, live, UNMARKED)
        save_screenshot(page, f"trees_nan_marks_{theme}")
        # the tree, its layer and the leaf: each row's summary says NaN, in the mark's colour
        texts = panel.locator(MARKED).all_inner_texts()
        assert len(marked) == 3 and all(re.search(r"NaN|nan=", text) for text in texts), texts
        assert len(unmarked) == 2, unmarked
        assert {r["colour"] for r in marked}.isdisjoint({r["colour"] for r in unmarked}), (theme, marked, unmarked)
        low = [r for r in marked + unmarked if r["ratio"] < WCAG_AA]
        assert not low, (theme, low)
    type_command(panel, "c")
    wait_for_output_text(page, 1, "stepped", timeout_s=60)
