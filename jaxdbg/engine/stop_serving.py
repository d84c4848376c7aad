"""Serving stops on the host: one debugger session at a time, in order, none lost.

Callbacks can arrive concurrently: pmap, shard_map and sharded jit run them on
XLA threads, and user threads may run jitted functions side by side. Each stop
waits for its turn. When the turn comes free, the waiting stop that goes next
is the one of the oldest round, lowest device first (device 0, 1, 2, ... under
pmap). The devices of a round arrive in any order, so the first stop of a round
is held until every device of the round has arrived or ROUND_WINDOW_S has passed
since the first one did, whichever comes first: the round then opens at its
lowest device. The banner counts the stops still waiting.

Which stops a quit ends, "the same computation" (an interrupt at a stop,
Ctrl-C or a kernel interrupt, ends the same stops, with KeyboardInterrupt):

- A stop without a device (eager code, single-device jit, the one callback of a
  sharded jit, each call from a thread) is a computation of its own. XLA ends
  that execution when the callback raises, so a quit ends that stop only; stops
  of other calls, waiting or later, are served as usual.
- A multi-device stop (pmap, shard_map: a device index out of N devices) joins
  the current *round* of its breakpoint, which holds at most one stop per device.
  A device already in the round, or a round that all N devices have reached,
  starts a new round. A quit ends its round: the stops of the round already
  waiting, and, for an unconditional ``breakpoint`` (which every device reaches), the
  devices that reach it later. Each of those devices' programs then ends, since
  its callback raised; the next execution's stops make a new round.

No execution id reaches a host callback, so the devices are all there is to go
by. Two consequences: a device that was continued before the quit and stops
again in the same execution (a loop, a second breakpoint) starts a new round and
is shown; and the same multi-device function run from several threads at once
shares its rounds. A conditional breakpoint's round that quit takes no later
arrivals, since its other devices may never stop there: a device stopping
there next belongs to the next execution.

In a ``jax.distributed`` job with a debug host (:mod:`jaxdbg.job`, which plugs in
through :func:`route_stops_with`), a process that is not the host hands each stop to
the host (:mod:`jaxdbg.job.remote_stops`);
the host serves those stops here too, through :func:`serve_session`, in the same
queue as its own. There a round is the breakpoint's (by call site, the same number on
every process), so a round spans the devices of every process, is served in global
device order (which is (process, device) order), and a quit ends it everywhere.
Its first stop waits up to JOB_ROUND_WINDOW_S for the other processes' stops.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import threading
import time
import weakref
from typing import Any, Callable

from jaxdbg.engine import breakpoint_state, command_output, registry, watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.runtime import collective_timeouts, interrupts, quit_reporting
from jaxdbg.runtime.errors import DebuggerQuit

# How long the first stop of a multi-device round waits for the round's other devices
# (it stops waiting as soon as all have arrived). Measured with pmap over forced host
# devices on 2 shared, busy CPU cores, first -> last arrival of a round: 8 devices,
# 110 rounds on jax 0.10.2 and 0.7.2, median 1.4-1.7 ms, all but one within 13 ms, the
# worst 84 ms; 2 devices, 30 rounds, median 0.2 ms, worst 0.7 ms. Under a loaded test
# run a device has come later than 100 ms (2026-12-05); 250 ms covers that, and is
# hardly felt at a prompt; a conditional breakpoint some devices never reach pays it
# once per round.
ROUND_WINDOW_S = 0.25
# The same in a job: another process's stop reaches the host through the store, which
# the host reads every few tens of milliseconds.
JOB_ROUND_WINDOW_S = 1.0


@dataclasses.dataclass(eq=False)
class _Round:
    """The stops of one breakpoint across the devices of one multi-device execution."""

    order: int
    size: int  # devices in the computation
    every_device: bool  # an unconditional breakpoint: every device of the round will stop
    devices: set[int] = dataclasses.field(default_factory=set)
    ending: type[BaseException] | None = None  # DebuggerQuit or KeyboardInterrupt once ended
    opened: float = dataclasses.field(default_factory=time.monotonic)  # first arrival
    served: bool = False  # a stop of it was served: the rest go without waiting
    window: float = ROUND_WINDOW_S

    def hold_s(self) -> float:
        """How much longer the round's first stop waits for its other devices."""
        if self.served or len(self.devices) >= self.size:
            return 0.0
        return self.opened + self.window - time.monotonic()

    def has_room_for(self, device: int) -> bool:
        return device not in self.devices and len(self.devices) < self.size

    def takes_late_arrivals(self) -> bool:
        """After the round ended: a device not seen yet belongs to it (it will reach the
        breakpoint in the ended execution) only when every device stops here."""
        return self.ending is None or self.every_device


