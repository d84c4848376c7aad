"""The byte count the passed-stop tests assert on (support/host_bytes.py) loses nothing
when the devices of one program call back at once, each on a thread of its own."""

from __future__ import annotations

import sys
import threading

import numpy as np

from support.host_bytes import HostBytes

THREADS, CALLS = 8, 2000


def test_callbacks_on_many_threads_at_once_are_all_counted(monkeypatch):
    host = HostBytes(monkeypatch)
    callback = host.counted(lambda *args: None)
    arrays = [np.zeros(i + 1, np.float32) for i in range(4)]  # 40 bytes a call
    start = threading.Barrier(THREADS)

    def device():
        start.wait()
        for _ in range(CALLS):
            callback(*arrays)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can: a lost count shows
    try:
        threads = [threading.Thread(target=device) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert host.calls == THREADS * CALLS
    assert host.total == THREADS * CALLS * 40
