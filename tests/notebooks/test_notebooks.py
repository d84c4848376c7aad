"""notebooks/quickstart.ipynb answered by JAXDBG_COMMANDS under nbclient (a client
without stdin), in the running venv's kernel and in Colab's pins. The other notebooks
have their own tests (tests/test_*_notebook.py).

The kernels: the running venv's, and Colab's exact pins (``.nox/colab_pins``) when
``dev.py test`` built it (JAXDBG_COLAB_PYTHON).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

# The core-only matrix venvs collect this file too. Looked up, not imported: nbformat's
# jsonschema builds a parser at import (about 2.5 s of CPU), in every worker that collects.
if importlib.util.find_spec("nbformat") is None:
    pytest.skip("could not import 'nbformat'", allow_module_level=True)
from support.notebook_run import run_with_nbclient

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
    cells = run_with_nbclient("quickstart.ipynb", commands, python)
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

