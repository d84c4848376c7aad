"""notebooks/training.ipynb runs top to bottom in a real kernel: a Flax NNX model trained
for 50 steps, a corrupted sample in batch 37; the stop on non-finite gradients names the
first leaf holding the NaN, `pp grads` draws the tree of leaf summaries as text at the
typed prompt, and training without the sample stays finite."""

from __future__ import annotations

import json

import pytest

from support.notebook_run import NOTEBOOKS, CellRun, cell_with, run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]
pytest.importorskip("flax.nnx", reason="the test extra installs flax")

# What the notebook tells the reader to type at the stop.
ANSWERS = ["locals", "pp grads", "whatis model", "p jnp.isnan(x).any(axis=1)", "continue all"]


@pytest.fixture(scope="module")
def runs() -> list[CellRun]:
    return run_notebook("training.ipynb", env={"JAXDBG_BACKEND": "cli"}, answers={"def train_step": ANSWERS})


def test_the_notebook_tells_the_reader_the_commands_answered():
    cells = json.loads((NOTEBOOKS / "training.ipynb").read_text())["cells"]
    text = " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())
    for command in ANSWERS:
        assert f"`{command}`" in text, command


def test_the_stop_names_the_leaf_and_draws_the_tree_at_the_prompt(runs):
    run = cell_with(runs, "def train_step")
    assert not run.errors, run.text
    out = run.text
    assert out.count("Stopped at") == 1, out  # continue all passed the later steps
    assert "non-finite values in grads['l1']['kernel']" in out, out
    grads_row = next(line for line in out.splitlines() if line.startswith("grads "))
    assert "nnx.State · 4 arrays · 97 float32" in grads_row and "NaN in ['l1']['kernel'] (16)" in grads_row
    # pp grads: the tree, printed at the prompt as text (not a rich display of its own)
    assert all(o["output_type"] == "stream" for o in run.outputs), [o["output_type"] for o in run.outputs]
    assert "├── ['l1']  dict  2 arrays" in out, out
    assert "│   └── ['kernel']  Param  nnx.Param · float32[4,16]" in out and "NaN (16)" in out, out
    assert "nnx.Module MLP: 2 submodules, 4 Param (97 float32)" in out, out
    assert "Array([False, False, False, False, False,  True, False, False], dtype=bool)" in out, out
    assert "loss at steps 0, 36, 37, 49: [0.4006, 0.0662, nan, nan]" in out, out


def test_training_without_the_bad_sample_stays_finite(runs):
    run = runs[-1]
    assert not run.errors and "Stopped at" not in run.text, run.text
    assert "loss at steps 0, 36, 37, 49: [0.4006, 0.0662, 0.0513, 0.0369]" in run.text, run.text
