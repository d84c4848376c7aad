"""The stop a NaN (an Inf) opens: its frames, with values wherever JAX's re-run computed
them, and the one line that names it.

JAX's op-by-op re-run of a failing call raises from the primitive that made the value,
inside the user's functions, which then hold concrete values (or tracers that carry
them: a gradient's forward value, a shard_map block). Where the re-run reached the
NaN's line, the stop opens on those frames. Where it did not (the backward pass, a
shard_map's transpose, a value only the compiled program made), the stop opens at the
line as JAX traced it, whose names say why they have no value.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxdbg.capture import nan_location, postmortem, source_locals
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine import registry, stop_serving
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.runtime import notices
from jaxdbg.runtime.errors import DebuggerQuit

#: A local of a line JAX's re-run did not reach (the backward pass, a shard_map's
#: transpose): the compiled call computed it, and kept it on the device.
NOT_REACHED = frames_mod.Unavailable(
    "computed only inside the compiled call that made the NaN; JAX's step-by-step re-run "
    "did not reach this line, so no value of it reached Python"
)
#: A local of the re-run's frames that is a tracer carrying no value of its own.
TRACED_NOT_RUN = frames_mod.Unavailable(
    "a tracer of JAX's step-by-step re-run of the failing call that carries no value "
    "(a gradient's tangent, or a block of a device not kept)"
)


def _in_nan_words(value: Any) -> Any:
    """A local with every "outside this breakpoint's body" mark said as a NaN stop's."""
    if value is frames_mod.OUTSIDE_BODY:
        return TRACED_NOT_RUN
    if isinstance(value, frames_mod.Unavailable):
        return value

    def said(leaf: Any) -> Any:
        return TRACED_NOT_RUN if leaf is frames_mod.OUTSIDE_BODY else leaf

    try:
        return jax.tree_util.tree_map(said, value, is_leaf=lambda v: isinstance(v, frames_mod.Unavailable))
    except Exception:  # a value jax cannot walk as a tree: it holds no mark
        return value


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
            Frame(site.filename, site.lineno, name, dict.fromkeys(names, NOT_REACHED), module_globals, source, 1)
        )
    return frames


def reached(origin: nan_location.NanOrigin, frames: list[Frame]) -> bool:
    where = origin.where
    return where is not None and any((f.filename, f.lineno) == (where.filename, where.lineno) for f in frames)


def stop_frames(origin: nan_location.NanOrigin, error: BaseException) -> list[Frame]:
    """JAX's op-by-op re-run's frames when it reached the NaN's line (they hold values,
    or say why not); else the line's frames as traced."""
    rerun = postmortem.frames_from_traceback(error.__traceback__, origin.devices[0] if origin.devices else None)
    where = origin.where
    if where is not None and reached(origin, rerun):
        while rerun and (rerun[0].filename, rerun[0].lineno) != (where.filename, where.lineno):
            rerun.pop(0)
        for frame in rerun:  # every one is below the watched call, inside JAX's re-run
            frame.locals = {name: _in_nan_words(value) for name, value in frame.locals.items()}
        return rerun
    traced = _origin_frames(origin)
    return traced or rerun


def origin_of_rerun(error: BaseException, primitive: str, infs: bool) -> nan_location.NanOrigin | None:
    """Where JAX's re-run raised, as an origin (when checkify could not trace the call
    again): the user's frames of its traceback, innermost first."""
    from jaxdbg.capture.checkify_errors import SourceFrame

    frames = postmortem.frames_from_traceback(error.__traceback__)
    if not frames:
        return None
    sites = tuple(SourceFrame(f.filename, f.lineno, f.function) for f in frames)
    return nan_location.NanOrigin(primitive, sites, value="Inf" if infs else "NaN")


def serve(origin: nan_location.NanOrigin, error: BaseException, backend: str | None, options: dict[str, Any]) -> None:
    """Open the stop (here, or in a job at the process that made the value), after the
    caller's frames, which are live here."""
    if not origin.here:
        return  # another process of the job made it: that one stops, named in its banner
    callers = [frames_mod.live_frame(f) for f in frames_mod.python_stack(1, True, None)]
    frames = stop_frames(origin, error) + callers
    if not frames:
        notices.notice(origin.describe() + ", at no line of your code that JAX kept")
        return
    info = StopInfo(
        reason=origin.describe(),
        device=origin.devices[0] if origin.devices else None,
        nothing_to_quit=f"the call has failed already, and its {type(error).__name__} goes on",
    )
    registry.check_options(backend, options)
    try:
        # As a breakpoint's stop: in a jax.distributed job it names the process and is
        # served at the job's debug host (with no breakpoint number there).
        stop_serving.serve(frames, info, backend, options)
    except DebuggerQuit:
        pass  # the call has failed already: JAX's error says so, as after a continue
