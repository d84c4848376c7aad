"""Breakpoint numbers, hit counts, and which stops to open.

Every breakpoint call site (the file and line of the ``jaxdbg.breakpoint`` /
``breakpoint_if`` / ``breakpoint_on_nonfinite`` call) gets a pdb-style number
the first time it is traced or run; a retraced function keeps its numbers. For
the rest of the process (a kernel session) this module remembers, per number:

- **hits**: how many stops reached it while it was enabled, as pdb counts them
  (ignored stops and stops passed by ``continue all`` count; stops of a
  disabled breakpoint do not);
- **enabled**: ``disable`` / ``enable``;
- **ignore**: the next N hits are passed without opening a debugger (pdb's
  ``ignore``);
- **continue all**: every further stop of it in the current run (the running
  cell in IPython, the whole script otherwise; see :mod:`jaxdbg.engine.runs`) is
  passed, counted, and reported once the run is over;
- **condition** (pdb's ``condition N EXPR``) and **log template** (``log N TEMPLATE``):
  kept here, decided on the host by :mod:`jaxdbg.engine.breakpoint_checks`.

A stop of a disabled breakpoint, or one passed by ``continue all`` or ``ignore``,
transfers none of its values: the program first asks the host :func:`is_enabled` (no
operands), then, when enabled, whether this stop needs its values (one small operand,
see :mod:`jaxdbg.capture.staging`; :func:`passes_whole_arrival`), and calls the
breakpoint's host callback with the values only when the stop may open. Two checks
decide there: a cheap one when the stop arrives (:func:`arrive`) and
one when it gets its turn among concurrent stops (:func:`admit`), so that a ``continue
all``, ``disable`` or ``ignore`` typed at device 0 of a pmap applies to the devices
already waiting.

:func:`reset` (``%jaxdbg reset``) re-enables every breakpoint and clears ignore
counts and ends every active ``continue all``; numbers and hit counts stay.
"""

from __future__ import annotations

import atexit
import dataclasses
import sys
import threading
from typing import Callable

from jaxdbg.engine import runs
from jaxdbg.engine.frames import display_filename
from jaxdbg.internals import ipython_api
from jaxdbg.runtime import notices


@dataclasses.dataclass
class _Breakpoint:
    number: int
    filename: str
    lineno: int
    function: str
    hits: int = 0
    enabled: bool = True
    ignore: int = 0
    continuing_in: runs.Run | None = None  # the run that a `continue all` covers
    passed: int = 0  # stops passed by that `continue all` so far
    condition: str = ""  # stop only where this expression is true in the frame ("" : always)
    log_template: str = ""  # a logpoint: write this, formatted in the frame, and never stop


@dataclasses.dataclass(frozen=True)
class BreakpointRow:
    """One line of the ``breakpoints`` listing."""

    number: int
    filename: str
    lineno: int
    function: str
    hits: int
    enabled: bool
    ignore: int
    continuing: bool  # a `continue all` is passing its stops in the current run
    condition: str = ""
    log_template: str = ""

    @property
    def location(self) -> str:
        return f"{display_filename(self.filename)}:{self.lineno}"


_lock = threading.Lock()
_by_site: dict[tuple[str, int], _Breakpoint] = {}
_by_number: dict[int, _Breakpoint] = {}
_disabled: set[int] = set()  # read without the lock by is_enabled, on every step of a program
# Numbers with a condition or a log template: read on every stop without the lock, so
# that a breakpoint without either costs one set lookup.
_checked: set[int] = set()
_checks_changed = [0]  # counts changes of any condition or log template (checks_version)
# Counts changes that may end a passing of every stop (enable, a `continue all` or its end,
# reset), and of ignore counts: a job's debug host tells the other processes by it that
# what it said of its breakpoints may no longer hold (jaxdbg.job.host_passes).
_passing_changed = [0]
_reports: list[str] = []  # finished `continue all` runs not yet reported
_exit_report_registered = False


def register(filename: str, lineno: int, function: str) -> int:
    """The number of the breakpoint called at ``filename:lineno`` (new ones count up from 1)."""
    with _lock:
        bp = _by_site.get((filename, lineno))
        if bp is None:
            bp = _Breakpoint(len(_by_number) + 1, filename, lineno, function)
            _by_site[(filename, lineno)] = bp
            _by_number[bp.number] = bp
        return bp.number


def is_enabled(number: int | None) -> bool:
    """Whether breakpoint ``number`` is enabled: asked by its program at every step,
    before it sends any value to the host, so a disabled one costs one host round trip
    without operands per step, and an ``enable`` typed at another breakpoint's stop holds
    from its next step."""
    return number not in _disabled


def exists(number: int) -> bool:
    with _lock:
        return number in _by_number


def _passes(bp: _Breakpoint) -> bool:
    """Whether this hit (already counted) is passed; updates ignore and continue-all state."""
    if bp.continuing_in is not None:
        now = runs.current()
        if now == bp.continuing_in:
            bp.passed += 1
            return True
        _finish_continue_all(bp)
    if bp.ignore > 0:
        bp.ignore -= 1
        return True
    return False


