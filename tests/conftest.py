"""Shared test set-up: 8 simulated CPU devices for pmap and sharding cases.

XLA reads the flag once, at JAX's first backend use, so it is set before any
test module imports jax.
"""

import atexit
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

# The harnesses in tests/support/ import as `support.*` from every test folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Every process the tests start (kernels, scripts, a job's processes) inherits this: a
# crash (SIGSEGV, SIGABRT) then writes every thread's Python stack to its stderr, which
# the test's failure shows, instead of a bare exit status of -11.
os.environ.setdefault("PYTHONFAULTHANDLER", "1")
# NumPy's OpenBLAS starts a thread per core in every process that imports it, and they
# spin for a while: on a 2-core runner, CPU the hundreds of kernels and processes the
# tests start take from one another (no test does big linear algebra on the host).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Started in the background without job control (`pytest &` in a script), this process
# and every kernel it starts would ignore SIGINT, and the tests of Ctrl-C and kernel
# interrupts would wait forever: handle it as Python does by default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import pytest

from support import reverse_order

# Every test may ask for a started kernel (`kernel`) on each Python of the matrix
# (`kernel_python`); a module that shares one binds `kernel = kernel_fixture(SETUP)`.
# A shared kernel is replaced after a test that failed with it: the hook keeps each
# test's call report where the kernel's fixture reads it.
from support.kernel_harness import keep_call_report as pytest_runtest_makereport  # noqa: F401
from support.kernel_harness import (  # noqa: F401
    kernel,
    kernel_python,
    shared_kernels,
    split_by_kernel_matrix,
)

# Kernels, consoles and servers started by the tests keep their connection files and
# IPython history in this worker's own folder, not the user's home: the user's history
# stays theirs, and no process reads a stale connection file another one left (a
# `jupyter console` loads the one named after its PID, if there is one).
_TESTS_HOME = tempfile.mkdtemp(prefix="jaxdbg-tests-home-")
atexit.register(shutil.rmtree, _TESTS_HOME, ignore_errors=True)
os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(_TESTS_HOME, "jupyter-runtime")
os.environ["IPYTHONDIR"] = os.path.join(_TESTS_HOME, "ipython")
os.makedirs(os.path.join(_TESTS_HOME, "ipython", "profile_default"))  # before kernels race to make it


def pytest_configure(config: pytest.Config) -> None:
    """Each test's CPU, its kernels', scripts' and browsers' included, goes into its JUnit
    XML (``support/cpu_usage.py``), for the closing summary of ``dev.py test``."""
    from support import cpu_usage

    if not config.pluginmanager.has_plugin("jaxdbg-cpu-usage"):
        config.pluginmanager.register(cpu_usage, "jaxdbg-cpu-usage")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="run each module's tests in reverse order: a test that relies on what another "
        "left in their shared kernel fails",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Kernel tests not marked ``matrix`` run on the current kernel only (see
    CONTRIBUTING.md, "Which tests run on every kernel")."""
    kept, dropped = split_by_kernel_matrix(items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    if config.getoption("--reverse-order"):
        items[:] = reverse_order.within_modules(items)


@pytest.fixture(autouse=True)
def _forget_stopped_computations():
    """A test that quits a jitted computation catches the error itself; drop its
    failed effect tokens so JAX does not re-raise them at exit."""
    yield
    from jaxdbg.internals import jax_api

    jax_api.forget_failed_effects()


@pytest.fixture(autouse=True)
def _no_scripted_commands(monkeypatch):
    """A JAXDBG_COMMANDS in the caller's environment must not answer the tests' stops."""
    monkeypatch.delenv("JAXDBG_COMMANDS", raising=False)
    from jaxdbg.frontends import scripted

    scripted.reset()


@pytest.fixture
def fresh_scripted_queues(monkeypatch):
    """No JAXDBG_COMMANDS and empty command queues for the test, and nothing it queued
    left after it: for modules whose stops are answered by scripted commands."""
    from jaxdbg.frontends import scripted

    monkeypatch.delenv(scripted.ENV_VAR, raising=False)
    scripted.reset()
    yield
    scripted.reset()


@pytest.fixture
def temporary_backend():
    """Register debugger backends for one test: ``temporary_backend(name, debugger, **kw)``
    (priority -1000 unless given); every one is unregistered afterwards."""
    import jaxdbg

    names = []

    def register(name, debugger, priority=-1000, **kwargs):
        jaxdbg.register_debugger(name, debugger, priority, **kwargs)
        names.append(name)
        return debugger

    yield register
    for name in names:
        jaxdbg.unregister_debugger(name)
