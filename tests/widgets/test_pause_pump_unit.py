"""ipykernel 6's shell pump (internals/ipykernel_pump.py) and the wait that uses it,
without a kernel: a Ctrl-C lands in the main thread between any two bytecodes, also
while a wait acquires or releases the pump, and must never leave it pumping, which holds
every later execute_request back for ever (the kernel answers no cell again)."""

from __future__ import annotations

import queue
import threading
import time

import pytest

from jaxdbg.internals import ipykernel_pump
from jaxdbg_widgets import pause
from jaxdbg_widgets.pause import channel as channel_module


class _Kernel:
    """What the pump touches of an ipykernel 6 kernel; each handled message is counted."""

    def __init__(self) -> None:
        self.shell_handlers = {"execute_request": lambda *args: None}
        self.msg_queue: queue.Queue = queue.Queue()
        self._parent_ident = {"shell": b"ident"}
        self.iterations = 0

    def get_parent(self, channel: str = "shell") -> dict:
        return {"header": {"msg_id": "paused"}}

    def set_parent(self, ident, parent, channel: str = "shell") -> None:
        pass

    async def do_one_iteration(self) -> None:
        self.iterations += 1

    async def process_one(self, wait: bool = False) -> None:
        pass


def _pumping(kernel: _Kernel) -> bool:
    seen = kernel.iterations
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        if kernel.iterations > seen:
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def pump():
    kernel = _Kernel()
    pump = ipykernel_pump._ShellPump(kernel)
    yield pump, kernel
    pump._waiters.clear()
    threading.Event.set(pump._stop)  # (the base method: a test may have replaced it)


def test_a_release_by_a_thread_that_never_acquired_leaves_the_waiting_thread_its_pump(pump):
    pump, kernel = pump
    pump.acquire()
    assert _pumping(kernel)
    stray = threading.Thread(target=pump.release)  # its acquire was cut short by the Ctrl-C
    stray.start()
    stray.join()
    assert _pumping(kernel), "the main thread still waits: its pump must go on"
    pump.release()
    assert pump._idle.wait(2) and not _pumping(kernel)


def test_a_release_cut_short_before_it_stops_the_pause_still_ends_the_pumping(pump):
    pump, kernel = pump
    pump.acquire()
    pump.acquire()  # taken twice (a wait retried after a Ctrl-C): one release ends it
    assert _pumping(kernel)

    class CtrlCBeforeSet(threading.Event):
        def set(self) -> None:
            raise KeyboardInterrupt

    pump._stop = CtrlCBeforeSet()  # the running pause keeps its own, never set
    with pytest.raises(KeyboardInterrupt):
        pump.release()
    assert pump._idle.wait(2), "no waiter is left: the pump must stop by itself"


def test_a_ctrl_c_inside_the_pumps_acquire_still_releases_it(monkeypatch):
    calls = []

    class Pump:
        error = None

        def acquire(self, *args, **kwargs) -> None:
            calls.append("acquire")
            raise KeyboardInterrupt  # landed once the pump had counted this waiter

        def release(self) -> None:
            calls.append("release")

    installed_before = pause.installed()
    waiting = pause.PauseChannel(kernel=None)
    try:
        monkeypatch.setattr(waiting, "_choose", lambda waiter: channel_module.Mechanism.PUMP)
        monkeypatch.setattr(ipykernel_pump, "shell_pump", lambda kernel: Pump())
        with pytest.raises(KeyboardInterrupt):
            waiting.wait(timeout=0.1)
    finally:
        waiting.close()
        if not installed_before:
            pause.uninstall()
    assert calls == ["acquire", "release"]