def arrive(number: int | None) -> bool:
    """A stop of breakpoint ``number`` arrived: False when it is passed without opening.

    Passed stops are counted here. A stop that may open is counted later, in
    :func:`admit`, so that hit numbers follow the order stops are shown in.
    """
    return arrival(number)[0]


def arrival(number: int | None) -> tuple[bool, int | None]:
    """:func:`arrive`, with the hit number of a stop it passed (None for one that may
    open, or a disabled breakpoint's, which is not a hit)."""
    if number is None:
        return True, None
    with _lock:
        bp = _by_number.get(number)
        if bp is None or (bp.enabled and bp.continuing_in is None and bp.ignore == 0):
            return True, None
        if not bp.enabled:
            return False, None
        bp.hits += 1
        passed = _passes(bp)
        hit = bp.hits
        if not passed:
            bp.hits -= 1  # admit counts it
    _print_reports()
    return not passed, hit if passed else None


def passes_whole_arrival(number: int | None, stops: int) -> bool:
    """Whether all ``stops`` stops of one arrival of breakpoint ``number`` (one per
    selected batch element) are passed, by its ``continue all`` or by its ignore count;
    they are counted as passed here, so the program then sends none of their values to
    the host. False (nothing counted) when any of them may open: the stops arrive with
    their values and :func:`arrival` decides each."""
    if number is None or stops <= 0:
        return stops <= 0
    with _lock:
        bp = _by_number.get(number)
        if bp is None or not bp.enabled:
            return False
        if bp.continuing_in is not None:
            if bp.continuing_in != runs.current():
                return False  # a continue all of an earlier run: arrival reports and ends it
            bp.hits += stops
            bp.passed += stops
            return True
        if bp.ignore < stops:
            return False
        bp.hits += stops
        bp.ignore -= stops
    return True


def count_hit(number: int) -> int:
    """Count a hit that neither opens nor uses up an ignore (a false condition, a
    logpoint's line): every hit of an enabled breakpoint counts, as in pdb."""
    with _lock:
        bp = _by_number[number]
        bp.hits += 1
        return bp.hits


def hits(number: int) -> int:
    """Breakpoint ``number``'s hits so far (0 for an unknown one)."""
    with _lock:
        bp = _by_number.get(number)
        return 0 if bp is None else bp.hits


def checks(number: int | None) -> tuple[str, str]:
    """``(condition, log template)`` of breakpoint ``number`` ("" where none is set)."""
    with _lock:
        bp = _by_number.get(number) if number is not None else None
        return ("", "") if bp is None else (bp.condition, bp.log_template)


def admit(number: int | None) -> tuple[bool, int | None]:
    """The stop's turn has come: (open it?, its hit number). Applies state changed meanwhile.

    Before a stop opens, ``continue all`` runs that are over are reported.
    """
    if number is None:
        _end_stale_runs()
        _print_reports()
        return True, None
    with _lock:
        bp = _by_number.get(number)
        if bp is None or not bp.enabled:
            return bp is None, None
        bp.hits += 1
        passed = _passes(bp)
        hit = bp.hits
    if not passed:
        _end_stale_runs()
    _print_reports()
    return not passed, hit


# -- commands ----------------------------------------------------------------
def _get(number: int) -> _Breakpoint:
    bp = _by_number.get(number)
    if bp is None:
        known = ", ".join(map(str, sorted(_by_number))) or "none yet"
        raise ValueError(f"no breakpoint {number} (known: {known})")
    return bp


def set_enabled(number: int, enabled: bool) -> None:
    """``disable`` / ``enable`` for the rest of the session. Raises ValueError for unknown numbers."""
    with _lock:
        _get(number).enabled = enabled
        _passing_changed[0] += 1
        if enabled:
            _disabled.discard(number)
        else:
            _disabled.add(number)


def set_ignore(number: int, count: int) -> None:
    """Pass the next ``count`` hits of breakpoint ``number`` (0 clears)."""
    if count < 0:
        raise ValueError("the ignore count cannot be negative")
    with _lock:
        _get(number).ignore = count
        _passing_changed[0] += 1


def set_condition(number: int, condition: str) -> None:
    """Stop at breakpoint ``number`` only where ``condition`` holds ("" clears it)."""
    with _lock:
        bp = _get(number)
        bp.condition = condition.strip()
        _note_checks(bp)


def set_log_template(number: int, template: str) -> None:
    """Make breakpoint ``number`` a logpoint writing ``template`` ("" makes it stop again)."""
    with _lock:
        bp = _get(number)
        bp.log_template = template
        _note_checks(bp)


def _note_checks(bp: _Breakpoint) -> None:
    _checks_changed[0] += 1
    if bp.condition or bp.log_template:
        _checked.add(bp.number)
    else:
        _checked.discard(bp.number)


def checks_version() -> int:
    """A number that changes whenever a condition or log template does (no lock: cheap)."""
    return _checks_changed[0]


def has_checks(number: int | None) -> bool:
    """Whether breakpoint ``number`` has a condition or a log template (no lock: cheap)."""
    return number in _checked


