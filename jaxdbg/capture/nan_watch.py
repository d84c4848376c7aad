"""``%jaxdbg nans on`` / ``%jaxdbg infs on``: a NaN (an Inf) opens the debugger at the
line (and device) that made it, during the call, for every compiled call, also under
``pmap``, ``shard_map``, sharded ``jit`` and in a gradient's backward pass.

JAX's ``jax_debug_nans`` / ``jax_debug_infs`` stay the detectors, each switched by its
own magic as JAX's flags are: they check every compiled call's outputs, whoever made
the function and when (``jax.jit`` before the watch, ``nnx.jit``, ``eqx.filter_jit``),
and hand a failing call to one JAX function, where :func:`_on_failed_call` takes it
(:mod:`jax_nan_reruns`, which also keeps JAX's checks on where JAX turns them off by
mistake). There JAX's op-by-op re-run raises from the primitive that made the value;
:mod:`nan_location` then says where it came from (checkify's NaN checks, or those
turned to Infs, on the same inputs), and :mod:`nan_stop` opens the stop: its reason
names the primitive, the devices and the pass; its frames are those of the re-run
when that reached the line (with their values), else the line itself and the caller's
frames. The error is raised after the stop, once.

Under a sharded jit, JAX's re-run checks each device's buffer of each primitive's
output; the failing checks it records (:func:`jax_nan_checks.failed_checks_since`) name the
devices. A ``jax.pmap`` made while the watch is on is located per device with its
options (:class:`WatchedFunction`); in a ``jax.distributed`` job of several processes,
functions jitted or pmapped while the watch is on check their outputs themselves, since
JAX's re-run would leave the job's collectives waiting. A call that succeeds costs what
JAX's flag costs; the locating runs only once a NaN or an Inf was raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from typing import Any, Callable, Iterator, NoReturn

import jax
import numpy as np

from jaxdbg.capture import nan_in_job, nan_location, nan_stop, postmortem
from jaxdbg.internals import jax_api, jax_nan_checks, jax_nan_reruns
from jaxdbg.job import debug_host
from jaxdbg.runtime import jax_routes, notices
from jaxdbg.runtime.guarded_calls import format_exception, guarded

#: Set on a FloatingPointError whose NaN a stop was opened for (its NanOrigin), so the
#: post-mortem after the cell does not open another.
SERVED = postmortem.NAN_SERVED

_options: dict[str, Any] = {"backend": None, "options": {}}
_watching = [False]


class WatchedFunction:
    """A jitted or pmapped function whose NaN errors open a stop at their origin; every
    attribute (``lower``, ``trace``, ``eval_shape``...) is the wrapped function's."""

    def __init__(
        self, compiled: Callable[..., Any], fun: Callable[..., Any], pmap_options: dict[str, Any] | None
    ) -> None:
        self._compiled = compiled
        self._fun = fun
        self._pmap_options = pmap_options
        functools.update_wrapper(self, compiled)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of a traceback
        if enabled() and jax.process_count() > 1:
            return self._call_in_job(args, kwargs)
        if self._pmap_options is None:
            return self._compiled(*args, **kwargs)  # a failure stops in _on_failed_call
        # A pmap's failure is located here, device by device, with its options.
        with _rerun_left_to_jax():
            try:
                return self._compiled(*args, **kwargs)
            except FloatingPointError as error:
                if enabled() and getattr(error, SERVED, None) is None:
                    located = _locate(self._fun, args, kwargs, is_inf_error(error), self._pmap_options)
                    if located is not None:
                        setattr(error, SERVED, located)
                        _serve(located, error)
                raise

    def _call_in_job(self, args: tuple, kwargs: dict) -> Any:
        """In a jax.distributed job of several processes: JAX's op-by-op re-run of a
        failing call leaves the job's collectives waiting on each other, and nothing
        after it (the locating included) can run. So JAX's checks stay off for the call
        and the same check of its outputs is made here, on every process alike."""
        __tracebackhide__ = True
        flags: Any = jax.config  # each flag is an attribute JAX adds at run time
        nans, infs = bool(flags.jax_debug_nans), bool(flags.jax_debug_infs)
        with nan_location.without_jax_nan_checks():
            out = self._compiled(*args, **kwargs)
            if jax_api.holds_tracer(out):
                return out  # inside another trace: the outer call checks
            kind = nan_location.nonfinite_in(out, nans, infs)
        if kind is None:
            return out
        name = getattr(self._fun, "__name__", "the function")
        error = FloatingPointError(f"invalid value ({kind}) encountered in {name}, checked on every process of the job")
        located = _locate(self._compiled, args, kwargs, kind == "inf")
        if located is not None and not located.devices and self._pmap_options is None:
            located = self._devices_in_job(located, args, kwargs, kind)
        if located is not None:
            setattr(error, SERVED, located)
            _serve(located, error)
        raise error

    def _devices_in_job(
        self, origin: nan_location.NanOrigin, args: tuple, kwargs: dict, kind: str
    ) -> nan_location.NanOrigin:
        """A sharded jit's origin with the devices that made it, and whether this
        process holds the first (the one that stops)."""

        def run() -> tuple[int, ...]:
            return nan_in_job.devices_in_job(self._compiled, args, kwargs, origin.primitive, origin.where, kind)

        def failed(exc: BaseException) -> tuple[int, ...]:
            notices.notice(f"could not tell which device made the {origin.value}: {format_exception(exc)}")
            return ()

        devices = guarded(run, failed)
        if not devices:
            return origin
        return dataclasses.replace(origin, devices=devices, here=nan_in_job.held_here(devices[0]))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:  # a jitted method
        return self if instance is None else functools.partial(self, instance)


