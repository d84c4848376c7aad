"""The debug host's side: watch the job's store for other processes' stops and serve
them here, in the same queue as this process's own (:mod:`jaxdbg.engine.stop_serving`).

While it serves, this process's streams stay routed (:func:`command_output.hold_streams`):
the program's own prints go on while another process's stop is served here, and each
of their lines comes out whole instead of cut by the stop's banner or prompt.

One daemon thread reads the ``stops/`` directory every POLL_S. Each new stop becomes a
:class:`~jaxdbg.job.remote_session.RemoteSession`, numbered by its call site on the
host's breakpoint state (so ``disable``, ``ignore`` and ``continue all`` typed here
decide for every process), queued in (process, device) order, and served on a thread
of its own through this process's backend. When it ends the owner is told how.

An interrupt of the host (Ctrl-C, or the kernel's interrupt, also while the kernel is
idle between cells) ends the stop it shows and every other stop waiting here: each
owner ends its stop with DebuggerQuit and one line saying the host was interrupted.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

from jaxdbg.engine import breakpoint_state, command_output, registry, stop_serving, watches
from jaxdbg.engine.outputs import Resume
from jaxdbg.job import host_passes, quit_watch, remote_prints, remote_stops
from jaxdbg.job import membership as job_mod
from jaxdbg.job.remote_session import RemoteSession
from jaxdbg.runtime import interrupts
from jaxdbg.runtime.errors import DebuggerQuit

POLL_S = 0.05
# Past this long at exit, the host says which processes it still waits for.
EXIT_NOTICE_S = 2.0

_lock = threading.Lock()
_watching: dict[int, threading.Thread] = {}  # id(store client) -> its watcher
_serving: set[threading.Thread] = set()  # threads serving another process's stop
_tickets: dict[threading.Thread, Any] = {}  # each serving thread's place in the queue
_release_streams: dict[int, Any] = {}  # id(store client) -> ends the host's stream routing
_exit_registered: set[int] = set()
_counted: set[str] = set()  # the other processes' counts of passed stops read already


def join_job() -> bool:
    """At trace time: the debug host starts watching for other processes' stops (and
    will wait for them at exit); another process will say at exit that it is done.
    Whether this process serves other processes' stops."""
    job = job_mod.current()
    if job is None or not job.signed:
        return False
    _at_exit(job, _leave)  # first, so that it runs last
    job.start_heartbeat()
    if not job.is_host():
        _at_exit(job, _say_done)
        quit_watch.watch(job)  # a quit at the host must not leave this process in a collective
        host_passes.watch(job)  # the host's answers decide this process's next stops here
        return False
    return _watch_as_host(job)


def _watch_as_host(job: job_mod.Job) -> bool:
    with _lock:
        key = id(job.store.client)
        if key in _watching and _watching[key].is_alive():
            return True
        if key not in _release_streams:
            _release_streams[key] = command_output.hold_streams()
        job.write(f"watching/{job.process}", {"process": job.process})
        _prepare_for_remote_stops()
        thread = threading.Thread(target=_watch, args=(job,), name="jaxdbg-debug-host", daemon=True)
        _watching[key] = thread
    thread.start()
    _at_exit(job, _wait_for_the_job)
    # A `continue all` of this script lasts until the other processes' stops are served.
    breakpoint_state.finish_before_the_exit_report(lambda: _wait_for_the_job(job))
    return True


def _prepare_for_remote_stops() -> None:
    """From the main thread, before other processes' stops come (they are served on
    threads of their own, perhaps while a notebook kernel is idle): the backend's own
    preparation (the panel's interrupt watch), and a kernel's interrupt heard between
    cells too, so that it can end a stop served then."""
    if threading.current_thread() is not threading.main_thread():
        return
    interrupts.install()
    interrupts.hear_between_cells()
    try:
        registry.check_options(None, {})  # prepares the backend stops here will choose
    except Exception:  # no backend fits yet; each stop says so when it comes
        pass


def _at_exit(job: job_mod.Job, handler: Any) -> None:
    with _lock:
        if id(handler) in _exit_registered:
            return
        _exit_registered.add(id(handler))
    atexit.register(handler, job)


def _leave(job: job_mod.Job) -> None:
    with _lock:
        watcher = _watching.get(id(job.store.client))
    if watcher is not None:  # a stop that comes later ends at once, saying so in one line
        try:
            job.write(f"left/{job.process}", {"process": job.process})
        except Exception:  # the service is gone already: so is the rest of the job
            pass
        job.delete(f"watching/{job.process}")
    job.leave()
    if watcher is not None:
        watcher.join(1.0)
    _stop_routing_streams(job)


def _stop_routing_streams(job: job_mod.Job) -> None:
    """The host serves no more: its streams are its own again (every line written)."""
    with _lock:
        release = _release_streams.pop(id(job.store.client), None)
    if release is not None:
        release()


def _say_done(job: job_mod.Job) -> None:
    host_passes.send_counts(job)  # before the host stops waiting for this process
    try:
        job.write(f"done/{job.process}", {"process": job.process})
    except Exception:
        pass


