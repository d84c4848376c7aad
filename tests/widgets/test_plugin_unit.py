"""The widgets package adds its part of %load_ext jaxdbg through its entry point."""

from __future__ import annotations

import types

import jaxdbg  # noqa: F401  (loads the installed backends' entry points)
from jaxdbg.engine import registry
from jaxdbg.ipython import extension
from jaxdbg_widgets import plugin

# The order %load_ext jaxdbg has always loaded its features in.
ORDER = [
    "jax-breakpoint-hook",
    "quit-reporting",
    "widgets",
    "sharding",
    "magics",
    "print-log",
    "checkify",
    "nan-post-mortem",
]


def test_the_entry_point_adds_the_panel_and_print_log_features_in_their_places():
    assert [feature.name for feature in extension.FEATURES] == ORDER
    assert isinstance(extension.FEATURES[ORDER.index("widgets")], plugin.PanelFeature)
    assert isinstance(extension.FEATURES[ORDER.index("print-log")], plugin.PrintLogFeature)


def test_installing_again_changes_nothing():
    before = list(extension.FEATURES)
    plugin.install()
    assert [feature.name for feature in extension.FEATURES] == ORDER
    assert len(extension.FEATURES) == len(before)


def test_add_feature_places_before_the_named_one_and_remove_takes_it_out():
    loaded = []
    probe = extension.Feature("probe", loaded.append, loaded.remove)
    try:
        extension.add_feature(probe, before="magics")
        names = [feature.name for feature in extension.FEATURES]
        assert names.index("probe") == names.index("magics") - 1
    finally:
        extension.remove_feature("probe")
    assert [feature.name for feature in extension.FEATURES] == ORDER


def test_the_panel_feature_registers_the_backend_again_after_an_unload():
    shell = types.SimpleNamespace(kernel=None)
    feature = plugin.PanelFeature()
    registry.unregister_debugger(plugin.NAME)
    try:
        feature.load(shell)
        assert plugin.NAME in registry.registered_debuggers() and feature.registered
        feature.unload(shell)
        assert plugin.NAME not in registry.registered_debuggers()
    finally:
        plugin.register()
    feature.load(shell)  # already registered: unloading leaves it
    feature.unload(shell)
    assert plugin.NAME in registry.registered_debuggers()