@dataclasses.dataclass(eq=False)
class _Ticket:
    key: tuple[int, int, int]  # (round order, device, arrival): the serving order
    round: _Round | None
    queued: bool = False  # in the queue already (queued when made, for a job's host)
    ending: type[BaseException] | None = None  # ended while waiting, on its own (end_waiting)

    def __lt__(self, other: "_Ticket") -> bool:
        return self.key < other.key


_counter = itertools.count()
_cond = threading.Condition(threading.Lock())
_queue: list[_Ticket] = []  # heap of waiting stops
_holder: int | None = None  # thread ident of the stop being served
_depth = 0  # nested stops on the holder's thread (a stop hit while evaluating in a stop)
_rounds: "weakref.WeakKeyDictionary[object, _Round]" = weakref.WeakKeyDictionary()


def waiting_count() -> int:
    """Stops waiting for their turn (the one being served is not counted)."""
    with _cond:
        return len(_queue)


def in_progress() -> bool:
    """Whether a stop is being served or waiting."""
    with _cond:
        return _holder is not None or bool(_queue)


quit_reporting.ask_stops_in_progress(in_progress)


class _JobSite:
    """A breakpoint's rounds across the processes of a job, by its number."""


_job_sites: dict[int, _JobSite] = {}


def job_site(breakpoint_id: int | None, site: object) -> object:
    """The round key of a stop in a job with a debug host: its breakpoint's number."""
    if breakpoint_id is None:
        return site
    return _job_sites.setdefault(breakpoint_id, _JobSite())


# A job of processes routes each stop before it is served here, and hears of a quit
# (jaxdbg.job.stop_routing registers these when imported): serving knows no processes.
# route_stop(frames, info, location, devices, every_device, site) returns how the stop
# ended when it was served elsewhere (else None), and the site its round is keyed by.
RouteStop = Callable[
    [list[Frame], StopInfo, "tuple[str, int, str] | None", "int | None", bool, object], "tuple[Resume | None, object]"
]
_route_stop: RouteStop | None = None
_quit_listeners: list[Callable[[], None]] = []


def route_stops_with(route_stop: RouteStop, on_quit: Callable[[], None]) -> None:
    """Let a job of processes route every stop first, and call ``on_quit`` when the user quits."""
    global _route_stop
    _route_stop = route_stop
    if on_quit not in _quit_listeners:
        _quit_listeners.append(on_quit)


def _join_round(site: object, device: int | None, devices: int | None, every_device: bool) -> _Round | None:
    if site is None or device is None or not devices:
        return None
    current = _rounds.get(site)
    if current is None or not current.has_room_for(device) or not current.takes_late_arrivals():
        current = _Round(
            next(_counter),
            devices,
            every_device,
            window=JOB_ROUND_WINDOW_S if isinstance(site, _JobSite) else ROUND_WINDOW_S,
        )
        _rounds[site] = current
    current.devices.add(device)
    return current


def ticket_for(site: object, info: StopInfo, devices: int | None, every_device: bool, queue: bool = False) -> _Ticket:
    """A stop's place in the serving order (:func:`serve_session` takes its turn);
    ``queue``: put it in the queue now, so that stops made in order keep it."""
    with _cond:
        current = _join_round(site, info.device, devices, every_device)
        arrival = next(_counter)
        if current is None:
            ticket = _Ticket((arrival, 0, arrival), None)
        else:
            assert info.device is not None  # only a stop of a known device joins a round
            ticket = _Ticket((current.order, info.device, arrival), current)
        if queue:
            heapq.heappush(_queue, ticket)
            ticket.queued = True
        return ticket


def _take_turn(ticket: _Ticket) -> bool:
    """Wait until this stop may be served; False when its round ended meanwhile."""
    global _holder, _depth
    me = threading.get_ident()
    with _cond:
        if _holder == me:  # a stop inside a stop, on the same thread
            _depth += 1
            return True
        if not ticket.queued:
            heapq.heappush(_queue, ticket)
        _cond.notify_all()  # a held first stop of this round looks again
        try:
            while True:
                if ticket.ending is not None or (ticket.round is not None and ticket.round.ending is not None):
                    _queue.remove(ticket)
                    heapq.heapify(_queue)
                    _cond.notify_all()
                    return False
                if _holder is None and _queue[0] is ticket:
                    hold = ticket.round.hold_s() if ticket.round is not None else 0.0
                    if hold <= 0:
                        heapq.heappop(_queue)
                        _holder, _depth = me, 1
                        if ticket.round is not None:
                            ticket.round.served = True
                        return True
                    _cond.wait(hold)  # a lower device of the round may still come
                    continue
                _cond.wait()
        except BaseException:  # interrupted while waiting (main thread)
            if ticket in _queue:
                _queue.remove(ticket)
                heapq.heapify(_queue)
            _cond.notify_all()
            raise


