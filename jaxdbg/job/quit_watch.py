"""After a quit at a job's debug host, no process of the job is left hanging in a collective.

A quit ends the stops of its round on every process with DebuggerQuit (their
callbacks raise, and each such process says so in one line). A process without a stop
in that round may already be past its own callbacks, waiting inside XLA in a collective
(``psum``, an all-gather) for the devices of the processes that quit: those devices
ended their programs when their callbacks raised, so the wait never ends, and nothing
in Python can interrupt it. So:

- the host writes ``quit/<n>`` to the job's store when a stop served there ends with
  quit (:func:`announce`);
- every other process watches for it (:func:`watch`, a daemon thread). When one comes,
  it notes each thread that sits in its own code or in JAX's (not in the standard
  library's or another package's waits, not in jaxdbg's threads). A thread still in the
  very same call (the same frame, at the same instruction) QUIT_GRACE_S later, with no
  execution of a computation with a breakpoint begun meanwhile (:func:`entered`, asked
  by every such execution in every process), waits on what can no longer end. The
  process then says so in one line, tells the host it is done, and ends (exit status
  1), as a script ends whose computation a quit stopped. A process whose computation
  ends, or goes on, by itself is left alone; one whose program sleeps through the
  grace period after a quit ends too.
"""

from __future__ import annotations

import itertools
import os
import secrets
import sys
import sysconfig
import threading
from typing import Callable

from jaxdbg.job import membership as job_mod
from jaxdbg.job import remote_stops
from jaxdbg.runtime import quit_reporting

POLL_S = 0.5
# How long a thread may stay in the one call into JAX it was in when the quit came
# before it counts as waiting for the devices that quit. A quit's round ends on every
# process within a poll or two; a computation ending on its own ends within this.
QUIT_GRACE_S = 3.0
SHUTDOWN_S = 30.0  # how long the process ended after a quit waits for JAX's shutdown of the job
LOOKS = 3  # grace periods looked at after a quit (a thread may be between two calls at one)

_sequence = itertools.count(1)
_lock = threading.Lock()
_watching: set[int] = set()  # id(job) of the jobs watched here
_executions = 0  # executions of a computation with a breakpoint begun in this process
_OTHER_CODE: tuple[str, ...] = ()  # the standard library's, the packages' and jaxdbg's folders
_JAX_DIR = ""


def announce(job: job_mod.Job) -> None:
    """At the debug host: a stop served here ended with quit."""
    try:
        job.write(f"quit/{job.process}-{next(_sequence)}-{secrets.token_hex(4)}", {"process": job.process})
    except Exception:  # the service is gone: so is the rest of the job
        pass


def watch(job: job_mod.Job, end: Callable[[str], None] | None = None) -> None:
    """In a process that is not the debug host: watch for the host's quits (once per job).
    ``end(line)`` ends the process (the tests' stand-in for :func:`_end_process`)."""
    with _lock:
        if id(job) in _watching:
            return
        _watching.add(id(job))
    threading.Thread(target=_watch, args=(job, end or _end_process), name="jaxdbg-quit-watch", daemon=True).start()


def _watch(job: job_mod.Job, end: Callable[[str], None]) -> None:
    seen: set[str] = set()
    host, looks = None, 0  # the host that quit last; how many more looks its quit gets
    while not job.leaving.wait(POLL_S):
        quits = job.new_messages("quit/", seen)
        if quits is None:  # the service is gone: the job is over
            return
        if quits:
            host, looks = quits[-1].get("process"), LOOKS
        if not looks:
            continue
        looks -= 1
        if _waits_for_good(QUIT_GRACE_S, job) and not job.leaving.is_set():
            end(
                f"{quit_reporting.QUIT_LINE} at the debug host (process {host}); "
                f"{job.label()} waited in it for the devices that quit, and ends here"
            )
            return


def entered() -> None:
    """An execution of a computation with a breakpoint began here (its host asks whether
    the breakpoint is enabled, in every process): the program goes on."""
    global _executions
    _executions += 1


def _own_or_jax_code(path: str) -> bool:
    """Whether a frame of ``path`` is the program's own code or JAX's: where a thread
    waits on a computation (a wait in the standard library or another package, such as
    a kernel's event loop or a queue, or in jaxdbg, is not that)."""
    global _JAX_DIR, _OTHER_CODE
    if not _OTHER_CODE:
        import jax

        paths = sysconfig.get_paths()
        folders = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
        folders.append(os.path.dirname(os.path.dirname(__file__)))  # jaxdbg's own
        _OTHER_CODE = tuple(os.path.join(os.path.abspath(f), "") for f in folders)
        _JAX_DIR = os.path.join(os.path.dirname(os.path.abspath(jax.__file__)), "")
    full = os.path.abspath(path)
    if full.startswith(_JAX_DIR):
        return True
    return not path.startswith("<frozen") and not full.startswith(_OTHER_CODE)


def _waits_for_good(grace_s: float, job: job_mod.Job) -> bool:
    """Whether a thread of the program sits in one call from now until ``grace_s`` later,
    no execution of a computation with a breakpoint having begun meanwhile."""
    mine = {t.ident for t in threading.enumerate() if t.name.startswith("jaxdbg-")}
    before = {
        tid: (frame, frame.f_lasti)
        for tid, frame in sys._current_frames().items()
        if tid not in mine and _own_or_jax_code(frame.f_code.co_filename)
    }
    executions = _executions
    if not before or job.leaving.wait(grace_s) or _executions != executions:
        return False
    if remote_stops.stops_in_flight():  # the program waits on a stop of its own: it goes on
        return False
    now = sys._current_frames()
    return any(now.get(tid) is frame and frame.f_lasti == lasti for tid, (frame, lasti) in before.items())


def _end_process(line: str) -> None:
    """End this process now: its computation can never finish. The line is written
    first; the host is told this process is done (it waits for no more stops of it),
    and JAX's shutdown of the job runs, so that the other processes' own shutdown does
    not wait for this one (at most SHUTDOWN_S)."""
    job = job_mod.current()
    try:
        print(line, file=sys.stderr, flush=True)
        sys.stdout.flush()
    except Exception:
        pass
    if job is not None:
        try:
            job.write(f"done/{job.process}", {"process": job.process})
        except Exception:
            pass
        job.leave()  # jaxdbg's threads stop calling the service before it shuts down
        import jax

        shutdown = threading.Thread(target=jax.distributed.shutdown, daemon=True)
        shutdown.start()
        shutdown.join(SHUTDOWN_S)
    os._exit(1)
