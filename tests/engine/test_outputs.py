"""``Output.data`` is typed by kind: each kind's property gives its data, and only its own."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax.numpy as jnp

from jaxdbg.engine.breakpoint_state import BreakpointRow
from jaxdbg.engine.frames import live_frame
from jaxdbg.engine.outputs import CommandHelp, FrameRow, OutputKind, SourceView
from jaxdbg.engine.session import Session
from jaxdbg.engine.values.sharding_layout import ShardingView
from jaxdbg.engine.values.summaries import ValueSummary

PROPERTIES = ("source", "frames", "locals", "value_summary", "value", "help", "sharding", "breakpoints")


def _session() -> Session:
    x = jnp.arange(8.0)  # noqa: F841  (a local for the commands below)
    label = "hello"  # noqa: F841
    return Session([live_frame(sys._getframe())])


def _only(output, prop: str, expected_type: type) -> None:
    """``prop`` holds the data (of ``expected_type``); every other property is empty."""
    data = getattr(output, prop)
    items = data if isinstance(data, list) else [data]
    assert items and all(isinstance(item, expected_type) for item in items), (prop, data)
    for other in PROPERTIES:
        if other != prop:
            assert getattr(output, other) in (None, []), (prop, other)


def test_each_kind_carries_its_own_typed_data():
    session = _session()
    cases = [
        ("list", OutputKind.SOURCE, "source", SourceView),
        ("where", OutputKind.WHERE, "frames", FrameRow),
        ("locals", OutputKind.LOCALS, "locals", ValueSummary),
        ("whatis x", OutputKind.TEXT, "value_summary", ValueSummary),
        ("help", OutputKind.HELP, "help", CommandHelp),
        ("sharding x", OutputKind.SHARDING, "sharding", ShardingView),
    ]
    for line, kind, prop, expected_type in cases:
        output = session.execute(line)
        assert output.kind is kind, (line, output.text)
        assert output.data is not None
        _only(output, prop, expected_type)


def test_a_value_is_the_value_itself():
    output = _session().execute("p label")
    assert output.kind is OutputKind.VALUE and output.value == "hello"


def test_breakpoint_rows_are_typed():
    output = _session().execute("breakpoints")
    assert output.kind is OutputKind.BREAKPOINTS
    assert all(isinstance(row, BreakpointRow) for row in output.breakpoints)


def test_an_error_carries_no_data():
    output = _session().execute("p no_such_name")
    assert output.is_error
    assert all(getattr(output, prop) in (None, []) for prop in PROPERTIES)
