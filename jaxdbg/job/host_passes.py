"""The other processes of a job decide their stops as the debug host would, sending nothing.

Each stop of a process that is not the debug host is decided at the host: it travels
there and waits for its turn, and the host passes it by its own breakpoint state
(``disable``, ``continue all``, a condition or log template, evaluated in the owner) or
opens it. Deciding that way, a process's program would send every local of every stop
to its host memory (on a GPU, a copy from the device) and wait on the job's store at
every step. So when the host ends a stop of another process, its answer gives the
host's *word* on the breakpoint's next stops (:func:`grant`), with the host's *passing
version*, a number that grows whenever the host's breakpoints change
(:func:`breakpoint_state.passing_version`, and the watches'):

- it passes every stop for now (disabled, or its ``continue all`` is on; no condition,
  log template or watch): the process's program answers its own question at every step
  (:func:`passes`, asked by ``screening``) and the stop passes there, sending nothing;
- its condition and log template (no watch, no ``continue all``): the process takes them
  as its own breakpoint's, so its screening decides each stop on the locals they read,
  writes a logpoint's line (which its print log sends to the host) and sends a stop to
  the host only where the condition holds (the host evaluates it again, then opens it).

The process keeps the word (:func:`accept`) only while the host's version is the one it
came with. The host writes its version to the store's ``passes/version`` as it changes
(:func:`publish`, from its watcher, every few tens of milliseconds), and each process
that keeps a word reads it every POLL_S (:func:`watch`): a change (``enable``, a
``continue all`` whose cell or script ended, a new condition or watch) ends every word
of an older version, and the stops travel to the host again. So a change at the host
reaches the other processes' steps within about a tenth of a second; the steps they run
in that time are decided as before it. The hits a word decides in a process (stops a
``continue all`` passed, or a condition or logpoint passed) are sent to the host
(``passed/``) every POLL_S and before the process ends, where they count as hits, and
those of a ``continue all`` in its ``continued past N more stops`` report.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from jaxdbg.engine import breakpoint_checks, breakpoint_state, watches
from jaxdbg.job import membership as job_mod

POLL_S = 0.1

_lock = threading.Lock()
_version: list[tuple[int, int] | None] = [None]  # the host's (process, version) last known here
# In a process that is not the host, by breakpoint number (this process's): the words
# that it passes every stop, as (the host's process and version given with it, are its
# stops hits?), and those that gave it the host's checks, as the version given with them.
_passing: dict[int, tuple[tuple[int, int], bool]] = {}
_checking: dict[int, tuple[int, int]] = {}
_continued: dict[int, int] = {}  # stops passed on a `continue all` word, not yet sent
_hits_from: dict[int, int] = {}  # a checked breakpoint's hits here that were sent already
_hits: dict[int, int] = {}  # hits of checks that ended, not yet sent
_watching: set[int] = set()  # id(job) of the jobs watched here
_granted = [False]  # at the host: whether it gave any word, so that counts may come
_sequence = itertools.count(1)


# -- at the debug host ---------------------------------------------------------------


def host_version(job: job_mod.Job) -> tuple[int, int]:
    return job.process, breakpoint_state.passing_version() + watches.LIVE.version


def grant(job: job_mod.Job, number: int | None) -> dict[str, Any] | None:
    """The host's word on the next stops of breakpoint ``number``, with its answer to a
    stop of it that just ended (None: it decides each of them here)."""
    if number is None or watches.LIVE.has_watches(number):
        return None  # a watch takes a value at every stop, here
    version = list(host_version(job))
    why = breakpoint_state.passes_every_stop(number)
    checked = breakpoint_state.has_checks(number)
    if why == "disabled":
        word: dict[str, Any] = {"version": version, "hits": False}
    elif why == "continue all" and not checked:
        word = {"version": version, "hits": True}
    elif why is None and checked:
        word = {"version": version, "checks": list(breakpoint_state.checks(number))}
    else:
        return None  # a `continue all` with a condition or template: each stop comes here
    _granted[0] = True
    return word


def publish(job: job_mod.Job, last: tuple[int, int] | None) -> tuple[int, int]:
    """Write the host's passing version to the store when it changed since ``last``."""
    now = host_version(job)
    if now != last:
        job.write("passes/version", {"version": list(now)})
    return now


def collect(job: job_mod.Job, seen: set[str]) -> None:
    """Count the hits the other processes decided on the host's word (``passed/``)."""
    if not _granted[0]:
        return  # no word given: no count can come, and the store is not asked
    for message in job.new_messages("passed/", seen) or []:
        for filename, lineno, function, continued, hits in message.get("counts") or []:
            number = breakpoint_state.register(str(filename), int(lineno), str(function))
            breakpoint_state.count_passed_elsewhere(number, int(continued), int(hits))
        job.delete(f"passed/{message.get('key')}")


