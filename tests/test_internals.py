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


def test_custom_vmap_reports_its_effects_after_the_compat_fix():
    """jax 0.7 pruned a breakpoint's callback under jit (custom_vmap_call had no effects)."""
    from jaxdbg.internals import jax_compat

    jax_compat.apply()
    assert jax_compat.custom_vmap_keeps_effects(), f"jax {jax.__version__}"


@pytest.mark.skipif(jax_api.jax_version()[:2] >= (0, 8), reason="only jax 0.7 needs the fix")
def test_private_name_of_the_jax_07_fix_exists():
    from jaxdbg.internals import jax_compat

    assert all(jax_compat.names_in_use().values()), jax_compat.names_in_use()
