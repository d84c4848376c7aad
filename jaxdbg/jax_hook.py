"""Make existing ``jax.debug.breakpoint(...)`` calls open jaxdbg.

Two routes, so that every call reaches us: ``jax.debug.breakpoint`` itself is
replaced by :func:`jaxdbg.breakpoint` (same signature; full frame capture with
globals and batch indices), and jaxdbg is registered as the preferred backend
of JAX's own debugger registry for code that holds a reference to JAX's
function from before the hook.
"""

from __future__ import annotations

import threading
from typing import Any

import jax

from jaxdbg import breakpoints, stops
from jaxdbg.frames import Frame
from jaxdbg.internals import jax_api
from jaxdbg.stop_info import StopInfo

_JAX_REGISTRY_NAME = "jaxdbg"
_JAX_REGISTRY_PRIORITY = 1_000
_original_breakpoint = None
_lock = threading.Lock()


def _from_jax_frames(jax_frames: list[Any]) -> list[Frame]:
    """Convert JAX's DebuggerFrame objects (no globals, no function names)."""
    import sys

    frames = []
    for f in jax_frames:
        module_globals = {}
        for module in list(sys.modules.values()):
            if getattr(module, "__file__", None) == f.filename:
                module_globals = vars(module)
                break
        else:
            main = sys.modules.get("__main__")
            module_globals = vars(main) if main is not None else {}
        source = [line + "\n" for line in f.source]
        offset = f.offset if f.offset is not None else 0
        first = max(f.lineno - offset, 1)
        source = [""] * (first - 1) + source  # line numbers index the whole file
        frames.append(Frame(f.filename, f.lineno, "?", dict(f.locals), module_globals, source, first))
    return frames


def _serve_jax_frames(jax_frames, thread_id, *, backend: str | None = None, **options: Any) -> None:
    frames = _from_jax_frames(jax_frames)
    if frames:
        stops.serve(frames, StopInfo(), backend, options)


def jaxdbg_breakpoint_for_jax(*, backend: str | None = None, filter_frames: bool = True,
                              num_frames: int | None = None, ordered: bool = False,
                              token: Any = None, **kwargs: Any) -> Any:
    """Stands in for ``jax.debug.breakpoint`` while the hook is installed."""
    return breakpoints._enter(pred=None, skip=1, backend=backend, filter_frames=filter_frames,
                              num_frames=num_frames, ordered=ordered, token=token, options=kwargs)


jaxdbg_breakpoint_for_jax.__doc__ = (jaxdbg_breakpoint_for_jax.__doc__ or "") + \
    "\n\n" + (breakpoints.breakpoint.__doc__ or "")


def install_jax_hook() -> None:
    """Route ``jax.debug.breakpoint`` to jaxdbg (its keyword options pass through)."""
    global _original_breakpoint
    with _lock:
        if _original_breakpoint is None:
            _original_breakpoint = jax.debug.breakpoint
            jax.debug.breakpoint = jaxdbg_breakpoint_for_jax
        jax_api.register_with_jax_debugger(_JAX_REGISTRY_NAME, _serve_jax_frames, _JAX_REGISTRY_PRIORITY)


def uninstall_jax_hook() -> None:
    """Give ``jax.debug.breakpoint`` back its own behaviour."""
    global _original_breakpoint
    with _lock:
        if _original_breakpoint is not None:
            jax.debug.breakpoint = _original_breakpoint
            _original_breakpoint = None
        jax_api.unregister_from_jax_debugger(_JAX_REGISTRY_NAME)


def is_installed() -> bool:
    return _original_breakpoint is not None
