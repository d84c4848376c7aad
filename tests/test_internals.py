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


def test_private_ipywidgets_names_still_exist():
    from jaxdbg.internals import ipywidgets_api

    missing = [n for n, ok in ipywidgets_api.names_in_use().items() if not ok]
    assert not missing, f"ipywidgets moved {missing}; update jaxdbg/internals/ipywidgets_api.py"


def test_widget_comm_exists_before_it_is_opened(monkeypatch):
    """The panel's hook runs with the comm created and its handler set, before comm_open."""
    import comm.base_comm

    from jaxdbg_widgets.panel_widget import PanelWidget

    order = []
    plain_open = comm.base_comm.BaseComm.open

    def recording_open(self, *args, **kwargs):
        order.append(("open", self))
        return plain_open(self, *args, **kwargs)

    monkeypatch.setattr(comm.base_comm.BaseComm, "open", recording_open)
    seen = {}

    def hook(widget):
        order.append(("hook", widget.comm))
        seen["comm"] = widget.comm

    w = PanelWidget(before_open=hook, frames=[{"function": "f", "where": "x:1", "path": "x:1"}])
    mine = [what for what, c in order if c is w.comm]  # (the Layout opens its own comm first)
    assert mine == ["hook", "open"] and seen["comm"] is w.comm
    assert w.model_id == w.comm.comm_id
    w.close()