def with_rerun_devices(
    origin: nan_location.NanOrigin, checks: list[jax_nan_checks.FailedCheck]
) -> nan_location.NanOrigin:
    """Under a sharded jit, the devices JAX's op-by-op re-run found the NaN (Inf) on.

    checkify's checks of a jitted program name no device; JAX's re-run runs each
    primitive on the whole sharded arrays and checks each device's buffer of its
    output. The last check that failed is the primitive's that made it (the first is
    the call's own output, which a collective may have spread); its devices are named
    by their JAX ids, as print rows under a sharded jit are. A call on one device keeps
    no device, as before."""
    if origin.devices or len(checks) < 2:  # located per device already, or not re-run
        return origin
    made = checks[-1]
    if made.spread < 2 or not made.devices:
        return origin
    return dataclasses.replace(origin, devices=made.devices)


def _watching_jit(*args: Any, **kwargs: Any) -> Any:
    jit = jax_routes.JIT.original()
    if not args:  # jax.jit(static_argnums=...) used as a decorator factory
        return lambda fun: _watching_jit(fun, **kwargs)
    _join_job()
    return WatchedFunction(jit(*args, **kwargs), args[0], None)


def _watching_pmap(*args: Any, **kwargs: Any) -> Any:
    pmap = jax_routes.PMAP.original()
    if not args:
        return lambda fun: _watching_pmap(fun, **kwargs)
    fun, rest = args[0], args[1:]
    _join_job()
    if rest:  # pmap's options given positionally: checked as JAX would, not per device
        return WatchedFunction(pmap(*args, **kwargs), fun, None)
    return WatchedFunction(pmap(fun, **kwargs), fun, dict(kwargs))


def _join_job() -> None:
    """In a jax.distributed job, as a breakpoint does when traced: the debug host starts
    watching for the other processes' stops, which a NaN stop may be one of."""
    debug_host.join_job()


def is_inf_error(error: BaseException) -> bool:
    """Whether JAX's FloatingPointError is its Inf check's: ``invalid value (inf)
    encountered in f`` (its NaN check's reads ``(nan)``)."""
    return "(inf)" in str(error)


def enabled() -> bool:
    return _watching[0]


def set_enabled(on: bool, backend: str | None = None, *, infs: bool = False, **backend_options: Any) -> None:
    """Turn JAX's NaN checks (``infs``: its Inf checks) on or off, and the watch with
    them: it stays on while either kind of check is on."""
    jax.config.update("jax_debug_infs" if infs else "jax_debug_nans", bool(on))
    if on:
        jax_nan_checks.record_failed_checks()  # the devices of a sharded jit's NaN
        jax_nan_reruns.keep_output_checks_on()  # JAX turns its own off after some contexts
        jax_nan_reruns.intercept_reruns(_on_failed_call)
        _options.update(backend=backend, options=backend_options)
        _watching[0] = True
        # Made from now on: a pmap locates per device; either, in a job, checks itself.
        # (A %%checkify cell may hold jax.jit: its calls still stop, at _on_failed_call.)
        jax_routes.JIT.install(_watching_jit)
        jax_routes.PMAP.install(_watching_pmap)
    elif not postmortem.nan_debugging_enabled():  # the other kind still checked: still watched
        _watching[0] = False
        jax_nan_reruns.intercept_reruns(None)
        if jax_routes.JIT.replacement is _watching_jit:
            jax_routes.JIT.uninstall()
        if jax_routes.PMAP.replacement is _watching_pmap:
            jax_routes.PMAP.uninstall()


