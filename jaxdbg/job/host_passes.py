"""The stops the debug host would pass are passed in the other processes, sending nothing.

Each stop of a process that is not the debug host is decided at the host: it travels
there and waits for its turn, and the host passes it by its own breakpoint state
(``disable``, ``continue all``) or opens it. Deciding that way, a process's program
would send every local of every passed stop to its host memory (on a GPU, a copy from
the device) and wait on the job's store at every step. So when the host ends a stop of
another process while that breakpoint passes every stop there (disabled, or its ``continue
all`` is on, and no condition, log template or watch of it wants the stop's values), its
answer says so (:func:`grant`), with the host's *passing version*: a number that grows
whenever the host's breakpoints change (:func:`breakpoint_state.passing_version`, and
the watches'). The process keeps that word (:func:`accept`), and its program answers
its own question at every step (:func:`passes`, from ``screening``): the stop passes
there, sending nothing, as a stop passed at the host would.

The word holds only while the host's version is the one it was given at. The host
writes its version to the store's ``passes/version`` as it changes (:func:`publish`,
from its watcher, every few tens of milliseconds), and each process that keeps a word
reads it every POLL_S (:func:`watch`): a change (``enable``, a ``continue all`` whose cell or script
ended, a new condition or watch) ends every word of an older version, and the stops
travel to the host again. So a change at the host reaches the other processes' steps
within about a tenth of a second; the steps they run in that time are passed as before
it. The stops a ``continue all`` passes this way are counted in their process and sent
to the host (``passed/``) every POLL_S and before the process ends, where they count as
hits and in the ``continued past N more stops`` report.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from jaxdbg.engine import breakpoint_checks, breakpoint_state, watches
from jaxdbg.job import membership as job_mod

POLL_S = 0.1

_lock = threading.Lock()
# In a process that is not the host: the words kept, by breakpoint number (this
# process's), as (the host's process and version given with it, counted as hits?).
_words: dict[int, tuple[tuple[int, int], bool]] = {}
_version: list[tuple[int, int] | None] = [None]  # the host's (process, version) last known here
_passed: dict[int, int] = {}  # stops passed on the host's word not yet sent to it, by number
_watching: set[int] = set()  # id(job) of the jobs watched here
_sequence = itertools.count(1)


# -- at the debug host ---------------------------------------------------------------


def host_version(job: job_mod.Job) -> tuple[int, int]:
    return job.process, breakpoint_state.passing_version() + watches.LIVE.version


def grant(job: job_mod.Job, number: int | None) -> dict[str, Any] | None:
    """What the host's answer to a stop of breakpoint ``number`` it just ended says of the
    breakpoint's next stops: that it passes them all for now (None: nothing)."""
    if number is None or breakpoint_checks.active(number):
        return None  # a condition, log template or watch needs the stops' values
    why = breakpoint_state.passes_every_stop(number)
    if why is None:
        return None
    return {"version": list(host_version(job)), "hits": why == "continue all"}


def publish(job: job_mod.Job, last: tuple[int, int] | None) -> tuple[int, int]:
    """Write the host's passing version to the store when it changed since ``last``."""
    now = host_version(job)
    if now != last:
        job.write("passes/version", {"version": list(now)})
    return now


def collect(job: job_mod.Job, seen: set[str]) -> None:
    """Count the stops the other processes passed on the host's word (``passed/``)."""
    for message in job.new_messages("passed/", seen) or []:
        for filename, lineno, function, stops in message.get("counts") or []:
            number = breakpoint_state.register(str(filename), int(lineno), str(function))
            breakpoint_state.count_passed_elsewhere(number, int(stops))
        job.delete(f"passed/{message.get('key')}")


# -- in the other processes ------------------------------------------------------------


def accept(number: int | None, word: Any) -> None:
    """A stop of breakpoint ``number`` ended at the host with ``word`` (:func:`grant`'s, or
    None): keep it while the host's version stays the one it came with."""
    if number is None:
        return
    if not isinstance(word, dict):  # the host decides its stops again
        with _lock:
            _words.pop(number, None)
        return
    try:
        version = (int(word["version"][0]), int(word["version"][1]))
    except (KeyError, IndexError, TypeError, ValueError):
        return
    with _lock:
        known = _version[0]
        if known is not None and known[0] == version[0] and known[1] > version[1]:
            return  # the host has changed since it said so
        _version[0] = version
        _words[number] = (version, bool(word.get("hits")))


def passes(number: int | None, stops: int) -> bool:
    """Whether the ``stops`` stops of one arrival of breakpoint ``number`` pass here on
    the host's word (asked by the program at every step: a dict lookup when none is kept)."""
    if number is None:
        return False
    word = _words.get(number)
    if word is None:
        return False
    with _lock:
        if _words.get(number) is not word or word[0] != _version[0]:
            return False
        if word[1]:
            _passed[number] = _passed.get(number, 0) + stops
    return True


def watch(job: job_mod.Job) -> None:
    """In a process that is not the debug host: follow the host's version (once per job)."""
    with _lock:
        if id(job) in _watching:
            return
        _watching.add(id(job))
    threading.Thread(target=_follow, args=(job,), name="jaxdbg-host-passes", daemon=True).start()


def _follow(job: job_mod.Job) -> None:
    while not job.leaving.wait(POLL_S):
        if not _words and not _passed:
            continue  # no word to end, no count to send: the store is not asked
        try:
            said = job.try_read("passes/version")
            left = job.has_left(job.host())
        except Exception:  # the service is gone: the job is over
            return
        follow_version(said, left)
        send_counts(job)


def follow_version(said: dict[str, Any] | None, host_left: bool) -> None:
    """The host's version as the store says it now: the words of another version end."""
    with _lock:
        if host_left:  # a stop of it now ends at once, saying so, as without a word
            _words.clear()
            _version[0] = None
            return
        try:
            version = (int(said["version"][0]), int(said["version"][1])) if said else None
        except (KeyError, IndexError, TypeError, ValueError):
            return
        known = _version[0]
        if version is None or (known is not None and known[0] == version[0] and known[1] >= version[1]):
            return  # not written yet, or older than a word come since
        _version[0] = version
        for number in [n for n, (v, _) in _words.items() if v != version]:
            del _words[number]


def send_counts(job: job_mod.Job) -> None:
    """Send the host the stops passed here on its word since the last time."""
    with _lock:
        counts = dict(_passed)
        _passed.clear()
    if not counts:
        return
    places = {row.number: row for row in breakpoint_state.rows()}
    rows = [[places[n].filename, places[n].lineno, places[n].function, k] for n, k in counts.items() if n in places]
    key = f"{job.process}-{next(_sequence)}"
    try:
        job.write(f"passed/{key}", {"key": key, "counts": rows})
    except Exception:  # the service is gone: so is the host that would count them
        pass
