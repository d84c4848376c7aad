"""``%jaxdbg nans on`` / ``%jaxdbg infs on``: a NaN (an Inf) opens the debugger at the
line (and device) that made it, also under ``pmap``, ``shard_map``, sharded ``jit`` and
in a gradient's backward pass.

JAX's ``jax_debug_nans`` / ``jax_debug_infs`` stay the detectors, each switched by its
own magic as JAX's flags are: a call whose output holds a NaN (an Inf) raises
``FloatingPointError``, which names which. While the watch is on (either flag, set by
jaxdbg), ``jax.jit`` and ``jax.pmap`` make functions whose call, when JAX raises that
error, asks :mod:`nan_location` where the value came from (checkify's NaN checks, or
those turned to Infs, on the same inputs) and opens a stop there:
its reason names the primitive, the devices and the pass; its frames are those of
JAX's op-by-op re-run when that reached the line (with their values: the tracers
it left in them hold the stopped device's block under shard_map, the forward value
under a gradient), else the line itself and the caller's frames. The error is
raised after the stop, as before.
Where JAX's re-run already found the line on one device in the forward pass (a
plain jit), the post-mortem after the cell shows it as before, and no stop opens here.
Under a sharded jit, JAX's re-run checks each device's buffer of each primitive's
output; the failing checks it records (:func:`jax_nan_checks.failed_checks_since`) name the
devices, and the stop opens here, on the re-run's frames.

Functions made by ``jax.jit`` / ``jax.pmap`` before the watch was turned on keep
JAX's behaviour (the post-mortem on JAX's own re-run). A call that succeeds costs one
more Python call; the locating runs only once a NaN or an Inf was raised.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax

from jaxdbg.capture import nan_in_job, nan_location, postmortem, source_locals
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine import registry, stop_serving
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.internals import jax_nan_checks
from jaxdbg.job import debug_host
from jaxdbg.runtime import jax_routes, notices
from jaxdbg.runtime.errors import DebuggerQuit
from jaxdbg.runtime.guarded_calls import format_exception, guarded

#: Set on a FloatingPointError whose NaN a stop was opened for (its NanOrigin), so the
#: post-mortem after the cell does not open another.
SERVED = postmortem.NAN_SERVED

_options: dict[str, Any] = {"backend": None, "options": {}}


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
        if enabled() and jax.process_count() > 1:
            return self._call_in_job(args, kwargs)
        # Inside another trace nothing runs, so nothing raises: the outer call watches.
        mark = jax_nan_checks.failed_checks_mark()
        try:
            return self._compiled(*args, **kwargs)
        except FloatingPointError as error:
            if enabled():
                checks = jax_nan_checks.failed_checks_since(mark)  # JAX's, before ours run
                located = self._locate(args, kwargs, infs=is_inf_error(error))
                if located is not None and self._pmap_options is None:
                    located = with_rerun_devices(located, checks)
                if located is not None and not jax_found_it(located, error):
                    setattr(error, SERVED, located)
                    _serve(located, error)
            raise

    def _call_in_job(self, args: tuple, kwargs: dict) -> Any:
        """In a jax.distributed job of several processes: JAX's op-by-op re-run of a
        failing call leaves the job's collectives waiting on each other, and nothing
        after it (the locating included) can run. So JAX's checks stay off for the call
        and the same check of its outputs is made here, on every process alike."""
        flags: Any = jax.config  # each flag is an attribute JAX adds at run time
        nans, infs = bool(flags.jax_debug_nans), bool(flags.jax_debug_infs)
        with nan_location.without_jax_nan_checks():
            out = self._compiled(*args, **kwargs)
            if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(out)):
                return out  # inside another trace: the outer call checks
            kind = nan_location.nonfinite_in(out, nans, infs)
        if kind is None:
            return out
        name = getattr(self._fun, "__name__", "the function")
        error = FloatingPointError(f"invalid value ({kind}) encountered in {name}, checked on every process of the job")
        located = self._locate(args, kwargs, infs=kind == "inf")
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

    def _locate(self, args: tuple, kwargs: dict, infs: bool) -> nan_location.NanOrigin | None:
        if self._pmap_options is None:
            target, options = self._compiled, None
        else:
            target, options = self._fun, self._pmap_options

        def run() -> nan_location.NanOrigin | None:
            return nan_location.locate(target, args, kwargs, pmap_options=options, infs=infs)

        def failed(exc: BaseException) -> None:
            notices.notice(f"could not locate the {'Inf' if infs else 'NaN'}: {format_exception(exc)}")
            return None

        return guarded(run, failed)

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
    return jax_routes.JIT.replacement is _watching_jit


def set_enabled(on: bool, backend: str | None = None, *, infs: bool = False, **backend_options: Any) -> None:
    """Turn JAX's NaN checks (``infs``: its Inf checks) on or off, and the watch with
    them: it stays on while either kind of check is on."""
    jax.config.update("jax_debug_infs" if infs else "jax_debug_nans", bool(on))
    if on:
        jax_nan_checks.record_failed_checks()  # the devices of a sharded jit's NaN
        _options.update(backend=backend, options=backend_options)
        if not jax_routes.JIT.install(_watching_jit) and not enabled():
            notices.notice(
                "jax.jit is taken by another jaxdbg feature (a %%checkify cell); "
                "NaNs are located only by JAX's own checks until it ends"
            )
        jax_routes.PMAP.install(_watching_pmap)
    elif not postmortem.nan_debugging_enabled():  # the other kind still checked: still watched
        if enabled():
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


# -- the stop --------------------------------------------------------------------------


def _origin_frames(origin: nan_location.NanOrigin) -> list[Frame]:
    """The NaN's line (and the user's calls around it) as JAX traced them: no values,
    but the functions' local names, each saying why it has none."""
    frames = []
    for site in origin.frames:
        module_globals = frames_mod.module_globals(site.filename)
        source = frames_mod.source_lines(site.filename, module_globals)
        name = site.function.rsplit(".", 1)[-1]  # JAX keeps the qualified name; frames show co_name
        names = source_locals.local_names(source, site.lineno)
        frames.append(
            Frame(site.filename, site.lineno, name, dict.fromkeys(names, TRACED_NOT_RUN), module_globals, source, 1)
        )
    return frames


