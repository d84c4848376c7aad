"""JAX's own debugger registry, so that ``jax.debug.breakpoint()`` opens jaxdbg, and
jaxdbg can hand a stop to JAX's debugger.

Split from :mod:`jax_api` (whose ``_private`` it uses); ``tests/internals/test_internals.py``
fails loudly through :func:`names_in_use` when a name used here moves in a new JAX release.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxdbg.internals.jax_api import _private

# -- JAX's own debugger registry, so that jax.debug.breakpoint opens jaxdbg --
# JAX calls a registered debugger as ``debugger(frames, thread_id, **kwargs)``:
# ``frames`` are DebuggerFrame objects, innermost first, with runtime values;
# ``kwargs`` are the breakpoint's keyword options other than JAX's own.
_jax_debugger_registry = _private("jax._src.debugger.core", "_debugger_registry")
_get_jax_debugger = _private("jax._src.debugger.core", "get_debugger")
_DebuggerFrame = _private("jax._src.debugger.core", "DebuggerFrame")


def register_with_jax_debugger(name: str, debugger: Callable[..., None], priority: int) -> None:
    if _jax_debugger_registry is None:
        return
    _jax_debugger_registry[name] = (priority, debugger)


def unregister_from_jax_debugger(name: str) -> None:
    if _jax_debugger_registry is not None:
        _jax_debugger_registry.pop(name, None)


@dataclasses.dataclass(frozen=True)
class JaxFrame:
    """What jaxdbg reads from one of JAX's DebuggerFrame objects."""

    filename: str
    lineno: int
    locals: dict[str, Any]
    source: list[str]  # the frame's function (or whole module), without newlines
    offset: int | None  # lineno's index into ``source``; None when JAX found no source


def read_jax_frame(frame: Any) -> JaxFrame:
    return JaxFrame(frame.filename, int(frame.lineno), dict(frame.locals), list(frame.source or []), frame.offset)


def call_jax_debugger(
    frames: list[JaxFrame], thread_id: int | None, backend: str | None, options: dict[str, Any]
) -> bool:
    """Serve a stop with JAX's own debugger (its registry's choice, or ``backend``).
    False when this JAX has no such entry point."""
    if _get_jax_debugger is None or _DebuggerFrame is None:
        return False
    jax_frames = []
    for f in frames:
        line = f.source[f.offset] if f.offset is not None and 0 <= f.offset < len(f.source) else ""
        jax_frames.append(
            _DebuggerFrame(
                filename=f.filename,
                locals=f.locals,
                globals={},
                code_context=[line + "\n"] if line else None,
                source=f.source,
                lineno=f.lineno,
                offset=f.offset,
            )
        )
    _get_jax_debugger(backend=backend)(jax_frames, thread_id, **options)
    return True


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.debugger.core._debugger_registry": _jax_debugger_registry is not None,
        "jax._src.debugger.core.get_debugger": _get_jax_debugger is not None,
        "jax._src.debugger.core.DebuggerFrame": _DebuggerFrame is not None,
    }
