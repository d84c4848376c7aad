"""The pause package's parts without a kernel: the interrupt watch and the paused cell."""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from jaxdbg.runtime.sigint_watch import SigintWatch
from jaxdbg_widgets import pause
from jaxdbg_widgets.pause import cells


def test_the_package_exports_what_the_backend_and_the_extension_use():
    for name in (
        "PauseChannel",
        "CLOSED",
        "HIDDEN",
        "UNRESPONSIVE",
        "QueuedCell",
        "install",
        "installed",
        "uninstall",
        "interrupt_count",
    ):
        assert hasattr(pause, name), name
    from jaxdbg_widgets.pause import channel

    # Importers that know the channel module find its results there too.
    assert channel.CLOSED is pause.CLOSED and channel.QueuedCell is pause.QueuedCell


@pytest.mark.skipif(not hasattr(signal, "raise_signal"), reason="needs signal.raise_signal")
def test_the_interrupt_watch_counts_a_sigint_and_gives_the_wakeup_fd_back():
    assert threading.current_thread() is threading.main_thread()
    theirs_reader, theirs = socket.socketpair()
    theirs.setblocking(False)
    handled = []
    old_handler = signal.signal(signal.SIGINT, lambda *_: handled.append(1))
    old_fd = signal.set_wakeup_fd(theirs.fileno(), warn_on_full_buffer=False)
    watch = SigintWatch()
    try:
        assert watch.install()
        signal.raise_signal(signal.SIGINT)
        deadline = time.monotonic() + 5
        while watch.count == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert watch.count == 1
        assert handled == [1]  # the Python handler still ran
        theirs_reader.settimeout(5)
        assert int(signal.SIGINT) in theirs_reader.recv(64)  # theirs was kept fed
        watch.uninstall()
        assert not watch.installed
        assert signal.set_wakeup_fd(theirs.fileno(), warn_on_full_buffer=False) == theirs.fileno()
    finally:
        watch.uninstall()
        signal.set_wakeup_fd(old_fd, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, old_handler)
        theirs_reader.close()
        theirs.close()


def test_a_paused_cell_pins_each_thread_once_and_ends_once(monkeypatch):
    calls = []
    monkeypatch.setattr(cells.ipykernel_parents, "cell_parent", lambda kernel: ("ident", {"header": {"msg_id": "m"}}))
    monkeypatch.setattr(
        cells.ipykernel_busy, "keep_cell_busy", lambda kernel, parent: lambda: calls.append("idle again")
    )
    monkeypatch.setattr(
        cells.ipykernel_parents,
        "pin_thread_parent",
        lambda kernel, ident, parent: (calls.append(("pin", ident)), lambda: calls.append("unpin"))[1],
    )
    monkeypatch.setattr(
        cells.ipykernel_queued_cells,
        "watch_queued_cells",
        lambda kernel, on_cell: (on_cell({"header": {"msg_id": "q"}}), lambda: calls.append("unwatch"))[1],
    )
    cell = cells.PausedCell(kernel=object())
    assert cell.pin() is not None
    assert cell.pin() is None  # this thread is pinned already
    queued = []
    cell.report_queued(queued.append)
    cell.report_queued(queued.append)  # once
    assert [type(q) for q in queued] == [cells.QueuedCell] and repr(queued[0]) == "QueuedCell('q')"
    cell.unpin()
    cell.unpin()
    cell.end()
    cell.end()
    assert calls == [("pin", "ident"), "unpin", "idle again", "unwatch"]


def test_without_a_kernel_a_paused_cell_does_nothing():
    cell = cells.PausedCell(kernel=None)
    assert cell.pin() is None and cell.parent == {}
    cell.report_queued(lambda q: pytest.fail("no kernel, no queued cells"))
    cell.end()