postmortem.register_nan_switch(set_enabled)


def debug_nans(enabled: bool = True, backend: str | None = None, **backend_options: Any) -> None:
    """``%jaxdbg nans on`` outside a notebook: JAX's ``jax_debug_nans`` on (or off), and a
    NaN made by a function jitted or pmapped from then on opens the debugger (``backend``,
    default the best one) at the line and device that made it."""
    set_enabled(enabled, backend, **backend_options)


def debug_infs(enabled: bool = True, backend: str | None = None, **backend_options: Any) -> None:
    """``%jaxdbg infs on``: as :func:`debug_nans`, for Infs (JAX's ``jax_debug_infs``)."""
    set_enabled(enabled, backend, infs=True, **backend_options)


# -- every failing call ------------------------------------------------------------------

_reruns = threading.local()  # .depth: inside a re-run (or a pmap that locates its own)


@contextlib.contextmanager
def _rerun_left_to_jax() -> Iterator[None]:
    """Failing calls in here are re-run as JAX does, silently, and stop nowhere: the
    caller stops for them (a re-run's nested calls; a pmap, located per device)."""
    _reruns.depth = getattr(_reruns, "depth", 0) + 1
    try:
        yield
    finally:
        _reruns.depth -= 1


def _on_failed_call(error: BaseException, fun: Callable[..., Any], args: tuple, kwargs: dict) -> NoReturn:
    """Every compiled call whose outputs JAX's checks found a NaN (an Inf) in, while the
    watch is on, whoever made the jitted function and when: the re-run raises from the
    primitive that made it, and the stop opens there before the error goes on."""
    if getattr(_reruns, "depth", 0) or not enabled():
        jax_nan_reruns.rerun_deoptimized(error, fun, args, kwargs)
    checks_from = max(0, jax_nan_checks.failed_checks_mark() - 1)  # the call's own output check
    with _rerun_left_to_jax():
        try:
            jax_nan_reruns.rerun_deoptimized(error, fun, args, kwargs)
        except FloatingPointError as raised:
            _stop_for(raised, fun, args, kwargs, jax_nan_checks.failed_checks_since(checks_from))
            raise


def _stop_for(
    error: BaseException, fun: Callable[..., Any], args: tuple, kwargs: dict, checks: list[jax_nan_checks.FailedCheck]
) -> None:
    infs = is_inf_error(error)
    program, arrays = _on_arrays(fun, args, kwargs)
    located = _locate(program, arrays, {}, infs)
    if located is None:  # checkify could not say: where JAX's re-run raised
        located = nan_stop.origin_of_rerun(error, jax_nan_reruns.made_by(error) or "?", infs)
    if located is None:
        return
    located = with_rerun_devices(located, checks)
    setattr(error, SERVED, located)
    _serve(located, error)


def _on_arrays(fun: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Callable[..., Any], tuple]:
    """The failing call as a jitted function of its arrays alone, and those arrays: every
    other argument (static ones, a Module's graph, Python numbers) is held as it was
    passed, which is how the call ran."""
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
    holes = [i for i, leaf in enumerate(leaves) if isinstance(leaf, (jax.Array, np.ndarray))]

    def on_arrays(*arrays: Any) -> Any:
        filled = list(leaves)
        for i, array in zip(holes, arrays):
            filled[i] = array
        call_args, call_kwargs = jax.tree_util.tree_unflatten(tree, filled)
        return fun(*call_args, **call_kwargs)

    return jax_routes.JIT.original()(on_arrays), tuple(leaves[i] for i in holes)


def _locate(
    target: Callable[..., Any], args: tuple, kwargs: dict, infs: bool, pmap_options: dict[str, Any] | None = None
) -> nan_location.NanOrigin | None:
    def run() -> nan_location.NanOrigin | None:
        return nan_location.locate(target, args, kwargs, pmap_options=pmap_options, infs=infs)

    def failed(exc: BaseException) -> None:
        notices.notice(f"could not locate the {'Inf' if infs else 'NaN'}: {format_exception(exc)}")
        return None

    return guarded(run, failed)


# -- the stop --------------------------------------------------------------------------

TRACED_NOT_RUN = nan_stop.TRACED_NOT_RUN
NOT_REACHED = nan_stop.NOT_REACHED
stop_frames = nan_stop.stop_frames


def _serve(origin: nan_location.NanOrigin, error: BaseException) -> None:
    nan_stop.serve(origin, error, _options["backend"], _options["options"])
