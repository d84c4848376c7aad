"""The one place that touches JAX internals, each use guarded and tested.

Everything else in jaxdbg uses public JAX APIs. ``tests/test_internals.py``
fails loudly when a name used here moves in a new JAX release.
"""

from __future__ import annotations

import dataclasses
import logging
import types
from typing import Any, Callable

import jax

SUPPORTED_JAX = ((0, 8), (0, 12))  # tested range, inclusive of minor versions


def jax_version() -> tuple[int, ...]:
    return tuple(jax.__version_info__[:3])


def _private(module: str, name: str) -> Any:
    """Import ``module.name`` or return None; the tests assert every one resolves."""
    try:
        mod = __import__(module, fromlist=[name])
        return getattr(mod, name)
    except (ImportError, AttributeError):
        return None


# -- frame filtering: honour paths that libraries excluded from JAX tracebacks --
_include_frame = _private("jax._src.traceback_util", "include_frame")


def include_frame(frame: types.FrameType) -> bool:
    return True if _include_frame is None else bool(_include_frame(frame))


# -- named axes in scope: which device a multi-device callback runs for --
_get_axis_env = _private("jax._src.core", "get_axis_env")
_BatchTracer = _private("jax._src.interpreters.batching", "BatchTracer")


def device_axis_indices() -> list[tuple[str, int, Any]]:
    """``(axis name, axis size, traced axis index)`` for each pmap / shard_map axis in scope.

    Named ``vmap`` axes also appear in JAX's axis environment; their index is a
    batched value, which is how they are told apart.
    """
    if _get_axis_env is None:
        return []
    axes = []
    for name, size in _get_axis_env().axis_sizes.items():
        try:
            index = jax.lax.axis_index(name)
        except Exception:  # not an axis that has an index here
            continue
        if _BatchTracer is not None and isinstance(index, _BatchTracer):
            continue
        label = "" if str(name).startswith("_internal") else str(name)
        axes.append((label, int(size), index))
    return axes


# -- values that exist only as tangents while JAX linearizes a custom_jvp rule --
_JaxprTracer = _private("jax._src.interpreters.partial_eval", "JaxprTracer")


def is_linear_unknown(tracer: Any) -> bool:
    """True for a value JAX is partially evaluating as unknown (a tangent in a rule).

    A stop that used it would land in the linear half of the computation, which
    JAX transposes; such values are shown as unavailable instead.
    """
    if _JaxprTracer is None or not isinstance(tracer, _JaxprTracer):
        return False
    pval = getattr(tracer, "pval", None)
    return pval is not None and not pval.is_known()


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
    source: list[str]   # the frame's function (or whole module), without newlines
    offset: int | None  # lineno's index into ``source``; None when JAX found no source


def read_jax_frame(frame: Any) -> JaxFrame:
    return JaxFrame(frame.filename, int(frame.lineno), dict(frame.locals),
                    list(frame.source or []), frame.offset)


def call_jax_debugger(frames: list[JaxFrame], thread_id: int | None, backend: str | None,
                      options: dict[str, Any]) -> bool:
    """Serve a stop with JAX's own debugger (its registry's choice, or ``backend``).
    False when this JAX has no such entry point."""
    if _get_jax_debugger is None or _DebuggerFrame is None:
        return False
    jax_frames = []
    for f in frames:
        line = f.source[f.offset] if f.offset is not None and 0 <= f.offset < len(f.source) else ""
        jax_frames.append(_DebuggerFrame(filename=f.filename, locals=f.locals, globals={},
                                         code_context=[line + "\n"] if line else None,
                                         source=f.source, lineno=f.lineno, offset=f.offset))
    _get_jax_debugger(backend=backend)(jax_frames, thread_id, **options)
    return True


# -- silence JAX's "jax.debug.callback failed" log for a deliberate quit --
_CALLBACK_LOGGER = "jax._src.debugging"


class _DropExceptions(logging.Filter):
    def __init__(self, kinds: tuple[type[BaseException], ...]) -> None:
        super().__init__()
        self.kinds = kinds

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, self.kinds)


def quiet_callback_failures(kinds: tuple[type[BaseException], ...]) -> None:
    """Stop JAX logging a traceback when our callback ends the computation on purpose."""
    logger = logging.getLogger(_CALLBACK_LOGGER)
    if not any(isinstance(f, _DropExceptions) for f in logger.filters):
        logger.addFilter(_DropExceptions(kinds))


def unquiet_callback_failures() -> None:
    logger = logging.getLogger(_CALLBACK_LOGGER)
    for f in [f for f in logger.filters if isinstance(f, _DropExceptions)]:
        logger.removeFilter(f)


_runtime_tokens = _private("jax._src.dispatch", "runtime_tokens")


def forget_failed_effects() -> None:
    """Drop the effect tokens of a computation the debugger stopped.

    Otherwise JAX re-raises the stopped computation's error at the next
    ``jax.effects_barrier()`` and again at interpreter exit.
    """
    if _runtime_tokens is not None:
        _runtime_tokens.clear()


def is_jax_runtime_error(exc: BaseException) -> bool:
    return isinstance(exc, jax.errors.JaxRuntimeError)


# -- the traceback JAX keeps with each checkify error --

def traceback_frames(traceback_info: Any) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of a traceback JAX recorded, innermost first.

    checkify stores ``jax._src.source_info_util`` tracebacks: jaxlib ``Traceback``
    objects whose ``frames`` hold ``file_name`` / ``line_num`` / ``function_name``.
    A Python traceback is accepted too. Anything else yields no frames.
    """
    if traceback_info is None:
        return []
    if isinstance(traceback_info, types.TracebackType):
        import traceback
        return [(f.filename, f.lineno or 0, f.name)
                for f in reversed(traceback.extract_tb(traceback_info))]
    frames = getattr(traceback_info, "frames", None)
    if frames is None:
        return []
    out = []
    for frame in frames:
        try:
            out.append((str(frame.file_name), int(frame.line_num), str(frame.function_name)))
        except AttributeError:
            continue
    return out


def failed_callback_names(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is XLA's error for a host callback that raised ``name``.

    XLA keeps only the text of the callback's exception (``INTERNAL: CpuCallback
    error: ... DebuggerQuit: ...``); that wording is XLA's, not an API.
    """
    if not is_jax_runtime_error(exc):
        return False
    text = str(exc)
    return "callback" in text.lower() and name in text


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.traceback_util.include_frame": _include_frame is not None,
        "jax._src.core.get_axis_env": _get_axis_env is not None,
        "jax._src.interpreters.batching.BatchTracer": _BatchTracer is not None,
        "jax._src.debugger.core._debugger_registry": _jax_debugger_registry is not None,
        "jax._src.debugger.core.get_debugger": _get_jax_debugger is not None,
        "jax._src.debugger.core.DebuggerFrame": _DebuggerFrame is not None,
        "logger jax._src.debugging": _CALLBACK_LOGGER in logging.Logger.manager.loggerDict,
        "jax._src.core.trace_state_clean": _trace_state_clean is not None,
        "jax._src.dispatch.runtime_tokens": _runtime_tokens is not None,
        "jax._src.interpreters.partial_eval.JaxprTracer": _JaxprTracer is not None,
    }


# -- are we staging a computation, or running eagerly? --
_trace_state_clean = _private("jax._src.core", "trace_state_clean")


def is_tracing() -> bool:
    """True while JAX traces (jit, vmap, grad, scan bodies...), False when eager."""
    if _trace_state_clean is None:
        return True  # unknown: take the staged path, which also works eagerly
    return not _trace_state_clean()
