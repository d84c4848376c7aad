"""Post-mortem debugging: the debugger on the frames of an exception's traceback.

``jaxdbg.post_mortem()`` is ``%debug`` for jaxdbg: it opens the best backend
(the panel in a notebook, a prompt in a terminal) on the last exception. Values
are concrete where the code ran eagerly, tracers where it was being traced.

With JAX's NaN checks on (``%jaxdbg nans on``, ``set_nan_debugging(True)``, or
``jax_debug_nans`` / ``jax_debug_infs`` set any other way) a jitted call that produces a NaN makes
JAX re-run it op by op; the FloatingPointError it raises is thrown from that eager
re-run, so its traceback holds the user's frames with real values, innermost at
the line that produced the NaN. The extension opens the debugger on them after the
cell's traceback is shown (an IPython ``post_run_cell`` event, so IPython's single
custom-exception slot stays free for others).
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import jax

from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine import registry
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.internals import ipython_api, jax_nan_checks
from jaxdbg.runtime import notices


def frames_from_traceback(tb: types.TracebackType | None, device: int | None = None) -> list[Frame]:
    """The user's frames of a traceback, innermost first, at the lines that raised. A
    local that JAX's eager re-run (or an eager gradient) holds as a tracer gets the value
    the tracer carries: the forward value under a gradient, ``device``'s block (its
    position in the mesh) under shard_map."""
    entries = []
    while tb is not None:
        entries.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    frames = []
    for frame, lineno in reversed(entries):
        if frames_mod.is_hidden(frame):
            continue
        built = frames_mod.live_frame(frame)
        built.lineno = lineno
        for name, value in built.locals.items():
            if _holds_outside_body(value):
                built.locals[name] = _carried_value(frame.f_locals.get(name), device, value)
        frames.append(built)
    return frames


def _holds_outside_body(value: Any) -> bool:
    """Whether a built local is, or holds as a leaf (a dict of tracers), a tracer of
    another trace than the frame's."""
    if value is frames_mod.OUTSIDE_BODY:
        return True
    leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda v: isinstance(v, frames_mod.Unavailable))
    return any(leaf is frames_mod.OUTSIDE_BODY for leaf in leaves)


def _carried_value(value: Any, device: int | None, otherwise: Any) -> Any:
    """The value with each tracer leaf replaced by the concrete value it carries; a leaf
    that carries none stays unavailable, saying why."""
    leaves, tree = jax.tree_util.tree_flatten(value)
    if not leaves:
        return otherwise
    concrete = [jax_nan_checks.rerun_value(leaf, device) for leaf in leaves]
    if all(c is None for c in concrete):
        return otherwise
    return jax.tree_util.tree_unflatten(tree, [c if c is not None else frames_mod.OUTSIDE_BODY for c in concrete])


def _last_exception() -> BaseException | None:
    current = sys.exc_info()[1]
    if current is not None:
        return current
    last = getattr(sys, "last_exc", None)  # Python 3.12+
    return last if last is not None else getattr(sys, "last_value", None)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"post-mortem: {type(exc).__name__}" + (f": {text[0]}" if text else "")


def post_mortem(
    exc: BaseException | types.TracebackType | None = None, *, backend: str | None = None, **backend_options: Any
) -> None:
    """Open the debugger on the frames of ``exc`` (default: the last exception), like ``%debug``."""
    if exc is None:
        exc = _last_exception()
    if exc is None:
        raise ValueError("jaxdbg.post_mortem: there is no exception to debug")
    tb: types.TracebackType | None
    if isinstance(exc, types.TracebackType):
        tb, reason = exc, "post-mortem"
    else:
        tb, reason = exc.__traceback__, _reason(exc)
    frames = frames_from_traceback(tb)
    if not frames:
        notices.notice("the traceback has no frames of your code to show")
        return
    registry.check_options(backend, backend_options)
    session = Session(frames, StopInfo(reason=reason, nothing_to_quit="the computation has ended already"))
    registry.serve_with_backend(session, backend, backend_options)


# -- NaN post-mortem -------------------------------------------------------------------------

#: The attribute the NaN watch sets on a FloatingPointError it opened a stop for.
NAN_SERVED = "jaxdbg_nan_origin"
_nan_switch: list[Callable[[bool], None]] = []


def register_nan_switch(switch: Callable[[bool], None]) -> None:
    """``jaxdbg.capture.nan_watch`` hands down its switch (it imports this module)."""
    _nan_switch[:] = [switch]


def set_nan_debugging(enabled: bool) -> None:
    """Turn JAX's NaN checks on or off, with jaxdbg's NaN watch (a NaN then opens the
    debugger at the line and device that made it; the same switch as ``%jaxdbg nans on|off``)."""
    if _nan_switch:
        _nan_switch[0](bool(enabled))
    else:
        jax.config.update("jax_debug_nans", bool(enabled))


def nan_debugging_enabled() -> bool:
    flags: Any = jax.config  # each flag is an attribute JAX adds at run time
    return bool(flags.jax_debug_nans) or bool(flags.jax_debug_infs)


def _after_cell(result: Any = None) -> None:
    exc = getattr(result, "error_in_exec", None)
    if not isinstance(exc, FloatingPointError) or not nan_debugging_enabled():
        return
    if getattr(exc, NAN_SERVED, None) is not None:  # the NaN watch stopped at it already
        return
    try:
        post_mortem(exc)
    except KeyboardInterrupt:
        notices.notice("post-mortem interrupted")


_unregister: list[Callable[[], None]] = []


def load(shell: Any) -> None:
    _unregister.append(ipython_api.register_cell_events(shell, post_run_cell=_after_cell))


def unload(shell: Any) -> None:
    while _unregister:
        _unregister.pop()()
