"""Print rows of every process at the debug host, in order per process.

A process that is not the host writes each ``jaxdbg.print`` / routed ``jax.debug.print``
row to ``prints/<process>/<sequence>`` (signed, as every message) instead of its own
stdout, once the host serves the job; the host's watcher hands them, by process and
sequence, to what :func:`receive_with` installed (:mod:`jaxdbg.capture.prints` installs
its delivery: the notebook's print log, or the host's stdout), then deletes them.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable

from jaxdbg.job import membership as job_mod
from jaxdbg.job import message_signing, remote_stops

_lock = threading.Lock()
_sequence = itertools.count()
_host_watching: dict[int, float | bool] = {}  # id(job) -> True, or when it was last asked
RECHECK_S = 1.0  # how often a process asks again whether the host serves the job
_receive: Callable[[dict[str, Any]], None] | None = None


def receive_with(receive: Callable[[dict[str, Any]], None]) -> None:
    """Rows from other processes go to ``receive(row message)`` at the host."""
    global _receive
    _receive = receive


def forward(job: job_mod.Job, row: dict[str, Any]) -> bool:
    """Send a row to the debug host; False when this process prints it itself (it is
    the host, or no host serves the job)."""
    if not job.signed or job.is_host():
        return False
    host = job.host()
    with _lock:
        known = _host_watching.get(id(job))
        if known is not True:
            if known is not None and time.monotonic() - known < RECHECK_S:
                return False
            # The first row waits for the host as a stop does (both processes may be
            # tracing at once); later ones only look.
            watching = (
                remote_stops.host_ready(job, host) if known is None else job.try_read(f"watching/{host}") is not None
            )
            _host_watching[id(job)] = True if watching else time.monotonic()
            if not watching:
                return False
        # The lock also keeps the writes in sequence order.
        job.write(f"prints/{job.process}/{next(_sequence):012d}", row)
    return True


_delivering = threading.Lock()  # the watcher and the host's exit both deliver: once each row


def deliver_arrived(job: job_mod.Job) -> None:
    """At the host: hand over the rows that arrived, in order per process."""
    with _delivering:
        try:
            entries = job.store.dir_get(job.namespace + "prints/")
        except Exception:
            return
        for key, text in sorted(entries, key=lambda e: _order(e[0])):
            try:
                row = job.opened(key, text)
            except message_signing.Refused:
                continue
            job.store.delete(key)
            if _receive is not None:
                _receive(row)


def _order(key: str) -> tuple[int, str]:
    """``.../prints/<process>/<sequence>`` as (process, sequence)."""
    process, sequence = key.rsplit("/", 2)[-2:]
    return (int(process) if process.isdigit() else -1, sequence)
