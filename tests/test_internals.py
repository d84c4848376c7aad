"""Fails loudly when a private JAX or IPython name that the adapters use moves."""

import jax
import pytest

from jaxdbg.internals import jax_api


@pytest.mark.parametrize("name", sorted(jax_api.names_in_use()))
def test_private_jax_name_still_exists(name):
    assert jax_api.names_in_use()[name], (
        f"{name} is gone in jax {jax.__version__}; update jaxdbg/internals/jax_api.py")


def test_jax_version_in_tested_range():
    low, high = jax_api.SUPPORTED_JAX
    assert low <= jax_api.jax_version()[:2] <= high, (
        f"jax {jax.__version__} is outside the tested range {low}..{high}; "
        "run the suite and widen SUPPORTED_JAX in jaxdbg/internals/jax_api.py")


def test_jax_debugger_registry_shape():
    """install_jax_hook writes (priority, debugger) into JAX's registry dict."""
    from jax._src.debugger import core

    assert isinstance(core._debugger_registry, dict)
    priority, debugger = next(iter(core._debugger_registry.values()))
    assert isinstance(priority, int) and callable(debugger)


def test_checkify_traceback_frames_are_readable():
    """checkify keeps a jaxlib Traceback with each error; jaxdbg reads its frames."""
    import jax.numpy as jnp
    from jax.experimental import checkify

    def failing(x):
        checkify.check(x > 0, "bad")
        return x

    err, _ = checkify.checkify(failing)(-1.0)
    frames = jax_api.traceback_frames(err.get_exception().traceback_info)
    mine = [f for f in frames if f[0] == __file__]
    assert mine and mine[0][1] == failing.__code__.co_firstlineno + 1, frames
    assert mine[0][2].endswith("failing"), frames
