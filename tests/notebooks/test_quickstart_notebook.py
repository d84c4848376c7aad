"""Every code cell of notebooks/quickstart.ipynb runs in a real kernel.

The stops are answered at the typed prompt (JAXDBG_BACKEND=cli); the panel
itself is exercised by the widget and browser tests.
"""

import pytest

from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS
from support.notebook_run import run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

# Each cell's stops, continued: one in jit (after what the notebook's text suggests typing), three under vmap (one per element), one on
# the non-finite logits (the finite call does not stop), one jax.debug.breakpoint().
ANSWERS = {"def init_params": ["p hidden", "pp params", "c"], "def per_example": ["c"] * 3,
           "def unstable": ["c"], "def legacy": ["c"]}


def test_quickstart_runs_top_to_bottom():
    runs = run_notebook("quickstart.ipynb", answers=ANSWERS,
                        env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS, "JAXDBG_BACKEND": "cli"})
    text = "\n".join(run.text for run in runs)
    first_stop = runs[1].text
    assert "***" not in first_stop, first_stop  # both commands work in that frame
    assert "Array([[" in first_stop, first_stop  # p hidden
    # pp params: a tree of leaf summaries by key path, not every element
    assert "├── [0]  dict  2 arrays · 40 float32" in first_stop, first_stop
    assert "['w']  Array  float32[4,8]" in first_stop, first_stop
    assert "loss:" in text
    assert "batch 1/3" in text and "batch 3/3" in text
    assert "non-finite values in logits (1 NaN and 1 Inf)" in text
    assert text.count("Stopped at") == 1 + 3 + 1 + 1
