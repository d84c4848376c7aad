"""After a quit at a job's debug host: which threads wait for good (a process with one
ends itself; tests/distributed/ has the real job)."""

from __future__ import annotations

import os
import queue
import threading
import time

from jaxdbg.job import quit_watch


class _Job:
    leaving = threading.Event()  # never set here: the job goes on


def _in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    time.sleep(0.1)  # it has reached its call
    return thread


def test_a_thread_that_sits_in_one_call_of_the_programs_own_code_waits_for_good():
    read_end, write_end = os.pipe()

    def blocked_in_own_code():  # as a thread waits on a computation, in one C call
        os.read(read_end, 1)

    thread = _in_thread(blocked_in_own_code)
    try:
        assert quit_watch._waits_for_good(0.3, _Job())
    finally:
        os.write(write_end, b"x")
        thread.join(5)
        os.close(read_end)
        os.close(write_end)


def test_waits_in_the_standard_library_do_not_count():
    q: queue.Queue = queue.Queue()
    thread = _in_thread(q.get)  # a worker's idle wait, as a kernel's event loop waits
    try:
        assert not quit_watch._waits_for_good(0.3, _Job())
    finally:
        q.put(None)
        thread.join(5)


def test_a_new_execution_with_a_breakpoint_means_the_program_goes_on():
    read_end, write_end = os.pipe()

    def blocked_in_own_code():
        os.read(read_end, 1)

    thread = _in_thread(blocked_in_own_code)
    ticker = threading.Timer(0.1, quit_watch.entered)  # an execution begins meanwhile
    ticker.start()
    try:
        assert not quit_watch._waits_for_good(0.3, _Job())
    finally:
        os.write(write_end, b"x")
        ticker.cancel()
        thread.join(5)
        os.close(read_end)
        os.close(write_end)
