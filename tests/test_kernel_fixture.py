"""The shared kernel of a module is replaced after a test that failed with it, so one
failure (say, a kernel left paused at a stop) does not fail every test after it."""

from __future__ import annotations

import contextlib

from support import kernel_harness

pytest_plugins = ["pytester"]

MODULE = """
from support.kernel_harness import kernel_fixture

kernel = kernel_fixture("setup")
seen = []

def test_one(kernel):
    seen.append(kernel)
    assert False, "fails, leaving its kernel in some state"

def test_two(kernel):
    seen.append(kernel)

def test_three(kernel):
    seen.append(kernel)
    assert seen[1] is kernel, "a passing test keeps the kernel for the next"
    assert seen[0] is not kernel, "the failed test's kernel was replaced"
"""


# One Python only, whatever the matrix adds (the real fixture's params are fixed at import).
CONFTEST = """
import pytest
from support.kernel_harness import SharedKernels
from support.kernel_harness import keep_call_report as pytest_runtest_makereport

@pytest.fixture(scope="module")
def shared_kernels():
    kernels = SharedKernels("python")
    yield kernels
    kernels.close()
"""


def test_a_failed_test_gets_the_next_one_a_fresh_kernel(pytester, monkeypatch):
    started, stopped = [], []

    @contextlib.contextmanager
    def fake_kernel(python, setup, expect):
        harness = object()
        started.append(harness)
        yield harness
        stopped.append(harness)

    monkeypatch.setattr(kernel_harness, "kernel_set_up_with", fake_kernel)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_module=MODULE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    assert len(started) == 2 and stopped == started
