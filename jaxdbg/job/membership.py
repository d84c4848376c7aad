"""The ``jax.distributed`` job this process belongs to, as the debugger sees it.

A job of several processes has one *debug host*: the process whose backend (prompt,
script, panel) serves every process's stops. It is process ``$JAXDBG_DEBUG_PROCESS``
(0 by default), or the process that called ``jaxdbg.distributed.serve_here()``.
Stops travel to it only when the job's secret is set (``$JAXDBG_DEBUG_SECRET``, the
same in every process): every message is signed with it
(:mod:`jaxdbg.job.message_signing`). Without it each process serves its own stops,
as a single process does, and says once how to turn the debug host on.

Keys live under ``jaxdbg/<job tag>/``: ``host`` (who serves), ``watching`` (the host is
ready), ``left`` (the host has left the job: its program ended), ``stops/<stop>`` (a
stop waiting to be served) and ``<stop>/...`` (its commands and their results),
deleted when the stop ends.
"""

from __future__ import annotations

import dataclasses
import threading
import time

from jaxdbg import config
from jaxdbg.internals import coordination
from jaxdbg.job import message_signing
from jaxdbg.runtime import notices

# How long one blocking get waits before the waiter looks around (is the other side
# still alive? did the job quit?); every wait on the store is made of such slices.
WAIT_SLICE_S = 0.5
# Each process of a job with a debug host writes a heartbeat this often; one that has
# not moved for DEAD_AFTER_S is a process that died (killed, crashed, out of memory).
HEARTBEAT_S = 0.5
HOST_RECHECK_S = 1.0
DEAD_AFTER_S = 5.0


_lock = threading.Lock()


def say_once(key: str, text: str) -> None:
    """A notice said once per process (a refused message, remote serving off)."""
    notices.notice_once(f"job: {key}", text)


