"""The matrix's installed-wheel kernel runs the package users install, not the checkout.

Every kernel test also runs on that kernel (``JAXDBG_WHEEL_PYTHON``, set by ``dev.py
test``); this module checks that the premise holds: there, jaxdbg and its panel come from
the installed wheel, the kernel's working directory is outside the checkout, and the panel
backend is registered by the entry point alone.
"""

from __future__ import annotations

import json
import os

import pytest

from support.kernel_harness import ROOT, WHEEL_ENV, runs_installed_wheel

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("wheel")]

WHERE = r"""
import json, os, sys
import jaxdbg, jaxdbg_widgets, jaxdbg_widgets.panel.widget as pw
print("WHERE" + json.dumps({
    "jaxdbg": jaxdbg.__file__, "widgets": jaxdbg_widgets.__file__, "panel": pw.__file__,
    "prefix": sys.prefix, "cwd": os.getcwd(), "available": jaxdbg.available_debuggers(),
    "version": jaxdbg.__version__,
}))
"""


def _inside(path: str, folder) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(str(folder)) + os.sep)


def test_the_kernel_imports_jaxdbg_from_where_the_matrix_says(kernel, kernel_python):
    result = kernel.run(WHERE)
    assert result.status == "ok", result
    where = json.loads(result.stdout.split("WHERE", 1)[1])
    assert "widgets" in where["available"], where  # the panel is there, found by its entry point
    if runs_installed_wheel(kernel_python):
        for name in ("jaxdbg", "widgets", "panel"):
            assert _inside(where[name], where["prefix"]), where
            for source_package in ("jaxdbg", "jaxdbg_widgets"):  # the venv may sit in the checkout
                assert not _inside(where[name], ROOT / source_package), where
        assert not _inside(where["cwd"], ROOT), where
    else:
        assert _inside(where["jaxdbg"], ROOT / "jaxdbg"), where


def test_the_matrix_names_an_installed_wheel_when_dev_py_runs_it():
    """dev.py test sets the installed-wheel interpreter; without it this module proves little."""
    if not os.environ.get(WHEEL_ENV):
        pytest.skip(f"${WHEEL_ENV} is not set (python3 dev.py test sets it)")
    assert os.path.isfile(os.environ[WHEEL_ENV])
