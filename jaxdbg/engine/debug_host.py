"""The debug host's side: watch the job's store for other processes' stops and serve
them here, in the same queue as this process's own (:mod:`jaxdbg.engine.stop_serving`).

One daemon thread reads the ``stops/`` directory every POLL_S. Each new stop becomes a
:class:`~jaxdbg.engine.remote_session.RemoteSession`, numbered by its call site on the
host's breakpoint state (so ``disable``, ``ignore`` and ``continue all`` typed here
decide for every process), queued in (process, device) order, and served on a thread
of its own through this process's backend. When it ends the owner is told how.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from jaxdbg.engine import breakpoint_state, message_signing, stop_serving
from jaxdbg.engine import job as job_mod
from jaxdbg.engine.errors import DebuggerQuit
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.remote_session import RemoteSession
from jaxdbg.engine import remote_stops

POLL_S = 0.05

_lock = threading.Lock()
_watching: dict[int, threading.Thread] = {}  # id(store client) -> its watcher
_options: dict[str, Any] = {"backend": None, "options": {}}


def watch_if_host(backend: str | None = None, options: dict[str, Any] | None = None) -> bool:
    """Start serving other processes' stops here when this process is the job's debug
    host and the job's secret is set; whether it serves them."""
    job = job_mod.current()
    if job is None or not job.signed or not job.is_host():
        return False
    if backend is not None or options:
        _options.update(backend=backend, options=dict(options or {}))
    with _lock:
        key = id(job.store.client)
        if key in _watching and _watching[key].is_alive():
            return True
        job.write(f"watching/{job.process}", {"process": job.process})
        thread = threading.Thread(target=_watch, args=(job,), name="jaxdbg-debug-host", daemon=True)
        _watching[key] = thread
    thread.start()
    return True


def serve_here(job: job_mod.Job) -> None:
    """Make this process the job's debug host (``jaxdbg.distributed.serve_here()``)."""
    job.write("host", {"process": job.process})
    watch_if_host()


def _watch(job: job_mod.Job) -> None:
    seen: set[str] = set()
    while True:
        try:
            entries = job.store.dir_get(job.namespace + "stops/")
        except Exception:  # the service is gone: the job is over
            return
        fresh = []
        for key, text in entries:
            if key in seen:
                continue
            seen.add(key)
            try:
                fresh.append(job.opened(key, text))
            except message_signing.Refused:
                continue
        fresh.sort(key=lambda a: (int(a["process"]), a["info"].get("device") or 0))
        for announcement in fresh:
            _start_serving(job, announcement)
        if not job.is_host():  # another process called serve_here(): it serves from now on
            job.delete(f"watching/{job.process}")
            with _lock:
                _watching.pop(id(job.store.client), None)
            return
        time.sleep(POLL_S)


def _start_serving(job: job_mod.Job, announcement: dict[str, Any]) -> None:
    info = remote_stops.info_from_message(announcement["info"])
    location = announcement.get("breakpoint")
    if location:
        info.breakpoint_id = breakpoint_state.register(str(location[0]), int(location[1]),
                                                       str(location[2]))
    site = stop_serving.job_site(info.breakpoint_id, None)
    ticket = stop_serving.ticket_for(site, info, announcement.get("devices"),
                                     bool(announcement.get("every_device")), queue=True)
    session = RemoteSession(job, announcement, info)
    threading.Thread(target=_serve, args=(ticket, session, info, site),
                     name=f"jaxdbg-stop-{session.stop}", daemon=True).start()


def _serve(ticket: Any, session: RemoteSession, info: Any, site: object) -> None:
    how = Resume.CONTINUE
    try:
        how = stop_serving.serve_session(ticket, lambda: session, info, _options["backend"],
                                         dict(_options["options"]), site)
    except (DebuggerQuit, KeyboardInterrupt):
        how = Resume.QUIT  # quit here or at a stop of its round, or the host interrupted
    except BaseException as e:  # a backend that failed must not leave the owner waiting
        job_mod.say_once("host failed", f"serving {info.process}'s stop failed ({e!r}); it continues")
    finally:
        if session.gone is not None:
            job_mod.say_once(f"gone {session.owner}", session.gone)
        if session.finished and session.resume is not None and how is not Resume.QUIT:
            how = session.resume
        session.finish_remotely(how)
