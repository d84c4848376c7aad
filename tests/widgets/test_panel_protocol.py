"""The browser <-> kernel messages of the panel are declared once, in
jaxdbg_widgets.panel.protocol: panel.js reads their names from the widget's
``protocol`` trait and writes none of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxdbg_widgets.panel import panel as panel_mod
from jaxdbg_widgets.panel import protocol
from jaxdbg_widgets.panel.protocol import ToBrowser, ToKernel
from jaxdbg_widgets.panel.widget import PanelWidget
from jaxdbg_widgets.pause import channel

PANEL_JS = (Path(__file__).resolve().parents[2] / "jaxdbg_widgets" / "static" / "panel.js").read_text(encoding="utf-8")
# model.send({ type: X, field, field: value, ... });  (no nested braces in these literals)
SENDS = re.findall(r"model\.send\(\{\s*type:\s*([^,}]+)([^}]*)\}", PANEL_JS)
RECEIVES = re.findall(r"msg\.type\s*===\s*([^)\s]+)", PANEL_JS)


def _fields(rest: str) -> set[str]:
    """The keys of an object literal's remaining ``, a, b: c`` (shorthand or keyed)."""
    depth, keys, part = 0, set(), ""
    for ch in rest + ",":
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            if part.strip():
                keys.add(part.split(":")[0].strip())
            part = ""
        else:
            part += ch
    return keys


def test_panel_js_sends_and_reads_every_message_through_the_protocol():
    assert len(SENDS) >= len(ToKernel) and len(RECEIVES) >= len(ToBrowser)
    sent = {kind.strip() for kind, _ in SENDS}
    assert sent == {f"TO_KERNEL.{m.name}" for m in ToKernel}
    assert set(RECEIVES) == {f"TO_BROWSER.{m.name}" for m in ToBrowser}


@pytest.mark.parametrize("kind, rest", SENDS)
def test_panel_js_sends_only_declared_fields(kind, rest):
    message = ToKernel[kind.strip().removeprefix("TO_KERNEL.")]
    assert _fields(rest) <= set(protocol.fields(message)), (kind, rest)


def test_panel_js_writes_no_message_name_of_its_own():
    names = {m.value for m in ToKernel} | {m.value for m in ToBrowser}
    for kind, _ in SENDS:
        assert kind.strip().strip("\"'`") not in names
    for kind in RECEIVES:
        assert kind.strip("\"'`") not in names


def test_the_widget_syncs_the_names_panel_js_reads():
    widget_names = PanelWidget.class_traits()["protocol"].default()
    assert widget_names == protocol.browser_names()
    assert set(re.findall(r"TO_KERNEL\.(\w+)", PANEL_JS)) <= set(widget_names["toKernel"])
    assert set(re.findall(r"TO_BROWSER\.(\w+)", PANEL_JS)) <= set(widget_names["toBrowser"])
    assert PanelWidget.class_traits()["protocol"].metadata.get("sync")


def test_the_kernel_handles_every_message_the_browser_sends():
    # the views count goes to the pause channel, "held" / "drawn" to the stop's frontend
    # (jaxdbg_widgets.panel.backend), every other message to the panel
    assert set(panel_mod._HANDLERS) | {channel.VIEWS_MESSAGE} | protocol.PRESENCE == {m.value for m in ToKernel}


def test_each_direction_keeps_its_own_fields():
    assert protocol.fields(ToKernel.LOCALS) == ("frame", "start", "count")
    assert protocol.fields(ToBrowser.LOCALS) == ("frame", "start", "rows")


def test_a_message_with_an_undeclared_field_is_refused():
    assert protocol.message(ToBrowser.STATS, frame=0, path=["x"], row={}) == {
        "type": "stats",
        "frame": 0,
        "path": ["x"],
        "row": {},
    }
    with pytest.raises(ValueError):
        protocol.message(ToBrowser.STATS, frame=0, rows=[])


def test_a_panel_widget_carries_the_names_and_phrases():
    from jaxdbg.runtime import phrases

    widget = PanelWidget()
    try:
        assert widget.protocol == protocol.browser_names()
        assert widget.phrases == phrases.browser_phrases()
        assert {"protocol", "phrases"} <= set(widget.keys)
    finally:
        widget.close()