def passing_version() -> int:
    """A number that grows whenever what :func:`passes_every_stop` says may change (no lock)."""
    return _passing_changed[0] + _checks_changed[0]


def passes_every_stop(number: int | None) -> str | None:
    """Why every stop of breakpoint ``number`` arriving now would be passed, whatever its
    values: ``"disabled"``, ``"continue all"`` (each one a hit), or None. (Its condition,
    log template and watches are :mod:`breakpoint_checks`'s to weigh.)"""
    with _lock:
        bp = _by_number.get(number) if number is not None else None
        if bp is None:
            return None
        if not bp.enabled:
            return "disabled"
        if bp.continuing_in is not None and bp.continuing_in == runs.current():
            return "continue all"
    return None


def count_passed_elsewhere(number: int, continued: int, hits: int = 0) -> None:
    """Count the stops of breakpoint ``number`` that another process of a job decided on
    this process's word (jaxdbg.job.host_passes): ``continued`` passed by its ``continue
    all`` (hits, and in its report while it goes on), ``hits`` passed by its condition or
    log template."""
    with _lock:
        bp = _by_number.get(number)
        if bp is None:
            return
        bp.hits += hits
        if continued and bp.enabled:
            bp.hits += continued
            if bp.continuing_in is not None and bp.continuing_in == runs.current():
                bp.passed += continued


def continue_all(number: int) -> runs.Run:
    """Pass every further stop of breakpoint ``number`` in the current run; returns that run."""
    run = runs.current()
    with _lock:
        bp = _get(number)
        if bp.continuing_in is not None and bp.continuing_in != run:
            _finish_continue_all(bp)
        if bp.continuing_in is None:
            bp.continuing_in, bp.passed = run, 0
        _passing_changed[0] += 1
    _schedule_report()
    return run


def rows() -> list[BreakpointRow]:
    """Every known breakpoint, by number."""
    with _lock:
        return [
            BreakpointRow(
                bp.number,
                bp.filename,
                bp.lineno,
                bp.function,
                bp.hits,
                bp.enabled,
                bp.ignore,
                bp.continuing_in is not None,
                bp.condition,
                bp.log_template,
            )
            for _, bp in sorted(_by_number.items())
        ]


def reset() -> None:
    """Re-enable every breakpoint, clear ignore counts and end every ``continue all``."""
    with _lock:
        for bp in _by_number.values():
            bp.enabled, bp.ignore = True, 0
        _disabled.clear()
        _passing_changed[0] += 1
    end_run()


# -- reporting the stops that `continue all` passed ----------------------------
def _finish_continue_all(bp: _Breakpoint) -> None:
    """End bp's continue-all (caller holds the lock and saw it active) and queue its report."""
    run = bp.continuing_in
    assert run is not None
    if bp.passed:
        stops = "stop" if bp.passed == 1 else "stops"
        _reports.append(
            notices.phrase(f"continued past {bp.passed} more {stops} of breakpoint {bp.number} in {run.description}")
        )
    bp.continuing_in, bp.passed = None, 0
    _passing_changed[0] += 1


def end_run() -> list[str]:
    """End the current run: every active ``continue all`` ends and its count is printed.

    Called when a cell finishes (IPython), by :func:`reset` and at exit; a
    script may call it where its own notion of a run ends, e.g. after each
    training step. Returns the printed report lines.
    """
    with _lock:
        for bp in _by_number.values():
            if bp.continuing_in is not None:
                _finish_continue_all(bp)
    return _print_reports()


def _schedule_report() -> None:
    """Report when the run ends: after the cell in IPython, else at exit (or end_run)."""
    global _exit_report_registered
    if ipython_api.execution_count() is not None:
        ipython_api.on_cell_finished(end_run)
        return
    with _lock:
        if _exit_report_registered:
            return
        _exit_report_registered = True
    atexit.register(_end_run_at_exit)


# What must finish before a script's run ends at exit: a jax.distributed job's debug host
# still serves the other processes' stops then (jaxdbg.job.debug_host).
_before_exit_report: list[Callable[[], None]] = []


def finish_before_the_exit_report(wait: Callable[[], None]) -> None:
    """Call ``wait()`` at exit before a script's ``continue all`` runs end."""
    if wait not in _before_exit_report:
        _before_exit_report.append(wait)


def _end_run_at_exit() -> None:
    for wait in list(_before_exit_report):
        try:
            wait()
        except Exception:
            pass
    end_run()


def _end_stale_runs() -> None:
    """End each ``continue all`` whose run is over because a stop of another run opens."""
    with _lock:
        active = [bp for bp in _by_number.values() if bp.continuing_in is not None]
        if not active:
            return
        now = runs.current()
        for bp in active:
            if bp.continuing_in != now:
                _finish_continue_all(bp)


def _print_reports() -> list[str]:
    if not _reports:  # on every passed stop: no lock when there is nothing to print
        return []
    with _lock:
        reports, _reports[:] = list(_reports), []
    for line in reports:
        print(line, file=sys.stdout, flush=True)
    return reports
