"""``jaxdbg.print`` and ``jaxdbg.callback``: jax.debug.print / callback that know where they ran.

Both are built on the public ``jax.debug.callback``, so formatting, errors and
behaviour under jit, vmap, grad, scan, pmap and shard_map are JAX's own. What
they add travels with each call:

- the caller's file:line and function, captured at trace time;
- under vmap, which batch element printed (``batch 2/3``), from a ``custom_vmap``
  layer whose batched outputs JAX's own unrolling hands to each element's call;
- under pmap / shard_map, which device printed (the named axes' indices); with
  ``partitioned=True`` under a sharded ``jit``, the device too (:mod:`.shard_devices`).

Where a row goes is decided on the host, at run time (a jitted function may have
been traced long before): to the sink that a notebook installs (the print log of
``%load_ext jaxdbg``), else to ``sys.stdout`` exactly as ``jax.debug.print`` writes it.

``jax.debug.log`` (newer JAX: ``jax.debug.print`` whose rows are Python logging records
at INFO) is routed the same way; its rows carry their level, go to the print log, and
still reach Python logging where JAX's logger is enabled for that level, as JAX's do.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import logging
import sys
import threading
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from jaxdbg import config
from jaxdbg.capture import print_format, shard_devices
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine import program_shardings
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.internals import jax_api
from jaxdbg.job import debug_host, remote_prints, remote_stops
from jaxdbg.job import membership as job
from jaxdbg.runtime import jax_routes


@dataclasses.dataclass(frozen=True)
class CallSite:
    """Where one host call of a print or callback came from."""

    filename: str
    lineno: int
    function: str
    batch_index: tuple[int, ...] = ()
    batch_size: tuple[int, ...] = ()
    device: int | None = None
    device_axes: tuple[tuple[str, int], ...] = ()
    process: str | None = None  # "process 1/4" in a jax.distributed job
    # This call is the copy that the backward pass of ``jax.checkpoint`` recomputes
    # (JAX's own callbacks run again there too).
    recomputed: bool = False

    @functools.cached_property
    def location(self) -> str:
        return f"{frames_mod.display_filename(self.filename)}:{self.lineno}"

    def _info(self) -> StopInfo:
        return StopInfo(
            batch_index=self.batch_index,
            batch_size=self.batch_size,
            device=self.device,
            device_axes=self.device_axes,
            process=self.process,
        )

    @property
    def batch_label(self) -> str | None:
        return self._info().batch_label()

    @property
    def device_label(self) -> str | None:
        """``process 1/4 · device 3`` (the process only in a job of several)."""
        return self._info().place_label()

    def recomputation(self) -> "CallSite":
        return dataclasses.replace(self, recomputed=True)


@dataclasses.dataclass(frozen=True)
class PrintRow:
    """One line printed by ``jaxdbg.print`` (or a routed ``jax.debug.print``)."""

    text: str
    site: CallSite
    ordered: bool = False
    from_jax: bool = False  # a jax.debug.print call routed here
    partitioned: bool = False  # one shard's local value (``partitioned=True``)
    level: int | None = None  # a jax.debug.log row: its logging level

    @property
    def level_name(self) -> str | None:
        return None if self.level is None else logging.getLevelName(self.level)


# -- where rows go -------------------------------------------------------------------

_sink: Callable[[PrintRow], None] | None = None
_state_lock = threading.Lock()


def set_sink(sink: Callable[[PrintRow], None] | None) -> Callable[[PrintRow], None] | None:
    """Send rows to ``sink`` instead of stdout (None: back to stdout); the previous sink."""
    global _sink
    with _state_lock:
        previous, _sink = _sink, sink
    return previous


def set_routing(enabled: bool) -> None:
    """Whether ``jax.debug.print`` calls go to the print log too (``%jaxdbg print on|off``).

    Off, they write to stdout exactly as JAX does, including functions traced
    while it was on. ``jaxdbg.print`` keeps using the log either way.
    """
    config.PRINT_ROUTING.set(enabled)


def routing_enabled() -> bool:
    return config.PRINT_ROUTING.get()


def deliver(row: PrintRow) -> None:
    """Hand a row to the installed sink, or write its text as jax.debug.print does.

    In a job of several processes the row says which one printed it, and goes to the
    debug host when one serves the job (:mod:`jaxdbg.job.remote_prints`)."""
    in_job = job.current()
    if in_job is not None and row.site.process is None:
        row = dataclasses.replace(row, site=dataclasses.replace(row.site, process=in_job.label()))
        if remote_prints.forward(in_job, _row_message(row)):
            return
    _deliver_here(row)


def _deliver_here(row: PrintRow, prefix: str = "") -> None:
    sink = _sink
    if sink is not None and (routing_enabled() or not row.from_jax):
        try:
            sink(row)
            if row.level is not None and jax_api.debug_log_logger().isEnabledFor(row.level):
                _log(row)  # logging set up to show or keep these records still gets them
            return
        except Exception:  # a broken view must not lose the print
            pass
    if row.level is not None:
        _log(row, prefix)
        return
    sys.stdout.write(prefix + row.text + "\n")


def _log(row: PrintRow, prefix: str = "") -> None:
    """A ``jax.debug.log`` row as JAX hands it to Python logging: a record of JAX's
    debugging logger at the row's level, with the call's file and line."""
    logger = jax_api.debug_log_logger()
    assert row.level is not None
    record = logger.makeRecord(
        logger.name, row.level, row.site.filename, row.site.lineno, prefix + row.text, (), None, func=row.site.function
    )
    logger.handle(record)


def _row_message(row: PrintRow) -> dict[str, Any]:
    return {
        **dataclasses.asdict(row.site),
        "text": row.text,
        "ordered": row.ordered,
        "from_jax": row.from_jax,
        "level": row.level,
    }


def _from_another_process(message: dict[str, Any]) -> None:
    """A row that another process of the job printed, at the debug host; on stdout it
    starts with ``process 1/4 | ``."""
    site = CallSite(
        str(message["filename"]),
        int(message["lineno"]),
        str(message["function"]),
        tuple(message.get("batch_index") or ()),
        tuple(message.get("batch_size") or ()),
        message.get("device"),
        tuple((str(n), int(i)) for n, i in message.get("device_axes") or ()),
        message.get("process"),
    )
    level = message.get("level")
    row = PrintRow(
        str(message["text"]),
        site,
        bool(message.get("ordered")),
        bool(message.get("from_jax")),
        level=None if level is None else int(level),
    )
    _deliver_here(row, prefix=f"{site.process} | " if site.process else "")


remote_prints.receive_with(_from_another_process)


# -- staging: JAX's own unrolling, with each element's index known --------------------------
#
# jax.debug.callback under vmap unrolls into one call per batch element (its
# batching rule loops over the mapped axis). A ``custom_vmap`` layer around the
# callback does the same loop itself, so each unrolled call knows its index as a
# plain Python int and ships nothing extra: the host receives exactly the
# operands jax.debug.callback would. Nested vmaps nest the same way, in the same
# order as JAX's rule. A ``custom_jvp`` keeps differentiation out of it (the
# callback sees primal values, as JAX's own jvp rule arranges). Under
# ``jax.checkpoint`` the layer is staged again into the backward pass's recompute,
# as JAX stages its own callbacks there, and that copy's rows say ``recomputed``.

Batch = tuple  # ((index, size), ...) per vmap level, outermost first


HostCall = Callable[[Batch, bool, list], None]  # (batch, recomputed, operands)


def _unrolled_batch_layer(call_host: HostCall, known: Batch, recomputed: bool = False):
    @custom_vmap
    def call(operands):
        call_host(known, recomputed, operands)
        return jnp.zeros((), jnp.bool_)

    @call.def_vmap
    def unrolled(axis_size, in_batched, operands):
        (batched_operands,) = in_batched  # one flag per operand of the one argument
        # The batch axis may be split over devices by the program's types, which JAX's loop fails on.
        operands = [
            program_shardings.first_axis_whole(op) if batched else op for op, batched in zip(operands, batched_operands)
        ]
        for i in range(axis_size):
            one = [op[i] if batched else op for op, batched in zip(operands, batched_operands)]
            # Levels still to be unrolled are outside this one: they go first.
            _unrolled_batch_layer(call_host, ((i, axis_size),) + known, recomputed)(one)
        return jnp.zeros((axis_size,), jnp.bool_), True

    # Under jax.checkpoint the backward pass recomputes the forward one; the layer's
    # copy staged there is this same layer, traced again with ``recomputed`` set.
    jax_api.recompute_custom_vmap_as(unrolled, lambda: _unrolled_batch_layer(call_host, known, recomputed=True))
    return call


def _call_per_batch_element(call_host: HostCall, operands: list) -> None:
    layer = _unrolled_batch_layer(call_host, ())

    # Differentiation stays out of the layer: its jvp calls it with the primal values
    # themselves (no stop_gradient in between), so that under jax.checkpoint its
    # operands are saved or recomputed exactly as a JAX callback's would be.
    @jax.custom_jvp
    def host_call(operands):
        return layer(operands)

    @host_call.defjvp
    def primal_only(primals, tangents):
        (primal_operands,) = primals
        return layer(primal_operands), np.zeros((), dtype=jax.dtypes.float0)

    host_call(list(operands))


# -- the call ----------------------------------------------------------------------------

_current: contextvars.ContextVar[CallSite | None] = contextvars.ContextVar("jaxdbg_call_site", default=None)


def current_call() -> CallSite | None:
    """Inside a ``jaxdbg.callback`` function: where that call came from (else None)."""
    return _current.get()


@dataclasses.dataclass
class _Origin:
    filename: str
    lineno: int
    function: str
    device_axes: tuple[tuple[str, int], ...]  # (name, size) of pmap / shard_map axes

    @functools.cached_property
    def plain(self) -> CallSite:
        return CallSite(self.filename, self.lineno, self.function)

    def site(self, batch: Batch, devices) -> CallSite:
        if not batch and not self.device_axes:  # the common case, once per host call
            return self.plain
        batch_index = tuple(i for i, _ in batch)
        batch_size = tuple(n for _, n in batch)
        device: int | None = None
        named: tuple[tuple[str, int], ...] = ()
        if self.device_axes:
            positions = [int(np.asarray(d)) for d in devices]
            device = 0
            for (_, size), position in zip(self.device_axes, positions):
                device = device * size + position
            named = tuple((name, p) for (name, _), p in zip(self.device_axes, positions))
        return CallSite(self.filename, self.lineno, self.function, batch_index, batch_size, device, named)


def _origin(skip: int) -> tuple[_Origin, list[Any]]:
    """The first user frame above the caller, and the device axes in scope (trace time)."""
    stack = frames_mod.python_stack(skip + 1, True, 1) or frames_mod.python_stack(skip + 1, False, 1)
    frame = stack[0]
    axes = jax_api.device_axis_indices() if jax_api.is_tracing() else []
    return _Origin(
        frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, tuple((name, size) for name, size, _ in axes)
    ), [index for _, _, index in axes]


def _stage_host_call(
    host: Callable[..., None], origin_and_devices, args: tuple, kwargs: dict, ordered: bool, partitioned: bool = False
) -> None:
    origin, device_indices = origin_and_devices
    # JAX's own callback, also when a user rebound jax.debug.callback to jaxdbg's.
    jax_callback = functools.partial(jax_routes.CALLBACK.original(), ordered=ordered, partitioned=partitioned)
    flat, tree = jax.tree_util.tree_flatten((args, kwargs))
    traced_at = [i for i, leaf in enumerate(flat) if isinstance(leaf, jax.core.Tracer)]
    if not traced_at and not device_indices:
        # Eager, or only constants: nothing can be batched or per device.
        plain = origin.site((), ())
        jax_callback(lambda args, kwargs: host(plain, args, kwargs), args, kwargs)
        return
    # Each distinct tracer is shipped once, however often it is printed.
    distinct: dict[int, int] = {}
    for i in traced_at:
        distinct.setdefault(id(flat[i]), len(distinct))
    slot_of = [distinct[id(flat[i])] for i in traced_at]
    n_traced = len(distinct)

    firsts: dict[int, Any] = {}  # one operand per traced value, by identity
    for i in traced_at:
        firsts.setdefault(id(flat[i]), flat[i])
    # A partitioned call under a sharded jit (no named axes) learns its device from
    # its shard of a tiny positions operand.
    positioned = shard_devices.stage(firsts.values()) if partitioned and not device_indices else None
    n_devices = len(device_indices)
    # What call_host keeps holds no tracer: JAX keeps the rule that calls it past the
    # trace, and jax.checking_leaks() would report any tracer it holds as a leak.
    untraced = [None if isinstance(leaf, jax.core.Tracer) else leaf for leaf in flat]
    device_of = positioned[0] if positioned is not None else None

    def call_host(batch: Batch, recomputed: bool, operands: list) -> None:
        leaves = list(untraced)
        for i, slot in zip(traced_at, slot_of):
            leaves[i] = operands[slot]
        call_args, call_kwargs = jax.tree_util.tree_unflatten(tree, leaves)
        devices = operands[n_traced : n_traced + n_devices]
        positions = operands[n_traced + n_devices :]

        def on_host(devices, positions, args, kwargs):
            site = origin.site(batch, devices)
            if device_of is not None:
                site = dataclasses.replace(site, device=device_of.device(positions[0]))
            host(site.recomputation() if recomputed else site, args, kwargs)

        jax_callback(on_host, devices, positions, call_args, call_kwargs)

    extra = [positioned[1]] if positioned is not None else []
    _call_per_batch_element(call_host, list(firsts.values()) + list(device_indices) + extra)


def stage_print(
    fmt: str,
    args: tuple,
    kwargs: dict,
    ordered: bool,
    partitioned: bool,
    skip: int,
    from_jax: bool,
    level: int | None = None,
) -> None:
    print_format.check_arguments(fmt, args, kwargs)  # the same errors, at the same (trace) time
    debug_host.join_job()  # in a job, rows may travel to its debug host
    placeholders = print_format.has_placeholders(fmt)
    printoptions = np.get_printoptions()

    def host(site: CallSite, args, kwargs) -> None:
        deliver(
            PrintRow(
                print_format.format_row(fmt, printoptions, placeholders, args, kwargs),
                site,
                ordered,
                from_jax,
                partitioned,
                level,
            )
        )

    _stage_host_call(host, _origin(skip + 1), args, kwargs, ordered, partitioned)


def first_of_two_calls(jax_own: Callable[..., Any], args: tuple, options: dict) -> Any:
    """JAX's own first call of the two-call form (``jax.debug.print(ordered=True)``).

    Called for what it checks: its errors for misuse (positional arguments in the
    first call, or a JAX without the two-call form) are the errors jaxdbg raises.
    """
    if args:
        return jax_own(None, *args, **options)
    return jax_own(**options)


def debug_print(
    fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False, **kwargs: Any
) -> Any:
    """``jax.debug.print`` that also records the call's file:line, batch element and device.

    In a script or terminal it writes exactly what ``jax.debug.print`` writes; with
    ``%load_ext jaxdbg`` in a notebook each row goes to the cell's print log. The
    two-call form ``jaxdbg.print(ordered=True)("x: {}", x)`` works where this JAX's
    ``jax.debug.print`` has it. ``partitioned=True`` prints each shard's local value
    on its own device, without gathering the array; each row names that device.
    """
    if fmt is None:
        first_of_two_calls(jax_routes.PRINT.original(), args, dict(ordered=ordered, partitioned=partitioned, **kwargs))

        def print_with_options(fmt: str, *args: Any, **kwargs: Any) -> None:
            stage_print(fmt, args, kwargs, ordered, partitioned, skip=1, from_jax=False)

        return print_with_options
    stage_print(fmt, args, kwargs, ordered, partitioned, skip=1, from_jax=False)
    return None


def _callback(fn: Callable[..., Any], args: tuple, kwargs: dict, ordered: bool, partitioned: bool) -> None:
    if not callable(fn):
        raise TypeError(f"first argument to jax.debug.callback must be callable, but got an object of type {type(fn)}")

    def host(site: CallSite, args, kwargs) -> None:
        token = _current.set(site)
        try:
            fn(*args, **kwargs)
        finally:
            _current.reset(token)

    _stage_host_call(host, _origin(2), args, kwargs, ordered, partitioned)


def callback(
    fn: Callable[..., Any] | None = None, *args: Any, ordered: bool = False, partitioned: bool = False, **kwargs: Any
) -> Any:
    """``jax.debug.callback``; inside ``fn``, :func:`current_call` says where the call came from.

    The two-call form ``jaxdbg.callback(ordered=True)(fn, x)`` works where this JAX's
    ``jax.debug.callback`` has it.
    """
    if fn is None:
        first_of_two_calls(
            jax_routes.CALLBACK.original(), args, dict(ordered=ordered, partitioned=partitioned, **kwargs)
        )

        def callback_with_options(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
            _callback(fn, args, kwargs, ordered, partitioned)

        return callback_with_options
    _callback(fn, args, kwargs, ordered, partitioned)
    return None


@contextlib.contextmanager
def sink_installed(sink: Callable[[PrintRow], None]) -> Iterator[None]:
    """Route rows to ``sink`` inside the block (tests, scripts that collect prints)."""
    previous = set_sink(sink)
    try:
        yield
    finally:
        set_sink(previous)


def write_log_line(text: str, frame: frames_mod.Frame, info: StopInfo) -> None:
    """A logpoint's line, as a row of the print log (stdout without one)."""
    site = CallSite(
        frame.filename, frame.lineno, frame.function, info.batch_index, info.batch_size, info.device, info.device_axes
    )
    deliver(PrintRow(text, site))


remote_stops.write_logs_with(write_log_line)  # the logpoints of this process's stops served at a job's host