def _wait_for_the_job(job: job_mod.Job) -> None:
    """At the host's exit: serve the stops of processes still running, and only then
    let the coordination service (which lives in process 0) go."""
    started, said = time.monotonic(), False
    while True:
        with _lock:
            serving = any(t.is_alive() for t in _serving)
        running = [p for p in range(job.count) if p != job.process and job.alive(p)]
        if not serving and not running:
            remote_prints.deliver_arrived(job)  # the last rows of processes that are done
            host_passes.collect(job, _counted)  # and the stops they passed on its word
            return
        if running and not said and time.monotonic() - started > EXIT_NOTICE_S:
            said = True
            job_mod.say_once(
                "exit wait",
                f"{job.label()} (debug host) waits for "
                f"{', '.join(job.label(p) for p in running)} to finish, "
                "serving their stops here",
            )
        time.sleep(POLL_S * 2)


def serve_here(job: job_mod.Job) -> None:
    """Make this process the job's debug host (``jaxdbg.distributed.serve_here()``)."""
    _at_exit(job, _leave)
    job.start_heartbeat()
    job.write("host", {"process": job.process})
    job.forget_host()
    _watch_as_host(job)


def _watch(job: job_mod.Job) -> None:
    seen: set[str] = set()
    version = None
    while not job.leaving.is_set():
        fresh = job.new_messages("stops/", seen)
        if fresh is None:  # the service is gone: the job is over
            return
        fresh.sort(key=lambda a: (int(a["process"]), a["info"].get("device") or 0))
        for announcement in fresh:
            _start_serving(job, announcement)
        remote_prints.deliver_arrived(job)
        try:
            version = host_passes.publish(job, version)
            host_passes.collect(job, _counted)
        except Exception:  # the service is gone: the next look says so
            pass
        if not job.is_host():  # another process called serve_here(): it serves from now on
            job.delete(f"watching/{job.process}")
            with _lock:
                _watching.pop(id(job.store.client), None)
            _stop_routing_streams(job)
            return
        job.leaving.wait(POLL_S)


def _start_serving(job: job_mod.Job, announcement: dict[str, Any]) -> None:
    info = remote_stops.info_from_message(announcement["info"])
    location = announcement.get("breakpoint")
    if location:
        info.breakpoint_id = breakpoint_state.register(str(location[0]), int(location[1]), str(location[2]))
    site = stop_serving.job_site(info.breakpoint_id, None)
    ticket = stop_serving.ticket_for(
        site, info, announcement.get("devices"), bool(announcement.get("every_device")), queue=True
    )
    session = RemoteSession(job, announcement, info)
    thread = threading.Thread(
        target=_serve, args=(ticket, session, info, site), name=f"jaxdbg-stop-{session.stop}", daemon=True
    )
    with _lock:
        for done in [t for t in _serving if not t.is_alive()]:
            _serving.discard(done)
            _tickets.pop(done, None)
        _serving.add(thread)
        _tickets[thread] = ticket
    thread.start()


def _serve(ticket: Any, session: RemoteSession, info: Any, site: object) -> None:
    how, interrupted = Resume.CONTINUE, 0
    try:
        # The host's backend, as its own stops choose it ($JAXDBG_BACKEND, or the best here).
        how = stop_serving.serve_session(
            ticket,
            lambda: session,
            info,
            None,
            {},
            site,
            watch_values=session.watch_values,
            decide=lambda: _checks_open(session, info),
        )
    except DebuggerQuit:
        how = Resume.QUIT  # quit here or at a stop of its round
    except KeyboardInterrupt:
        # The host was interrupted; the stops one interrupt ends share its number.
        how, interrupted = Resume.QUIT, interrupts.interrupts_taken() + 1
        _release_waiting_stops()
    except BaseException as e:  # a backend that failed must not leave the owner waiting
        job_mod.say_once("host failed", f"serving {info.process}'s stop failed ({e!r}); it continues")
    finally:
        if session.gone is not None:
            job_mod.say_once(f"gone {session.owner}", session.gone)
        if session.finished and session.resume is not None and how is not Resume.QUIT:
            how = session.resume
        word = None if how is Resume.QUIT else host_passes.grant(session.job, info.breakpoint_id)
        session.finish_remotely(how, interrupted=interrupted, passes=word)


def _checks_open(session: RemoteSession, info: Any) -> bool:
    """Whether the host's condition and log template of the stop's breakpoint let it
    open, at its turn: its owner evaluates them, where the values are (and writes a
    logpoint's line). A stop they pass is a hit here, and its watches take their values,
    as for a stop of this process (breakpoint_checks.screen)."""
    number = info.breakpoint_id
    if number is None or not breakpoint_state.has_checks(number) or not breakpoint_state.is_enabled(number):
        return True  # admit decides
    condition, template = breakpoint_state.checks(number)
    if session.screen(condition, template) and not template:
        return True
    info.hit = breakpoint_state.count_hit(number)
    watches.LIVE.record_with(number, info.hit, session.watch_values)
    return False


def _release_waiting_stops() -> None:
    """The host was interrupted: the other processes' stops waiting here end too
    (their owners would otherwise stay paused behind the one the interrupt ended)."""
    with _lock:
        waiting = [ticket for thread, ticket in _tickets.items() if thread.is_alive()]
    stop_serving.end_waiting(waiting, KeyboardInterrupt)
