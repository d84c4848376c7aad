"""Make existing ``jax.debug.breakpoint(...)`` calls open jaxdbg.

Two routes, so that every call reaches us: ``jax.debug.breakpoint`` itself is
replaced by :func:`jaxdbg.breakpoint` (same signature; full frame capture with
globals and batch indices) through :data:`jaxdbg.runtime.jax_routes.BREAKPOINT`,
and jaxdbg is registered as the preferred backend
of JAX's own debugger registry for code that holds a reference to JAX's
function from before the hook.
"""

from __future__ import annotations

import threading
from typing import Any

from jaxdbg.capture import breakpoints
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine import registry, stop_serving
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.internals import jax_debugger
from jaxdbg.runtime import notices
from jaxdbg.runtime.jax_routes import BREAKPOINT, is_installed

_JAX_REGISTRY_NAME = "jaxdbg"
_JAX_REGISTRY_PRIORITY = 1_000
_lock = threading.Lock()
_jax_debugger_turn = threading.Lock()


def _serve_jax_frames(
    jax_frames: list[Any], thread_id: int | None, *, backend: str | None = None, **options: Any
) -> None:
    """JAX's debugger callback (``debugger(frames, thread_id, **kwargs)``), for
    functions traced with JAX's own breakpoint before the hook was installed."""
    frames = frames_mod.from_jax_frames(jax_frames)
    if not frames:
        return
    # Traced by JAX, so nothing checked the options then; an unknown one must not lose the stop.
    options, unknown = registry.accepted_options(backend, options)
    if unknown:
        notices.notice(
            f"ignoring breakpoint option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)}, which this backend does not accept"
        )
    stop_serving.serve(frames, StopInfo(), backend, options)


def jaxdbg_breakpoint_for_jax(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Stands in for ``jax.debug.breakpoint`` while the hook is installed."""
    return breakpoints.place_breakpoint(
        pred=None,
        skip=1,
        backend=backend,
        filter_frames=filter_frames,
        num_frames=num_frames,
        ordered=ordered,
        token=token,
        options=kwargs,
        handoff=_hand_back_to_jax,
    )


def _hand_back_to_jax(frames: list[Any], options: dict[str, Any]) -> bool:
    """A function traced while the hook was installed still calls jaxdbg's callback;
    once the hook is uninstalled its stops go back to JAX's own debugger."""
    if is_installed():
        return False
    import threading

    thread_id = None if threading.current_thread() is threading.main_thread() else threading.get_ident()
    jax_frames = [
        jax_debugger.JaxFrame(
            f.filename,
            f.lineno,
            dict(f.locals),
            [line.rstrip("\n") for line in f.source[f.first_lineno - 1 :]],
            f.lineno - f.first_lineno,
        )
        for f in frames
    ]
    with _jax_debugger_turn:  # JAX's debugger serves one stop at a time too
        return jax_debugger.call_jax_debugger(jax_frames, thread_id, None, options)


jaxdbg_breakpoint_for_jax.__doc__ = (
    (jaxdbg_breakpoint_for_jax.__doc__ or "") + "\n\n" + (breakpoints.breakpoint.__doc__ or "")
)


def install_jax_hook() -> None:
    """Route ``jax.debug.breakpoint`` to jaxdbg (its keyword options pass through)."""
    with _lock:
        BREAKPOINT.install(jaxdbg_breakpoint_for_jax)
        jax_debugger.register_with_jax_debugger(_JAX_REGISTRY_NAME, _serve_jax_frames, _JAX_REGISTRY_PRIORITY)


def uninstall_jax_hook() -> None:
    """Give ``jax.debug.breakpoint`` back its own behaviour.

    Functions already traced while the hook was installed keep jaxdbg's callback
    in their compiled code; their stops are handed to JAX's own debugger from now
    on, as if they had been traced with JAX's breakpoint.
    """
    with _lock:
        BREAKPOINT.uninstall()
        jax_debugger.unregister_from_jax_debugger(_JAX_REGISTRY_NAME)


__all__ = ["install_jax_hook", "uninstall_jax_hook", "is_installed", "jaxdbg_breakpoint_for_jax"]
