"""Every code cell of notebooks/quickstart.ipynb runs in a real kernel.

The stops are answered at the typed prompt (JAXDBG_BACKEND=cli); the panel
itself is exercised by the widget and browser tests.
"""

import json
from pathlib import Path

import pytest

from kernel_harness import MULTI_DEVICE_XLA_FLAGS, KernelHarness

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"


def test_quickstart_runs_top_to_bottom():
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    harness = KernelHarness(env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS, "JAXDBG_BACKEND": "cli"})
    try:
        harness.start()
        outputs = []
        for cell in cells:
            for _ in range(10):
                harness.answer_input("c")
            result = harness.run("".join(cell["source"]), timeout=180)
            assert result.status == "ok", (cell["source"], result)
            outputs.append(result.stdout)
    finally:
        harness.shutdown()
    text = "\n".join(outputs)
    assert "loss:" in text
    assert "batch 1/3" in text and "batch 3/3" in text
    assert "non-finite values in logits (1 NaN and 1 Inf)" in text
    assert text.count("Stopped at") == 1 + 3 + 1 + 1
