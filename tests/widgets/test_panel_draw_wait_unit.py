"""The panel's wait for a frontend that draws it (jaxdbg_widgets.panel.backend.PanelInCell).

The stop answers at the prompt when no ``held`` came within the wait. What decides is
whether the message came, not how soon the stop's thread got to look: on a loaded machine
the thread may look only after the deadline, with ``held`` already waiting to be read.
"""

from __future__ import annotations

import time

import pytest

from jaxdbg import config
from jaxdbg.frontends import driver
from jaxdbg_widgets.panel.backend import NOT_DRAWN, PanelInCell


class Channel:
    """Hands out the messages given, then None (the wait timed out)."""

    def __init__(self, *messages):
        self.messages = list(messages)
        self.timeouts: list[float | None] = []

    def wait(self, timeout=None):
        self.timeouts.append(timeout)
        return self.messages.pop(0) if self.messages else None


class Panel:
    def refresh_header(self):
        pass


@pytest.fixture
def drawing():
    config.PANEL_DRAWING.reset()
    yield config.PANEL_DRAWING
    config.PANEL_DRAWING.reset()


def _past_its_deadline(channel: Channel) -> PanelInCell:
    stop = PanelInCell(channel, {})
    stop.panel = Panel()
    stop.client = "a-frontend"
    stop.shown_at = time.monotonic() - 6
    stop.draw_deadline = time.monotonic() - 1  # this thread looks a second late
    return stop


def test_held_waiting_to_be_read_at_the_deadline_counts_as_in_time(drawing):
    channel = Channel({"type": "held"})
    stop = _past_its_deadline(channel)
    assert stop.read(None) is None
    assert channel.timeouts == [0.0]  # it looked without waiting
    assert stop.draw_deadline is None
    assert drawing.of("a-frontend") is config.PanelDrawn.DRAWN
    assert stop.read(None) is None  # and no fallback later: the panel has the stop


def test_nothing_by_the_deadline_answers_at_the_prompt_and_is_remembered(drawing):
    stop = _past_its_deadline(Channel())
    with pytest.raises(driver.FallBack, match=NOT_DRAWN):
        stop.read(None)
    assert drawing.of("a-frontend") is config.PanelDrawn.NOT_DRAWN


def test_before_the_deadline_it_waits_only_until_then(drawing):
    channel = Channel()
    stop = _past_its_deadline(channel)
    stop.draw_deadline = time.monotonic() + 0.2
    assert stop.read(None) is None  # timed out before the deadline: keep waiting
    assert channel.timeouts[0] <= 0.2
    assert drawing.of("a-frontend") is config.PanelDrawn.UNKNOWN
