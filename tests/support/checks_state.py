"""A fixture that gives each test empty breakpoint checks: a watch book of its own, and no
condition, log template, ignore count or `continue all` left from another test."""

from __future__ import annotations

import pytest

from jaxdbg.engine import breakpoint_state, watches


@pytest.fixture(autouse=True)
def fresh_breakpoint_checks(monkeypatch):
    """Autouse in every test module that imports it."""
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())
    breakpoint_state.reset()
    yield
    for row in breakpoint_state.rows():
        breakpoint_state.set_condition(row.number, "")
        breakpoint_state.set_log_template(row.number, "")
    breakpoint_state.reset()
