"""Serving stops on the host: one debugger session at a time, none lost.

Callbacks can arrive concurrently (pmap and sharded jit run them on XLA
threads). Each waits its turn on one re-entrant lock; the count of waiting
stops is shown in the banner. A quit ends the stop that asked for it and
every stop already waiting, so one ``quit`` stops the whole computation.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from jaxdbg import breakpoint_state, quit_reporting, registry
from jaxdbg.errors import DebuggerQuit
from jaxdbg.frames import Frame
from jaxdbg.outputs import Resume
from jaxdbg.session import Session
from jaxdbg.stop_info import StopInfo

# Stops of the same multi-device computation can still arrive shortly after a
# quit (other devices reach their breakpoint later, on XLA threads); they quit
# too instead of reopening. Main-thread stops are a new computation.
QUIT_GRACE_SECONDS = 1.0

_turn = threading.RLock()
_state_lock = threading.Lock()
_waiting = 0
_quit_generation = 0
_last_quit_at = float("-inf")
_last_quit_site: object = None


def waiting_count() -> int:
    with _state_lock:
        return _waiting


def _arrive() -> int:
    global _waiting
    with _state_lock:
        _waiting += 1
        return _quit_generation


def _leave() -> None:
    global _waiting
    with _state_lock:
        _waiting -= 1


def _record_quit(site: object) -> None:
    global _quit_generation, _last_quit_at, _last_quit_site
    with _state_lock:
        _quit_generation += 1
        _last_quit_at = time.monotonic()
        _last_quit_site = site


def _quit_pending(generation: int, site: object) -> bool:
    with _state_lock:
        if generation != _quit_generation:
            return True
        on_worker = threading.current_thread() is not threading.main_thread()
        return (on_worker and site is not None and site is _last_quit_site
                and time.monotonic() - _last_quit_at < QUIT_GRACE_SECONDS)


def serve(frames: list[Frame], info: StopInfo, backend: str | None,
          options: dict[str, Any], site: object = None) -> Resume:
    """Open a session on these frames and return how it ended: continue or skip.

    Raises DebuggerQuit when the user quit (now or in a stop ahead of this one),
    and lets KeyboardInterrupt through, after which waiting stops quit too.
    """
    quit_reporting.install()
    generation = _arrive()
    try:
        _turn.acquire()
    finally:
        _leave()
    try:
        if _quit_pending(generation, site):
            raise DebuggerQuit()
        opens, info.hit = breakpoint_state.admit(info.breakpoint_id)
        if not opens:  # disabled, ignored or continued past while it waited
            return Resume.CONTINUE
        info.waiting = waiting_count
        session = Session(frames, info)
        debugger = registry.get_debugger(backend)
        try:
            debugger(session, **options)
        except KeyboardInterrupt:
            _record_quit(site)
            raise
        if session.resume is Resume.QUIT:
            _record_quit(site)
            raise DebuggerQuit()
        return session.resume or Resume.CONTINUE
    finally:
        _turn.release()