# -- in the other processes ------------------------------------------------------------


def accept(number: int | None, word: Any) -> None:
    """A stop of breakpoint ``number`` ended at the host with ``word`` (:func:`grant`'s, or
    None): keep it while the host's version stays the one it came with."""
    if number is None:
        return
    version = _version_in(word)
    checks = word.get("checks") if isinstance(word, dict) else None
    with _lock:
        known = _version[0]
        if version is not None and known is not None and known[0] == version[0] and known[1] > version[1]:
            version = None  # the host has changed since it said so
        _passing.pop(number, None)
        if version is not None:
            _version[0] = version
            if checks is None:
                _passing[number] = (version, bool(word.get("hits")))
    if version is not None and isinstance(checks, list) and len(checks) == 2:
        _take_checks(number, version, str(checks[0]), str(checks[1]))
    else:
        _end_checks([number])


def passes(number: int | None, stops: int) -> bool:
    """Whether the ``stops`` stops of one arrival of breakpoint ``number`` pass here on
    the host's word (asked by the program at every step: a dict lookup when none is kept)."""
    if number is None:
        return False
    word = _passing.get(number)
    if word is None:
        return False
    with _lock:
        if _passing.get(number) is not word or word[0] != _version[0]:
            return False
        if word[1]:
            _continued[number] = _continued.get(number, 0) + stops
    return True


def _version_in(word: Any) -> tuple[int, int] | None:
    try:
        return (int(word["version"][0]), int(word["version"][1]))
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _take_checks(number: int, version: tuple[int, int], condition: str, template: str) -> None:
    """This process's breakpoint ``number`` takes the host's condition and template."""
    try:
        breakpoint_state.set_condition(number, condition)
        breakpoint_state.set_log_template(number, template)
    except ValueError:  # not a breakpoint of this process
        return
    hits = breakpoint_state.hits(number)
    with _lock:
        if number not in _checking:
            _hits_from[number] = hits
        _checking[number] = version


def _end_checks(numbers: list[int]) -> None:
    """The host's checks of these breakpoints no longer hold here: their hits so far
    wait to be sent, and the stops travel to the host again."""
    with _lock:
        ended = [n for n in numbers if _checking.pop(n, None) is not None]
    for number in ended:
        breakpoint_state.set_condition(number, "")
        breakpoint_state.set_log_template(number, "")
        breakpoint_checks.forget_reports(number)
        hits = breakpoint_state.hits(number)
        with _lock:
            _hits[number] = _hits.get(number, 0) + hits - _hits_from.pop(number, hits)


def watch(job: job_mod.Job) -> None:
    """In a process that is not the debug host: follow the host's version (once per job)."""
    with _lock:
        if id(job) in _watching:
            return
        _watching.add(id(job))
    threading.Thread(target=_follow, args=(job,), name="jaxdbg-host-passes", daemon=True).start()


def _follow(job: job_mod.Job) -> None:
    while not job.leaving.wait(POLL_S):
        if not (_passing or _checking or _continued or _hits):
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
    version = None if host_left else _version_in(said)
    with _lock:
        known = _version[0]
        if host_left:  # a stop of it now ends at once, saying so, as without a word
            _version[0] = None
        elif version is None or (known is not None and known[0] == version[0] and known[1] >= version[1]):
            return  # not written yet, or older than a word come since
        else:
            _version[0] = version
        for number in [n for n, (v, _) in _passing.items() if v != _version[0]]:
            del _passing[number]
        ended = [n for n, v in _checking.items() if v != _version[0]]
    _end_checks(ended)


def send_counts(job: job_mod.Job) -> None:
    """Send the host the hits decided here on its word since the last time."""
    with _lock:
        checking = list(_checking)
    now = {number: breakpoint_state.hits(number) for number in checking}
    with _lock:
        for number, hits in now.items():
            if number in _hits_from:
                _hits[number] = _hits.get(number, 0) + hits - _hits_from[number]
                _hits_from[number] = hits
        continued, hits_only = dict(_continued), dict(_hits)
        _continued.clear()
        _hits.clear()
    numbers = [n for n in set(continued) | set(hits_only) if continued.get(n, 0) or hits_only.get(n, 0)]
    if not numbers:
        return
    places = {row.number: row for row in breakpoint_state.rows()}
    rows = [
        [places[n].filename, places[n].lineno, places[n].function, continued.get(n, 0), hits_only.get(n, 0)]
        for n in numbers
        if n in places
    ]
    key = f"{job.process}-{next(_sequence)}"
    try:
        job.write(f"passed/{key}", {"key": key, "counts": rows})
    except Exception:  # the service is gone: so is the host that would count them
        pass