def _give_turn() -> None:
    global _holder, _depth
    with _cond:
        _depth -= 1
        if _depth == 0:
            _holder = None
        _cond.notify_all()


def end_waiting(tickets: list[_Ticket], cause: type[BaseException]) -> int:
    """End those of ``tickets`` still waiting for their turn, with ``cause`` (their
    serve_session raises it), whatever their round; how many were waiting. A job's
    debug host interrupted at one stop releases the other processes' waiting stops."""
    with _cond:
        waiting = [t for t in tickets if t in _queue and t.ending is None]
        for ticket in waiting:
            ticket.ending = cause
        _cond.notify_all()
    return len(waiting)


def _end_round(ended: _Round | None, cause: type[BaseException]) -> None:
    if ended is None:
        return
    with _cond:
        if ended.ending is None:
            ended.ending = cause
        _cond.notify_all()  # waiting stops of this round leave at once


def serve(
    frames: list[Frame],
    info: StopInfo,
    backend: str | None,
    options: dict[str, Any],
    site: object = None,
    *,
    devices: int | None = None,
    every_device: bool = False,
    location: tuple[str, int, str] | None = None,
    decide: Callable[[], bool] | None = None,
) -> Resume:
    """Open a session on these frames and return how it ended: continue or skip.

    ``site`` identifies the breakpoint, ``devices`` the number of devices of a
    multi-device computation (``info.device`` is this stop's index among them)
    and ``every_device`` whether each of them reaches this breakpoint (no
    condition); ``location`` is its call site (file, line, function), by which a
    job's debug host numbers it. ``decide()``, called when the stop's turn comes, may
    pass it (False: decided and counted there), as a condition set at the stop before
    it does. Raises DebuggerQuit when the user quit, and
    KeyboardInterrupt when interrupted, here or at an earlier stop of the same round
    (see the module doc).
    """
    quit_reporting.install()
    interrupts.install()
    try:
        if _route_stop is not None:
            served_elsewhere, site = _route_stop(frames, info, location, devices, every_device, site)
            if served_elsewhere is Resume.QUIT:
                raise DebuggerQuit()
            if served_elsewhere is not None:
                return served_elsewhere
        ticket = ticket_for(site, info, devices, every_device)
        return serve_session(
            ticket, lambda: Session(frames, info), info, backend, options, site, frames=frames, decide=decide
        )
    except (DebuggerQuit, KeyboardInterrupt):
        quit_reporting.note_a_stop_ended()
        raise


def serve_session(
    ticket: _Ticket,
    make_session: Callable[[], Session],
    info: StopInfo,
    backend: str | None,
    options: dict[str, Any],
    site: object = None,
    *,
    frames: list[Frame] | None = None,
    watch_values: watches.ValuesOf | None = None,
    decide: Callable[[], bool] | None = None,
) -> Resume:
    """Serve the session ``make_session()`` makes when ``ticket``'s turn comes (see serve).
    Its breakpoint's watches take their values in ``frames`` (the stop's own), or by
    ``watch_values`` (another process's stop served at a job's debug host asks there)."""
    if not _take_turn(ticket):
        ending = ticket.ending or (ticket.round.ending if ticket.round is not None else None)
        assert ending is not None  # only an ended ticket or round refuses
        raise ending()
    try:
        if decide is not None and not decide():
            return Resume.CONTINUE  # passed by a check set while it waited
        opens, info.hit = breakpoint_state.admit(info.breakpoint_id)
        # Watches take their value where the stop is served, opened or not.
        if frames is not None:
            watches.LIVE.record(info.breakpoint_id, info.hit, frames)
        elif watch_values is not None:
            watches.LIVE.record_with(info.breakpoint_id, info.hit, watch_values)
        if not opens:  # disabled, ignored or continued past while it waited
            return Resume.CONTINUE
        info.waiting = waiting_count
        collective_timeouts.note_as_a_stop_opens()
        session = make_session()
        try:
            # A stop reached from a command's code (p f(x)) shows itself, not into that command.
            with command_output.not_captured():
                registry.serve_with_backend(session, backend, options, site)
        except KeyboardInterrupt:
            _end_round(ticket.round, KeyboardInterrupt)
            raise
        if session.resume is Resume.QUIT:
            _end_round(ticket.round, DebuggerQuit)
            for listener in _quit_listeners:
                listener()
            raise DebuggerQuit()
        return session.resume or Resume.CONTINUE
    finally:
        _give_turn()