def _reached(origin: nan_location.NanOrigin, frames: list[Frame]) -> bool:
    where = origin.where
    return where is not None and any((f.filename, f.lineno) == (where.filename, where.lineno) for f in frames)


def jax_found_it(origin: nan_location.NanOrigin, error: BaseException) -> bool:
    """Whether JAX's own op-by-op re-run already stopped at the line, on one device and
    in the forward pass: then the post-mortem after the cell shows it, with its values,
    and a stop here would add nothing (it would not say the line's derivative made it)."""
    if origin.devices or origin.backward or origin.derivative:
        return False
    return _reached(origin, postmortem.frames_from_traceback(error.__traceback__))


#: A local of a frame inside JAX's re-run whose tracer holds no value of one device.
TRACED_NOT_RUN = frames_mod.Unavailable(
    "JAX traced this line into the computation that failed, whose values stay on the "
    "device; a jaxdbg.breakpoint() on the line shows them"
)


def stop_frames(origin: nan_location.NanOrigin, error: BaseException) -> list[Frame]:
    """JAX's op-by-op re-run's frames when it reached the NaN's line (they hold values,
    or say why not); else the line's frames as traced."""
    rerun = postmortem.frames_from_traceback(error.__traceback__, origin.devices[0] if origin.devices else None)
    where = origin.where
    if where is not None and _reached(origin, rerun):
        while rerun and (rerun[0].filename, rerun[0].lineno) != (where.filename, where.lineno):
            rerun.pop(0)
        for frame in rerun:  # every one is below the watched call, inside JAX's re-run
            frame.locals = {
                name: TRACED_NOT_RUN if value is frames_mod.OUTSIDE_BODY else value
                for name, value in frame.locals.items()
            }
        return rerun
    traced = _origin_frames(origin)
    return traced or rerun


def _serve(origin: nan_location.NanOrigin, error: BaseException) -> None:
    if not origin.here:
        return  # another process of the job made it: that one stops, named in its banner
    # The traceback so far ends at the watched call; the caller's frames are live here.
    callers = [frames_mod.live_frame(f) for f in frames_mod.python_stack(1, True, None)]
    frames = stop_frames(origin, error) + callers
    if not frames:
        notices.notice(origin.describe() + ", at no line of your code that JAX kept")
        return
    info = StopInfo(reason=origin.describe(), device=origin.devices[0] if origin.devices else None)
    registry.check_options(_options["backend"], _options["options"])
    try:
        # As a breakpoint's stop: in a jax.distributed job it names the process and is
        # served at the job's debug host (with no breakpoint number there).
        stop_serving.serve(frames, info, _options["backend"], _options["options"])
    except DebuggerQuit:
        pass  # the call has failed already: JAX's error says so, as after a continue
