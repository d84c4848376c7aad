"""Which kernels of the matrix a kernel test runs on (``@pytest.mark.matrix``)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from support import kernel_harness
from support.kernel_harness import KERNEL_CONCERNS, split_by_kernel_matrix


class FakeItem:
    """What the selection reads of a collected test: its kernel param and its marks."""

    def __init__(self, name: str, python: str | None, *marks: tuple[str, ...]) -> None:
        self.name = name
        self.nodeid = name
        self.callspec = None if python is None else SimpleNamespace(params={"kernel_python": python})
        self._marks = [pytest.mark.matrix(*args).mark for args in marks]

    def iter_markers(self, name: str):
        return iter(self._marks if name == "matrix" else [])


@pytest.fixture
def kernels(monkeypatch) -> dict[str, str]:
    """A fake Python per matrix variable, by its variable."""
    monkeypatch.delenv(kernel_harness.ALL_KERNELS_ENV, raising=False)
    pythons = {var: f"/matrix/{var}/python" for var in KERNEL_CONCERNS}
    for var, python in pythons.items():
        monkeypatch.setenv(var, python)
    return pythons


def _kernels_run_on(kernels: dict[str, str], *marks: tuple[str, ...]) -> set[str]:
    items = [FakeItem(var, python, *marks) for var, python in kernels.items()]
    items.append(FakeItem("current", sys.executable, *marks))
    kept, dropped = split_by_kernel_matrix(items)
    assert len(kept) + len(dropped) == len(items)
    return {item.name for item in kept}


def test_an_unmarked_kernel_test_runs_on_the_current_kernel_only(kernels):
    assert _kernels_run_on(kernels) == {"current"}


def test_bare_matrix_runs_on_every_kernel(kernels):
    assert _kernels_run_on(kernels, ()) == {"current", *kernels}


@pytest.mark.parametrize("concern", sorted(kernel_harness.MATRIX_CONCERNS))
def test_a_concern_runs_on_the_kernels_that_check_it(kernels, concern):
    wanted = {var for var, concerns in KERNEL_CONCERNS.items() if concern in concerns}
    assert wanted, concern
    assert _kernels_run_on(kernels, (concern,)) == {"current", *wanted}


def test_the_kernels_of_each_concern():
    """The matrix's reasons: Colab's pins are old Jupyter packages and a JAX of their own."""
    by_concern = {
        c: {kernel_harness.MATRIX_ENV[v] for v, cs in KERNEL_CONCERNS.items() if c in cs}
        for c in kernel_harness.MATRIX_CONCERNS
    }
    assert by_concern == {
        "jupyter": {"ipykernel6", "colab-pins"},
        "jax": {"colab-pins", "newest-jax", "oldest-jax"},
        "wheel": {"installed-wheel"},
    }


def test_a_test_that_is_not_a_kernel_test_is_kept(kernels):
    item = FakeItem("plain", None)
    assert split_by_kernel_matrix([item]) == ([item], [])


def test_an_unknown_concern_is_refused(kernels):
    with pytest.raises(pytest.UsageError, match="matrix\\(ipykernel\\)"):
        _kernels_run_on(kernels, ("ipykernel",))
