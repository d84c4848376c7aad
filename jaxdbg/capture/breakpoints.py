"""``breakpoint``, ``breakpoint_if`` and ``breakpoint_on_nonfinite``.

At trace time the stack is captured (frames.py) and its tracer leaves become
the operands of one host callback, staged by staging.py: a ``custom_vmap``
layer per vmap level, so the host receives whole batches and can name the
element it stops at (``batch 2/3``), stop only where a predicate holds, and
skip the rest of a batch; a ``custom_jvp`` layer makes the breakpoint
invisible to differentiation (it sees forward-pass values). On the host,
``_Site.on_host`` serves one stop per selected batch element.

Only the traced body's own tracers become operands: JAX caches a staged body
and may reuse it in another program, so tracers of enclosing traces, found in
outer frames, stay out (frames.trace_frames, jax_api.traces_in_reach).
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from typing import Any, Callable

import jax
import numpy as np

from jaxdbg import config
from jaxdbg.capture import operand_reader, prints, screening, staging
from jaxdbg.engine import breakpoint_checks, breakpoint_state, program_shardings, registry, stop_serving
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import tree_glance
from jaxdbg.internals import jax_api, jax_partial_eval
from jaxdbg.job import debug_host
from jaxdbg.replay import stepping as replay
from jaxdbg.runtime import collective_timeouts, interrupts, quit_reporting
from jaxdbg.runtime.guarded_calls import guarded

# How many frames sit between the user's call and place_breakpoint (the public function).
_CALLER = 1


_host_arrival_observers: list[Callable[[], None]] = []


def observe_host_arrivals(observer: Callable[[], None]) -> Callable[[], None]:
    """Call ``observer()`` each time a breakpoint's values arrive on the host, before
    any stop is served (benchmarks time the callback with it); returns the undo.

    Observers run on the thread of the host callback and must not raise.
    """
    _host_arrival_observers.append(observer)

    def undo() -> None:
        if observer in _host_arrival_observers:
            _host_arrival_observers.remove(observer)

    return undo


@dataclasses.dataclass(eq=False)  # compared by identity: stop_serving.py keys its rounds on the site
class _Site(screening.ScreeningSite):
    """Everything one traced breakpoint needs on the host (its screening: screening.py)."""

    templates: list[frames_mod.FrameTemplate]
    backend: str | None
    options: dict[str, Any]
    ordered: bool
    conditional: bool
    device_axes: list[tuple[str, int]]  # (name, size); their indices are the last operands
    describe_reason: Callable[[Callable[[int], Any]], str | None] | None = None
    breakpoint_id: int | None = None  # breakpoint_state's number for the call site
    mesh: str | None = None  # a sharded jit's mesh, known at trace time
    # Serves a stop elsewhere instead, when it returns True (see jax_hook).
    handoff: Callable[[list[frames_mod.Frame], dict[str, Any]], bool] | None = None
    # The operands' shardings as compiled (sharded jit), filled in at compile time.
    compiled: program_shardings.CompiledShardings | None = None
    location: tuple[str, int, str] | None = None  # the call site: file, line, function
    # Which processes of a jax.distributed job stop here (None: every one).
    processes: Callable[[int], bool] | None = None
    # The device at each device position (a shard_map's mesh), when the trace knew them.
    mapped_devices: tuple[Any, ...] | None = None
    operand_count: int = 0  # the operands sent to the host, device-axis indices last
    keys: dict[int, Any] = dataclasses.field(default_factory=dict)  # operand_reader.key_impls

    # What a screening may ask the program to send: the innermost frame's traced locals,
    # grouped by name (staged breakpoints only; see screening.py).
    screen_groups: tuple[screening.LocalGroup, ...] = ()
    # The locals a watch may have sent as their statistics alone (screening.StatsForm).
    stats_forms: tuple[screening.StatsForm, ...] = ()
    unsent_forms: set[int] = dataclasses.field(default_factory=set)
    arrivals: screening.Arrivals = dataclasses.field(default_factory=screening.Arrivals)
    _waiting: dict[tuple, tuple] = dataclasses.field(default_factory=dict)  # see ScreeningSite._waiting_for

    def stops_here(self) -> bool:
        """Whether this process of a jax.distributed job is one that stops here."""
        return self.processes is None or bool(self.processes(jax.process_index()))

    def on_host(self, levels, sizes, pred, operands, state: int = screening.OPEN) -> None:
        """Serve one stop per selected batch element, in order (``state``: the program's
        screening state; a screened arrival's first stop that opens was decided already)."""
        if _host_arrival_observers:
            for observer in list(_host_arrival_observers):
                observer()
        if not self.stops_here():
            return  # another process's breakpoint: pass at once, as a disabled one does
        if state == screening.SCREENED_OPEN:  # an unbatched arrival screened open
            first: tuple | None = ()
        else:  # a batched one names its first stop that opens
            first = self.arrivals.first_opened(state) if state > screening.OPEN else None
        # A condition, log template or watch needs the innermost frame before deciding.
        screened = breakpoint_checks.active(self.breakpoint_id)
        checks = breakpoint_checks.checks_version()  # a stop waiting its turn is decided again if they change
        if not sizes:  # unbatched, the common case (always selected: a conditional one sits
            # inside its lax.cond); a passed stop returns after this one check
            if first is not None or screened or breakpoint_state.arrive(self.breakpoint_id):
                try:
                    self._serve((), sizes, levels, operands, {}, screened and first is None, checks)
                finally:
                    operand_reader.after_the_cell()
            return
        selected = np.asarray(pred, dtype=bool)  # True (every element) or one per element
        mask = np.broadcast_to(selected, sizes) if selected.ndim == 0 else selected.reshape(sizes)
        host_ops: dict[int, Any] = {}  # each batched operand on the host, read once
        opened = False
        try:
            for index in np.ndindex(*sizes):
                if not mask[index] or (first is not None and index < first):
                    continue  # not selected, or passed by the screening already
                decided = index == first
                if not (decided or screened or breakpoint_state.arrive(self.breakpoint_id)):
                    continue  # a disabled, ignored or continued-past stop opens nothing
                opened = True
                resume = self._serve(index, sizes, levels, operands, host_ops, screened and not decided, checks)
                if resume is Resume.SKIP:
                    break
        finally:
            host_ops.clear()
            if opened:
                operand_reader.after_the_cell()

    def _stop_info(self, index: tuple, sizes: tuple, operand: Callable[[int], Any]) -> StopInfo:
        """The stop's batch element, breakpoint and device (read from the device-axis operands)."""
        info = StopInfo(
            batch_index=tuple(int(i) for i in index),
            batch_size=tuple(sizes),
            breakpoint_id=self.breakpoint_id,
            mesh=self.mesh,
        )
        if self.device_axes:
            positions = [int(operand(i)) for i in self.device_operands]
            device = 0
            for (_, size), position in zip(self.device_axes, positions):
                device = device * size + position
            info.device = device
            if self.mapped_devices is not None and device < len(self.mapped_devices):
                info.placed_on = self.mapped_devices[device]
            info.device_axes = tuple((name, p) for (name, _), p in zip(self.device_axes, positions))
        return info

    def _serve(
        self, index: tuple, sizes: tuple, levels, operands, host_ops: dict[int, Any], screened: bool, checks: tuple
    ) -> Resume | None:
        """Build the frames of batch element ``index`` and serve its stop (``screened``:
        its condition, log template or watches decide first, on its innermost frame;
        ``checks``: their version when it arrived; changed by its turn, they decide it then)."""
        operand = operand_reader.reader(index, levels, operands, host_ops, keys=self.keys)
        info = self._stop_info(index, sizes, operand)
        if not sizes:  # vmap's stops send values: no statistics form to hint at
            info.sent_whole = functools.partial(self.sent_whole, operand)
        if self.describe_reason is not None:
            info.reason = self.describe_reason(operand)
        compiled = self.compiled.get if self.compiled is not None else None
        try:
            # Conditions, templates and watches read the innermost frame only: the outer
            # frames are built once the stop opens.
            innermost = self.templates[0].build(operand, compiled)
            if (
                screened
                and self.breakpoint_id is not None
                and not breakpoint_checks.screen(self.breakpoint_id, innermost, info, prints.write_log_line)
            ):
                return None
            built = [innermost] + [t.build(operand, compiled) for t in self.templates[1:]]
            if self.handoff is not None and self.handoff(built, self.options):
                return None
            number = self.breakpoint_id
            spmd = self.mesh is not None or bool(self.device_axes)
            collective_timeouts.note_at_stop(jax.local_device_count() if spmd else 1, jax.default_backend())

            def decide() -> bool:  # set at an earlier stop of the same step (a pmap device's)
                if number is None or breakpoint_checks.checks_version() == checks:
                    return True
                return breakpoint_checks.screen(number, innermost, info, prints.write_log_line)

            return stop_serving.serve(
                built,
                info,
                self.backend,
                self.options,
                site=self,
                devices=self.device_count,
                every_device=not self.conditional,
                location=self.location,
                decide=decide,
            )
        finally:
            # The stop's session and views may outlive it in reference cycles until the
            # garbage collector runs; its values (a local's host copy can be hundreds of
            # MB) must not: they are released here, when the stop ends.
            operand.cache_clear()  # type: ignore[attr-defined]

    @property
    def device_operands(self) -> tuple[int, ...]:
        """The positions of the device-axis indices: the last operands."""
        return tuple(range(self.operand_count - len(self.device_axes), self.operand_count))

    @property
    def device_count(self) -> int | None:
        """Devices of the multi-device computation this breakpoint runs in, if any."""
        if not self.device_axes:
            return None
        return int(np.prod([size for _, size in self.device_axes]))


def _describe_big_tree(traced: Any) -> tree_glance.Glance | None:
    """A big tree's row until it is read (see frames.FrameTemplate.big_trees); a user
    pytree's code must not end the trace."""
    return guarded(lambda: tree_glance.glance_when_traced(traced), lambda e: None)


def place_breakpoint(
    *,
    pred: Any,
    skip: int,
    backend: str | None,
    filter_frames: bool,
    num_frames: int | None,
    ordered: bool,
    token: Any,
    options: dict[str, Any],
    reason: Callable[[list[Any]], str] | None = None,
    reason_operands: list | None = None,
    handoff: Callable[[list[frames_mod.Frame], dict[str, Any]], bool] | None = None,
    processes: Any = None,
) -> Any:
    """Shared path of every breakpoint flavour, and of ``jax.debug.breakpoint`` while it
    is routed to jaxdbg: capture the stack ``skip`` frames above this call, then stop
    right away (eager values) or stage the stop into the program being traced.

    ``reason`` turns the runtime values of ``reason_operands`` into the
    banner's explanation (used by breakpoint_on_nonfinite). ``processes`` (a list of
    process indices or a callable on one) says which processes of a ``jax.distributed``
    job stop here.
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    if not config.breakpoints_on():  # %jaxdbg breakpoints off: the program runs as if it were not here
        return token
    if replay.replaying():  # a replay's own debugger is stepping through this already
        return token
    if jax_partial_eval.in_exploratory_partial_eval():  # Linen's nn.scan looking at its body
        return token
    stops_on = _process_filter(processes)
    _prepare_for_stops(backend, options)
    call = sys._getframe(skip + 1)
    location = (call.f_code.co_filename, call.f_lineno, call.f_code.co_name)
    number = breakpoint_state.register(*location)
    stack = frames_mod.python_stack(skip + 1, filter_frames, num_frames)
    if not stack:  # everything was filtered: still show where the call is
        stack = frames_mod.python_stack(skip + 1, False, 1)
    collector = frames_mod.OperandCollector()
    own, inside = frames_mod.trace_frames(skip + 1)
    templates = [frames_mod.capture(f, collector, id(f) in own, _describe_big_tree, id(f) in inside) for f in stack]
    compiled = program_shardings.CompiledShardings()
    if jax_api.is_tracing():
        compiled.stage(collector.operands, collector.shardings)
    # The values go as the program lays them out; staging gathers a sharded one for the
    # host inside the branch that sends it, so a stop that is passed gathers nothing.
    operands = list(collector.operands)
    layouts = list(collector.shardings)
    first_reason = len(operands)
    reason_operands = list(reason_operands or [])
    operands += reason_operands
    layouts += [program_shardings.of_tracer(v) for v in reason_operands]
    describe = _reason_from_operands(reason, first_reason, len(reason_operands))

    conditional = pred is not None
    if (
        not jax_api.is_tracing()
        and not any(isinstance(o, jax.core.Tracer) for o in operands)
        and not isinstance(pred, jax.core.Tracer)
    ):
        # Eager: every value is concrete already, so stop right here.
        if conditional and not bool(np.any(np.asarray(pred))):
            return token
        site = _Site(
            templates,
            backend,
            options,
            ordered,
            conditional,
            [],
            describe,
            number,
            None,
            handoff,
            location=location,
            processes=stops_on,
            operand_count=len(operands),
        )
        site.on_host(tuple(() for _ in operands), (), np.bool_(True), operands)
        return token

    axes = jax_api.device_axis_indices()
    operands += [index for _, _, index in axes]
    layouts += [None for _ in axes]
    site = _Site(
        templates,
        backend,
        options,
        ordered,
        conditional,
        [(name, size) for name, size, _ in axes],
        describe,
        number,
        collector.mesh(),
        handoff,
        compiled,
        location,
        stops_on,
        mapped_devices=jax_api.traced_mesh_devices([name for name, _, _ in axes]) if axes else None,
        operand_count=len(operands),
    )
    site.screen_groups = screening.local_groups(templates[0], operands, list(site.device_operands))
    site.stats_forms = screening.stats_forms(templates[0], operands, breakpoint_checks.watched_whole(number))
    site.keys = operand_reader.key_impls(operands)
    out, done = staging.stage_breakpoint(site, pred, operands, layouts, token, _LAST_STOP.before_this_one())
    _LAST_STOP.staged(done)
    return out


class _LastStop(threading.local):
    """The scalar the last stop staged on this thread gave (staging.stage_breakpoint):
    the next stop of the same trace waits for it. XLA may run the host calls of two
    stops of a step at once, or in either order; so, without it, an ``enable`` typed at
    one stop held at another later in the step only from the next step.

    The scalar is a tracer kept past its trace until the next stop is staged, which
    JAX's leak check (``jax.checking_leaks()``) reports as a leak; there, none is kept,
    and an ``enable`` holds from the next step as before."""

    done: Any = None

    def before_this_one(self) -> Any:
        """The last stop's scalar, where it belongs to the trace staging now (None else)."""
        if self.done is not None and not jax_api.in_reach(self.done, jax_api.traces_in_reach() or []):
            self.done = None  # its trace has ended: let it go
        return self.done

    def staged(self, done: Any) -> None:
        kept = isinstance(done, jax.core.Tracer) and not getattr(jax.config, "jax_check_tracer_leaks", False)
        self.done = done if kept else None


_LAST_STOP = _LastStop()


def _process_filter(processes: Any) -> Callable[[int], bool] | None:
    """``processes=`` as a test on a process index: a list of indices or a callable."""
    if processes is None:
        return None
    if callable(processes):
        return lambda index: bool(processes(index))
    try:
        chosen = frozenset(int(p) for p in processes)
    except (TypeError, ValueError):
        raise TypeError(
            f"processes= takes a list of process indices or a callable on the process index, not {processes!r}"
        ) from None
    return lambda index: index in chosen


def _prepare_for_stops(backend: str | None, options: dict[str, Any]) -> None:
    """What must be in place at trace time, before any stop of this breakpoint runs."""
    # A job's debug host must be watching for other processes' stops before they come.
    debug_host.join_job()
    # Stops may run on XLA threads later; Ctrl-C reaches their prompt only through a
    # SIGINT handler, which must be installed from the main thread (tracing usually is).
    interrupts.install()
    # Before the computation is dispatched: a program may reach its exit (JAX waits for
    # pending effects there) before an asynchronously dispatched stop is served, and
    # that wait must already know to drop the error of a computation that was quit.
    quit_reporting.adapt_effect_waits()
    registry.check_options(backend, options)


def _reason_from_operands(
    reason: Callable[[list[Any]], str] | None, first: int, count: int
) -> Callable[[Callable[[int], Any]], str | None] | None:
    """The site's ``describe_reason``: ``reason`` of the operands ``first..first+count``."""
    if reason is None:
        return None

    def describe(operand: Callable[[int], Any]) -> str | None:
        return reason([operand(first + k) for k in range(count)])

    return describe


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    processes: Any = None,
    **backend_options: Any,
) -> Any:
    """Stop here with runtime values, under jit, vmap, grad, scan, cond or pmap.

    Returns ``token`` unchanged when given (thread it back into the computation
    so the breakpoint is ordered after the token's value and not pruned).
    ``processes`` (``[0]``, or a callable on the process index) stops only those
    processes of a ``jax.distributed`` job; the others pass at once.
    """
    return place_breakpoint(
        pred=None,
        skip=_CALLER,
        backend=backend,
        filter_frames=filter_frames,
        num_frames=num_frames,
        ordered=ordered,
        token=token,
        options=backend_options,
        processes=processes,
    )


def breakpoint_if(
    pred: Any,
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    processes: Any = None,
    **backend_options: Any,
) -> Any:
    """Stop only where ``pred`` holds (any element, for an array predicate).

    When it is false nothing leaves the device: the callback sits inside
    ``lax.cond``. Under vmap only the elements where it holds stop, and a step where it
    holds for none calls nothing on the host.
    """
    return place_breakpoint(
        pred=pred,
        skip=_CALLER,
        backend=backend,
        filter_frames=filter_frames,
        num_frames=num_frames,
        ordered=ordered,
        token=token,
        options=backend_options,
        processes=processes,
    )
