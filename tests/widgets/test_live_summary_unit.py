"""The ended panel's summary redraws: only when the watches took values, and once at the end."""

from __future__ import annotations

import threading

from jaxdbg_widgets.panel.live_summary import LiveSummary


def test_redraws_when_values_were_taken_and_once_more_at_the_end():
    recorded = [0]
    drawn: list[int] = []
    redrawn = threading.Event()

    def redraw():
        drawn.append(recorded[0])
        redrawn.set()

    live = LiveSummary(lambda: recorded[0], redraw, interval=0.01).start()
    recorded[0] = 3  # values taken by passed stops
    assert redrawn.wait(30)
    assert drawn == [3]
    live.stop()
    assert drawn == [3, 3]  # the last drawing, as it reads at the end


def test_no_redraw_while_nothing_was_recorded():
    drawn: list[int] = []
    live = LiveSummary(lambda: 5, lambda: drawn.append(1), interval=0.01).start()
    threading.Event().wait(0.2)  # a few intervals pass with the count unchanged
    live.stop()
    assert drawn == [1]  # only the end's
