"""Every notebook in notebooks/ runs top to bottom: nbclient, a real kernel, and
JAXDBG_COMMANDS answering each stop. Outputs are checked for content.

The kernels: the running venv's, and Colab's exact pins (``.venv-colab``) when
``dev.py test`` built it (JAXDBG_COLAB_PYTHON).
"""

from __future__ import annotations

import os
import sys

import pytest

from notebook_runner import run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def _pythons() -> list:
    params = [pytest.param(sys.executable, id="current")]
    if os.environ.get("JAXDBG_COLAB_PYTHON"):
        params.append(pytest.param(os.environ["JAXDBG_COLAB_PYTHON"], id="colab-pins"))
    return params


@pytest.mark.parametrize("python", _pythons())
def test_quickstart(python):
    commands = ("p hidden.shape; pp params[0]['b']; up; c;"      # jit
                "p scaled; c; skip;"                              # vmap: 2 of 3, then skip
                "p logits; c;"                                    # non-finite
                "p y")                                            # legacy: then the script runs out
    cells = run_notebook("quickstart.ipynb", commands, python)
    jit, vmap, nonfinite, legacy = cells[1], cells[2], cells[3], cells[4]
    assert "Stopped at In[" in jit and "in mlp" in jit
    assert "(jaxdbg) p hidden.shape\n(16, 8)" in jit
    assert "(jaxdbg) pp params[0]['b']\nArray([0., 0., 0., 0., 0., 0., 0., 0.], dtype=float32)" in jit
    assert "(jaxdbg) up\n> In[" in jit and "in loss" in jit
    assert "loss: " in jit
    assert "batch 1/3" in vmap and "batch 2/3" in vmap and "batch 3/3" not in vmap
    assert "(jaxdbg) p scaled\nArray([ 0., 10.], dtype=float32)" in vmap
    assert "Continuing; skipping the rest of this batch." in vmap
    assert "Array([10., 50., 90.], dtype=float32)" in vmap  # the cell's own result
    assert nonfinite.count("Stopped at") == 1
    assert "non-finite values in logits (1 NaN and 1 Inf)" in nonfinite
    assert "(jaxdbg) p logits\nArray([  0., -inf,  nan], dtype=float32)" in nonfinite
    assert "(jaxdbg) p y\nArray([0., 1., 3., 6.], dtype=float32)" in legacy
    # the script ran out and nbclient has no stdin: one line, then the cell finishes
    notice = [line for line in legacy.splitlines() if line.startswith("jaxdbg: continuing past")]
    assert len(notice) == 1 and "scripted commands ran out" in notice[0]
    assert "Array([0., 1., 3., 6.], dtype=float32)" in legacy.split(notice[0])[1]


@pytest.mark.multidevice
def test_printing():
    # Not on Colab's pins: under nbclient there the print log stays a live widget
    # (the README's support table says so); the prints themselves are checked in
    # tests/test_print*.py.
    cells = run_notebook("printing.ipynb", "", sys.executable)
    assert "8 devices" in cells[0]
    ordered = cells[1]
    assert "print log, 3 rows)" in ordered
    assert "unordered: x = [0. 1. 2.]" in ordered
    assert ordered.index("ordered: y = [0.") < ordered.index("ordered: sum = 3.50153")
    vmap = cells[2]
    for i in range(3):
        assert f"batch {i + 1}/3  | v = {float(i)}" in vmap
    pmap = cells[3]
    for d in range(8):
        assert f"device {d}  | device value {float(d)}" in pmap
    scan = cells[4]
    assert "print log, 1,000 rows)" in scan
    assert "| step 0: carry 0.000" in scan and "| step 999: carry " in scan
    assert "final carry" in scan


@pytest.mark.parametrize("python", _pythons())
def test_checkify(python):
    cells = run_notebook("checkify.ipynb", "p ratio; p a; up; c", python)
    located = cells[1]
    assert "safe_log needs positive inputs, got min -2.0 (`check` failed) (at In[2]:2 in safe_log)" in located
    assert "->    2 |     checkify.check(" in located and "jaxdbg-checkify" in located
    table = cells[2]
    assert "checkify errors at 2 of 4 mapped indices" in table
    assert "1      division by zero for a = 1.0" in table and "3      division by zero for a = 3.0" in table
    assert "checkify error: division by zero" in cells[3] and "in normalise" in cells[3]
    postmortem = cells[4]
    assert "FloatingPointError" in postmortem
    assert "Stopped at In[5]:6 in log_ratio (post-mortem: FloatingPointError" in postmortem
    assert "(jaxdbg) p ratio\nArray([ 1., -1.], dtype=float32)" in postmortem
    assert "(jaxdbg) up\n> In[5]:8 in " in postmortem  # <module> (IPython 7: <cell line: 0>)
    assert "NaN debugging off" in cells[5]