@dataclasses.dataclass
class Job:
    store: coordination.Store
    secret: bytes | None
    namespace: str  # "jaxdbg/<tag>/"
    _beats: dict[int, tuple[str | None, float]] = dataclasses.field(default_factory=dict)
    _heartbeat: threading.Thread | None = None
    _host: tuple[int, float] | None = None  # (debug host, when it was read)
    #: Set at exit: jaxdbg's threads stop calling the service before JAX shuts it down
    #: (a thread inside a call of a client being destroyed aborts the process).
    leaving: threading.Event = dataclasses.field(default_factory=threading.Event)

    @property
    def process(self) -> int:
        return self.store.process_index

    @property
    def count(self) -> int:
        return self.store.process_count

    def label(self, process: int | None = None) -> str:
        """``process 1/4``: the index from 0, as ``jax.process_index()`` counts."""
        return f"process {self.process if process is None else process}/{self.count}"

    @property
    def signed(self) -> bool:
        """Whether stops can travel to the debug host (the secret is set)."""
        return self.secret is not None

    # -- signed messages --------------------------------------------------------
    def write(self, name: str, message: dict) -> None:
        assert self.secret is not None
        key = self.namespace + name
        self.store.set(key, message_signing.sign(self.secret, key, message))

    def read(self, name: str, timeout_s: float) -> dict:
        """The signed message at ``name``; raises coordination.Timeout, or
        message_signing.Refused (the forged value is deleted and reported once)."""
        key = self.namespace + name
        return self.opened(key, self.store.get(key, timeout_s))

    def try_read(self, name: str) -> dict | None:
        key = self.namespace + name
        text = self.store.try_get(key)
        if text is None:
            return None
        try:
            return self.opened(key, text)
        except message_signing.Refused:
            return None

    def opened(self, key: str, text: str) -> dict:
        assert self.secret is not None
        try:
            return message_signing.open_signed(self.secret, key, text)
        except message_signing.Refused as refused:
            try:
                self.store.delete(key)
            except Exception:
                pass
            say_once(
                f"refused {key.rsplit('/', 1)[0]}",
                f"refused a message in the job's store that is not signed with "
                f"${config.DEBUG_SECRET.name} ({refused}); it was ignored and deleted",
            )
            raise

    def new_messages(self, directory: str, seen: set[str]) -> list[dict] | None:
        """The signed messages under ``directory`` (``stops/``) whose keys are not in
        ``seen`` (added to it; refused ones are skipped), or None when the service is
        gone (the job is over)."""
        try:
            entries = self.store.dir_get(self.namespace + directory)
        except Exception:
            return None
        fresh = []
        for key, text in entries:
            if key in seen:
                continue
            seen.add(key)
            try:
                fresh.append(self.opened(key, text))
            except message_signing.Refused:
                continue
        return fresh

    def delete(self, name: str) -> None:
        try:
            self.store.delete(self.namespace + name)
        except Exception:  # the service may already be gone at exit
            pass

    # -- who serves -------------------------------------------------------------
    def host(self) -> int:
        """The debug host: the last ``serve_here()``, else ``$JAXDBG_DEBUG_PROCESS``
        (asked of the store at most every HOST_RECHECK_S: every print row asks)."""
        known = self._host
        if known is not None and time.monotonic() - known[1] < HOST_RECHECK_S:
            return known[0]
        host = self._read_host()
        self._host = (host, time.monotonic())
        return host

    def forget_host(self) -> None:
        self._host = None

    def _read_host(self) -> int:
        chosen = self.try_read("host") if self.signed else None
        if chosen is not None and isinstance(chosen.get("process"), int):
            return int(chosen["process"])
        try:
            return int(config.DEBUG_PROCESS.get().strip() or 0)
        except ValueError:
            say_once(
                "bad host",
                f"${config.DEBUG_PROCESS.name} must be a process index, not "
                f"{config.DEBUG_PROCESS.get()!r}; process 0 is the debug host",
            )
            return 0

    def is_host(self) -> bool:
        return self.host() == self.process

    def has_left(self, process: int) -> bool:
        """Whether ``process`` served the job as its debug host and has left it (its
        program ended; it writes ``left/<process>`` on its way out)."""
        try:
            return self.signed and self.try_read(f"left/{process}") is not None
        except Exception:  # the service itself is gone: alive() says so
            return False

    def alive(self, process: int) -> bool:
        """Whether ``process`` is still running its program: its heartbeat in the store
        moved within DEAD_AFTER_S and it has not reached its exit (where it says ``done``).

        Not ``get_live_nodes``: the service answers that only once every live process
        has asked too (a barrier), so one process cannot watch another with it.
        """
        try:
            if self.signed and (
                self.try_read(f"done/{process}") is not None or self.try_read(f"left/{process}") is not None
            ):
                return False
            beat = self.store.try_get(f"{self.namespace}beat/{process}")
        except Exception:  # the service itself is gone: so is everyone else's link
            return False
        now = time.monotonic()
        with _lock:
            last = self._beats.get(process)
            if last is None or last[0] != beat:
                self._beats[process] = (beat, now)
                return True
            return now - last[1] < DEAD_AFTER_S

    def start_heartbeat(self) -> None:
        """Say every HEARTBEAT_S that this process runs (a daemon thread, once)."""

        def beat() -> None:
            count = 0
            while not self.leaving.is_set():
                count += 1
                try:
                    self.store.set(f"{self.namespace}beat/{self.process}", str(count))
                except Exception:  # the service is gone
                    return
                self.leaving.wait(HEARTBEAT_S)

        with _lock:
            if self._heartbeat is not None:
                return
            self._heartbeat = threading.Thread(target=beat, name="jaxdbg-heartbeat", daemon=True)
        self._heartbeat.start()

    def leave(self) -> None:
        """At exit: stop the heartbeat (and the host's watcher) and wait for them."""
        self.leaving.set()
        if self._heartbeat is not None:
            self._heartbeat.join(2 * HEARTBEAT_S)


_job: Job | None = None
_job_key: tuple | None = None


def current() -> Job | None:
    """This process's job, or None outside ``jax.distributed`` (or with one process)."""
    global _job, _job_key
    store = coordination.store()
    if store is None:
        return None
    secret_text = config.DEBUG_SECRET.get()
    key = (id(store.client), secret_text)
    with _lock:
        if _job is None or _job_key != key:
            secret = secret_text.encode() if secret_text else None
            tag = message_signing.job_tag(secret or b"", store.coordinator) if secret else "open"
            _job, _job_key = Job(store, secret, f"jaxdbg/{tag}/"), key
        return _job


def remote_serving_off_notice(job: Job) -> None:
    """Said once per process when a job's stops cannot travel to its debug host."""
    say_once(
        "unsigned",
        f"{job.label()}: serving this process's stops here, since "
        f"${config.DEBUG_SECRET.name} is not set; set it to the same secret in "
        "every process of the job to serve all stops at the debug host "
        f"(process {job.host()}, or ${config.DEBUG_PROCESS.name})",
    )


def describe() -> tuple[str, str] | None:
    """``("process 0 of 4, debug host", "running: 0, 1, 3")`` for ``%jaxdbg``; None
    outside a job."""
    job = current()
    if job is None:
        return None
    host = job.host()
    if not job.signed:
        return (
            f"process {job.process} of {job.count}",
            f"each process serves its own stops (${config.DEBUG_SECRET.name} is not set)",
        )
    role = "debug host" if host == job.process else f"debug host: process {host}"
    if host != job.process and job.has_left(host):
        role += ", which has left the job"
    running = [p for p in range(job.count) if p == job.process or job.alive(p)]
    return f"process {job.process} of {job.count}, {role}", "running: " + ", ".join(map(str, running))
