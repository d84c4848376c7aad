"""The one place that touches JAX internals, each use guarded and tested.

Everything else in jaxdbg uses public JAX APIs. ``tests/internals/test_internals.py``
fails loudly when a name used here moves in a new JAX release.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import re
import sys
import threading
import types
from typing import Any, Callable, Iterator, cast

import jax

SUPPORTED_JAX = ((0, 7), (0, 12))  # tested range, inclusive of minor versions


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


def _axis_label(name: Any) -> str:
    """An axis name as shown: "" for the one JAX makes for a pmap given no axis_name."""
    return "" if str(name).startswith("_internal") else str(name)


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
        axes.append((_axis_label(name), int(size), index))
    return axes


# -- the devices of the shard_map / pmap being traced, for a stop's device position --
# A stop under shard_map or pmap knows its position on the mapped axes (axis_index),
# not the device: the host callback's values arrive on the host's first device. The
# concrete mesh is an argument (``mesh``) of the shard_map functions that trace the
# body (JAX from 0.8 runs pmap as a shard_map too); JAX 0.7's pmap traces its body in
# pxla's functions, whose ``devices`` is pmap's ``devices=`` (None: the default order).
_SHARD_MAP_FILE = f"{os.sep}jax{os.sep}_src{os.sep}shard_map.py"
_PXLA_FILE = f"{os.sep}jax{os.sep}_src{os.sep}interpreters{os.sep}pxla.py"


def traced_mesh_devices(axis_names: list[str]) -> tuple[Any, ...] | None:
    """The devices of the innermost shard_map (or pmap given ``devices=``) being traced
    here, in the order a stop's device position counts them (``axis_names``, its
    manual axes, outermost first); None elsewhere, for an abstract mesh or when some
    axis is not the mesh's."""
    import numpy as np

    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if (frame.f_code.co_filename.endswith(_PXLA_FILE) and "devices" in frame.f_code.co_varnames
                and len(axis_names) == 1):
            devices = frame.f_locals.get("devices")
            if isinstance(devices, (tuple, list)) and devices:
                return tuple(devices)
        if frame.f_code.co_filename.endswith(_SHARD_MAP_FILE) and "mesh" in frame.f_code.co_varnames:
            mesh = frame.f_locals.get("mesh")
            devices = getattr(mesh, "devices", None)
            names = [_axis_label(n) for n in getattr(mesh, "axis_names", ())]  # as axis_names are
            if isinstance(devices, np.ndarray) and devices.ndim == len(names):
                if sorted(axis_names) != sorted(names):
                    return None  # some axes left to the compiler: no one device per position
                order = [names.index(n) for n in axis_names]
                return tuple(np.transpose(devices, order).reshape(-1))
        frame = frame.f_back
    return None


# -- custom_vmap that keeps the effects of its body (JAX < 0.8 dropped them) --
# jaxdbg stages its host callback inside custom_vmap (see capture/staging.py). Before
# JAX 0.8 custom_vmap's abstract evaluation declared no effects, so a jitted
# program pruned a breakpoint whose (unused) output nothing read, and an ordered
# one found no effect token when lowered. From 0.8 on JAX declares the body's
# effects itself; older releases get the same rule here.
_custom_vmap_p = _private("jax._src.custom_batching", "custom_vmap_p")
_CUSTOM_VMAP_DROPS_EFFECTS = jax_version() < (0, 8)


def _custom_vmap_abstract_eval_with_effects(*in_avals: Any, call: Any, **_: Any):
    return call.out_avals, call.effects


def keep_custom_vmap_effects() -> None:
    """Make custom_vmap declare the effects of its body, where this JAX does not already."""
    if _CUSTOM_VMAP_DROPS_EFFECTS and _custom_vmap_p is not None:
        _custom_vmap_p.def_effectful_abstract_eval(_custom_vmap_abstract_eval_with_effects)


keep_custom_vmap_effects()


# -- host calls under jax.checkpoint: staged again into the backward pass's recompute --
# JAX stages its own debug callbacks twice under remat (its partial-eval rule for
# debug_callback_p): the forward pass prints, and the backward pass prints again as it
# recomputes. jaxdbg's callbacks sit inside a custom_vmap layer (capture/prints.py),
# which has no such rule, so JAX kept them in the forward pass only. The rule below
# stages a marked layer the same way JAX stages a debug callback, its recompute copy
# being the layer that ``recompute_custom_vmap_as`` names; any other custom_vmap gets
# what JAX's partial evaluation does for a primitive without a rule.
_pe = _private("jax._src.interpreters", "partial_eval")
_Var = _private("jax._src.core", "Var")
_NOT_REALLY_EFFECTS = tuple(t for t in (_private("jax._src.core", "NamedAxisEffect"),
                                        _private("jax._src.core", "InternalMutableArrayEffect"))
                            if t is not None)
_REMAT_NAMES = ("partial_eval_jaxpr_custom_rules", "ensure_enum", "SaveableType",
                "RecomputeType")
_RECOMPUTE_AS = "_jaxdbg_recompute_as"


def recompute_custom_vmap_as(vmap_rule: Callable[..., Any],
                             recomputed: Callable[[], Callable[..., Any]]) -> None:
    """Mark a ``custom_vmap`` (by its vmap rule) as a host call that ``jax.checkpoint``
    recomputes: the backward pass runs ``recomputed()`` (a custom_vmap of the same
    operands) where JAX's own callback would run again."""
    setattr(vmap_rule, _RECOMPUTE_AS, recomputed)


def _has_effects(eqn: Any) -> bool:
    return any(not isinstance(e, _NOT_REALLY_EFFECTS) for e in eqn.effects)


def _not_instantiated(eqn: Any, inst_in: Any) -> list[Any]:
    return [v for v, inst in zip(eqn.invars, inst_in) if not inst and isinstance(v, _Var)]


def _recomputed_eqn(eqn: Any, recomputed: Callable[[], Callable[..., Any]]) -> Any:
    """``eqn`` with the body and rule of the recomputing layer (``eqn`` itself if it
    cannot be traced to the same shape)."""
    consts_tree, args_tree = eqn.params["in_tree"].children()
    n_consts = consts_tree.num_leaves
    layer = recomputed()
    avals = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type)
             for v in eqn.invars[n_consts:]]
    closed = jax.make_jaxpr(
        lambda *flat: layer(*jax.tree_util.tree_unflatten(args_tree, list(flat))))(*avals)
    calls = [e for e in closed.jaxpr.eqns if e.primitive is eqn.primitive]
    if (len(calls) != 1 or closed.consts or closed.jaxpr.constvars
            or len(calls[0].invars) != len(eqn.invars)):
        return eqn
    return eqn.replace(params=calls[0].params)


def _custom_vmap_partial_eval_custom(saveable: Any, unks_in: Any, inst_in: Any, eqn: Any):
    n_out = len(eqn.outvars)
    if any(unks_in):  # depends on unknowns: the staged half computes it, once
        return None, eqn, [True] * n_out, [True] * n_out, _not_instantiated(eqn, inst_in)
    policy = _pe.ensure_enum(saveable(eqn.primitive, *[v.aval for v in eqn.invars],
                                      **eqn.params))
    recomputed = getattr(eqn.params.get("rule"), _RECOMPUTE_AS, None)
    saved = not isinstance(policy, _pe.RecomputeType)  # saveable or offloadable
    if recomputed is None:
        # What JAX does with an equation of known inputs that has no rule of its own
        # (an offloadable one is kept as a residual here rather than offloaded).
        if _has_effects(eqn) or saved:
            return eqn, None, [False] * n_out, [False] * n_out, []
        return eqn, eqn, [False] * n_out, [True] * n_out, _not_instantiated(eqn, inst_in)
    # As JAX's rule for debug_callback_p: staged again unless the policy saves it and
    # some input would have to be saved only for it.
    if saved and not all(inst_in):
        return eqn, None, [False] * n_out, [False] * n_out, []
    return (eqn, _recomputed_eqn(eqn, recomputed), [False] * n_out, [True] * n_out,
            _not_instantiated(eqn, inst_in))


def _remat_names_present() -> bool:
    return (_pe is not None and _Var is not None and _custom_vmap_p is not None
            and all(hasattr(_pe, n) for n in _REMAT_NAMES))


def stage_host_calls_again_under_remat() -> bool:
    """Register the rule above, unless this JAX has a rule for custom_vmap of its own."""
    if not _remat_names_present():
        return False
    rules = _pe.partial_eval_jaxpr_custom_rules
    if rules.get(_custom_vmap_p, _custom_vmap_partial_eval_custom) is not \
            _custom_vmap_partial_eval_custom:
        return False
    rules[_custom_vmap_p] = _custom_vmap_partial_eval_custom
    return True


stage_host_calls_again_under_remat()


# -- transposing a marked layer: a host call contributes nothing to any cotangent --
# As JAX's own debug_print transpose rule says. JAX 0.7's linear_transpose reaches the
# layer (0.10 on prune it first); an unmarked custom_vmap still has no transpose.
_ad = _private("jax._src.interpreters", "ad")


def _custom_vmap_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
    if getattr(params.get("rule"), _RECOMPUTE_AS, None) is None:
        raise NotImplementedError("Transpose rule (for reverse-mode differentiation) for "
                                  "'custom_vmap_call' not implemented")
    return [None] * len(args)


def transpose_host_calls_to_nothing() -> bool:
    """Register the rule above, unless this JAX has a transpose for custom_vmap."""
    transposes = getattr(_ad, "primitive_transposes", None)
    if transposes is None or _custom_vmap_p is None:
        return False
    if transposes.get(_custom_vmap_p, _custom_vmap_transpose) is not _custom_vmap_transpose:
        return False
    transposes[_custom_vmap_p] = _custom_vmap_transpose
    return True


transpose_host_calls_to_nothing()

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


# -- which tracers a breakpoint may use: those of the body being staged now --
# JAX caches the jaxpr of a staged body (jit, scan, cond, while/fori loops,
# checkpoint, custom_vjp) by function and argument types. A tracer of an
# enclosing trace, found in an outer frame's locals, would become a constant of
# that cached jaxpr and leak into the next program that reuses it. Tracers of
# the staging trace and of the transformations above it (vmap, jvp) are safe.
_trace_ctx = _private("jax._src.core", "trace_ctx")
_DynamicJaxprTrace = _private("jax._src.interpreters.partial_eval", "DynamicJaxprTrace")


def traces_in_reach() -> list[Any] | None:
    """The traces whose tracers may become operands here, innermost first
    (None when this JAX does not say, and every tracer is taken)."""
    if _trace_ctx is None or _DynamicJaxprTrace is None:
        return None
    reach = []
    trace = getattr(_trace_ctx, "trace", None)
    while trace is not None:
        reach.append(trace)
        if isinstance(trace, _DynamicJaxprTrace):
            break  # a staged body: what lies outside it is another program's
        trace = getattr(trace, "parent_trace", None)
    return reach


def in_reach(tracer: Any, reach: list[Any] | None) -> bool:
    """Whether ``tracer`` belongs to one of the traces ``traces_in_reach`` gave."""
    if reach is None:
        return True
    trace = getattr(tracer, "_trace", None)
    return any(trace is t for t in reach)


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
_RuntimeTokenSet = _private("jax._src.dispatch", "RuntimeTokenSet")
_TOKEN_SET_FIELDS = ("current_tokens", "output_runtime_tokens", "clear")


def forget_failed_effects() -> None:
    """Drop every effect token this thread holds (tests use it between cases)."""
    if _runtime_tokens is not None:
        _runtime_tokens.clear()


def drop_stopped_effects_when_waiting(is_stopped: Callable[[BaseException], bool]) -> bool:
    """Make JAX's wait for effects skip computations that the debugger stopped.

    JAX keeps each dispatched computation's effect tokens (per thread) until
    ``jax.effects_barrier()`` has waited for them, and waits again at exit. When a
    quit or an interrupt ended an asynchronously dispatched computation (pmap on
    CPU), its tokens carry that error: every later barrier raised it again and exit
    printed it twice as ``Exception ignored in atexit callback``. The wait now drops
    tokens whose error ``is_stopped`` recognises; any other error is raised as
    before. The stopped computation's own results still raise where they are used.
    Returns whether the wait could be adapted. Idempotent.
    """
    cls = _RuntimeTokenSet
    if cls is None or not all(hasattr(_runtime_tokens, f) for f in _TOKEN_SET_FIELDS):
        return False
    if getattr(cls.block_until_ready, "_jaxdbg_drops_stopped", False):
        return True

    def block_until_ready(self) -> None:
        for tokens in (self.current_tokens, self.output_runtime_tokens):
            for key, token in list(tokens.items()):
                try:
                    token.block_until_ready()
                except Exception as exc:
                    if not is_stopped(exc):
                        raise
                    tokens.pop(key, None)
        self.clear()

    cast(Any, block_until_ready)._jaxdbg_drops_stopped = True  # marks the patch as ours
    cls.block_until_ready = block_until_ready
    return True


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


def failed_callback_message(exc: BaseException, name: str) -> str | None:
    """The message of the exception ``name`` that a host callback raised, as XLA's
    error ``exc`` keeps it (the last ``name: message`` line of its text), or None."""
    if not failed_callback_names(exc, name):
        return None
    found = re.findall(rf"(?:^|[\s.]){re.escape(name)}: (.+)$", str(exc), re.M)
    return found[-1].strip() if found else None


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
        "jax._src.dispatch.RuntimeTokenSet (current_tokens, output_runtime_tokens, clear)":
            _RuntimeTokenSet is not None and _runtime_tokens is not None
            and all(hasattr(_runtime_tokens, f) for f in _TOKEN_SET_FIELDS),
        "jax._src.interpreters.partial_eval.JaxprTracer": _JaxprTracer is not None,
        "jax._src.core.trace_ctx": _trace_ctx is not None,
        "jax._src.interpreters.partial_eval.DynamicJaxprTrace": _DynamicJaxprTrace is not None,
        "jax._src.custom_batching.custom_vmap_p": _custom_vmap_p is not None
        or not _CUSTOM_VMAP_DROPS_EFFECTS,
        "jax._src.interpreters.partial_eval (custom rules, ensure_enum, Saveable / Recompute)"
        ", jax._src.core.Var": _remat_names_present(),
        "jax._src.checkify.get_traceback, checkify_jaxpr_flat": _locating_names_present(),
        "jax._src.checkify.check_nans(..., enabled_errors, out), "
        "jax._src.source_info_util.current_name_stack": _inf_check_names_present(),
        "jax._src.interpreters.ad.primitive_transposes":
            hasattr(_ad, "primitive_transposes"),
        "jax.experimental.checkify.Error fields (_pred, _code, _metadata, _payload)":
            _checkify_error_fields_present(),
        "jax._src.dispatch.check_special (and check_special_array from JAX 0.10), "
        "jax._src.api_util.InternalFloatingPointError (name, ty)": _special_checks_present(),
        "jax._src.core.DropVar, DebugInfo": _DropVar is not None and _DebugInfo is not None,
        "jax._src.checkify.error_checks, nan_error_check, default_checkify_rule, "
        "jax._src.lax.lax.convert_element_type_p": _cast_check_names_present(),
        "jax._src.shard_map.ShardMapTracer(val), jax._src.interpreters.ad.LinearizeTracer, "
        "JVPTracer": _rerun_value_names_present(),
    }


# -- checkify errors raised inside jnp's own jitted functions: the user's frame --
# checkify records with each error the traceback of the equation that failed. For
# ``x // y`` that equation (lax.div) sits inside jnp.floor_divide's jitted body, whose
# tracebacks start at floor_divide: no user frame. checkify interprets that body while
# interpreting the enclosing equation (the call of floor_divide, whose traceback holds
# the user's line), so while jaxdbg.checkify traces, an error's traceback that holds
# no user frame is replaced by the nearest enclosing equation's that does. JAX 0.7's
# tracebacks are whole stacks instead: floor_divide's body, traced once and cached by
# jit, keeps the stack of whichever call traced it first. There an error's traceback
# whose user frames do not end with the enclosing call's is that stale one, and the
# enclosing call's is used.
_WHOLE_STACK_TRACEBACKS = jax_version() < (0, 8)  # 0.7 measured; 0.10 and 0.12 are cut
# checkify keeps its interpretation of a nested body (with the errors it made, and
# their tracebacks) in a cache keyed by the body, the enabled error set and the error
# state's types, so the first call of floor_divide in any checkified function would
# reuse one interpreted for another function. Each jaxdbg.checkify adds a marker of its
# own to its enabled error set (checkify only tests membership in it): its
# interpretations are its own, and kept across its calls, so nothing is traced again.
_checkify_internal = _private("jax._src", "checkify")
_jax_get_traceback: Any = getattr(_checkify_internal, "get_traceback", None)
_checkify_interpreter = getattr(_checkify_internal, "checkify_jaxpr_flat", None)
_locating = threading.local()


def _enclosing_equations() -> list[Any]:
    """The equations checkify is interpreting now, innermost first."""
    code = getattr(_checkify_interpreter, "__code__", None)
    found = []
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            eqn = frame.f_locals.get("eqn")
            if getattr(getattr(eqn, "source_info", None), "traceback", None) is not None:
                found.append(eqn)
        frame = frame.f_back
    return found


def _called_function_file(eqn: Any) -> str | None:
    """The file of the function a call equation (a jit) traced, from its debug info."""
    called = eqn.params.get("jaxpr") if isinstance(getattr(eqn, "params", None), dict) else None
    info = getattr(getattr(called, "jaxpr", called), "debug_info", None)
    where = getattr(info, "func_src_info", None)  # "f at /path/file.py:13"
    if not isinstance(where, str) or " at " not in where:
        return None
    return where.split(" at ", 1)[1].rsplit(":", 1)[0]


def _located_get_traceback() -> Any:
    traceback = _jax_get_traceback()
    user_frames_of = getattr(_locating, "user_frames_of", None)
    if user_frames_of is None:
        return traceback
    inner = user_frames_of(traceback)
    if inner and not _WHOLE_STACK_TRACEBACKS:
        return traceback
    is_user_file = getattr(_locating, "is_user_file", None)
    for outer_eqn in _enclosing_equations():
        outer = outer_eqn.source_info.traceback
        if outer is traceback:
            continue  # the failing equation's own
        around = user_frames_of(outer)
        if around:
            whole = len(inner) >= len(around) and tuple(inner[-len(around):]) == tuple(around)
            # A body of the user's own (a jit traced before, whose recorded stack ends at
            # the call that traced it): the failing equation's frames are right there.
            called = _called_function_file(outer_eqn)
            own_body = called is not None and is_user_file is not None and is_user_file(called)
            return traceback if inner and (whole or own_body) else outer
    return traceback


def _locating_names_present() -> bool:
    return _jax_get_traceback is not None and hasattr(_checkify_interpreter, "__code__")


@contextlib.contextmanager
def checkify_errors_at_user_frames(user_frames_of: Callable[[Any], Any],
                                   is_user_file: Callable[[str], bool] | None = None) -> Iterator[None]:
    """While checkify traces inside this block, an error whose traceback holds no
    user frame (``user_frames_of(traceback)``, innermost first) records the enclosing
    user call's instead (``is_user_file(path)``: whether a traced body is the user's)."""
    if not _locating_names_present():
        yield
        return
    if _checkify_internal.get_traceback is not _located_get_traceback:
        _checkify_internal.get_traceback = _located_get_traceback
    previous = getattr(_locating, "user_frames_of", None), getattr(_locating, "is_user_file", None)
    _locating.user_frames_of, _locating.is_user_file = user_frames_of, is_user_file
    try:
        yield
    finally:
        _locating.user_frames_of, _locating.is_user_file = previous


class _InterpretedForOneFunction:
    """A member of a checkify error set that no error belongs to (see above)."""


def errors_interpreted_apart(errors: Any) -> frozenset:
    """``errors`` (any collection of error classes, as checkify takes) with a marker of
    its own, so checkify's cached interpretations made with it serve no other
    checkified function."""
    marker = type("InterpretedForOneFunction", (_InterpretedForOneFunction,), {})
    return frozenset(errors) | {marker}


# -- checkify's NaN check, told the pass and turned to Infs: where a value came from --
# checkify's NaN check of a primitive's output is one function, check_nans(...,
# enabled_errors, out) (the leading arguments differ by version), that every
# NaN-making primitive's rule calls while checkify interprets a program, nested ones
# included (jit, shard_map, pmap, loops, the backward pass), inside the equation's
# name stack. While an error set holds the NamesPass marker, jaxdbg's replacement
# names the primitive "mul in the backward pass" when the equation was made by
# transposing (the error's message then says so); with InfsAsNaNs too (checkify has
# no Inf check) it hands the check the output with each Inf as a NaN and every other
# value 0, so checkify reports the first primitive that made an Inf, with its
# traceback and device, as it would a NaN. Without the markers it is JAX's own check.
_jax_check_nans: Any = getattr(_checkify_internal, "check_nans", None)
_current_name_stack: Any = getattr(_private("jax._src", "source_info_util"), "current_name_stack", None)
BACKWARD_PASS = " in the backward pass"


class NamesPass:
    """A member of a checkify error set that makes its NaN errors name the pass."""


class InfsAsNaNs:
    """A member of a checkify error set that makes its NaN checks look for Infs."""


class _Renamed:
    """A primitive under another name (check_nans reads its name and multiple_results)."""

    def __init__(self, primitive: Any, name: str) -> None:
        self._primitive = primitive
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._primitive, attribute)


def _only_infs_as_nans(out: Any) -> Any:
    import jax.numpy as jnp

    def mapped(x: Any) -> Any:
        if not jnp.issubdtype(x.dtype, jnp.inexact):
            return x  # integers, booleans and PRNG keys hold no Inf
        return jnp.where(jnp.isinf(x), jnp.nan, jnp.zeros((), x.dtype))
    return [mapped(x) for x in out] if isinstance(out, (list, tuple)) else mapped(out)


def _check_nans_told(primitive: Any, *args: Any) -> Any:
    *leading, enabled_errors, out = args
    if NamesPass in enabled_errors:
        if InfsAsNaNs in enabled_errors:
            out = _only_infs_as_nans(out)
        if "transpose(" in str(_current_name_stack()):
            primitive = _Renamed(primitive, primitive.name + BACKWARD_PASS)
    return _jax_check_nans(primitive, *leading, enabled_errors, out)


# checkify checks no cast, but a cast to a narrower float makes Infs (float16 of 1e6):
# while jaxdbg locates (NamesPass in the error set), convert_element_type gets checkify's
# NaN check of its output, as the arithmetic primitives have; otherwise its own rule.
_error_checks: Any = getattr(_checkify_internal, "error_checks", None)
_nan_error_check: Any = getattr(_checkify_internal, "nan_error_check", None)
_default_checkify_rule: Any = getattr(_checkify_internal, "default_checkify_rule", None)
_convert_element_type_p = _private("jax._src.lax.lax", "convert_element_type_p")


class _CheckedWhileLocating:
    """A primitive's checkify rule that checks its output while jaxdbg locates."""

    def __init__(self, primitive: Any, previous: Any) -> None:
        self.primitive = primitive
        self.previous = previous

    def __call__(self, *args: Any, **params: Any) -> Any:
        # (error, enabled_errors, *in_vals), with a leading context from JAX 0.12
        locating = any(isinstance(a, (set, frozenset)) and NamesPass in a for a in args[:3])
        if locating:
            return _nan_error_check(self.primitive, *args, **params)
        return self.previous(*args, **params)


def _check_casts_while_locating() -> None:
    if not _cast_check_names_present():
        return
    if isinstance(_error_checks.get(_convert_element_type_p), _CheckedWhileLocating):
        return
    previous = _error_checks.get(_convert_element_type_p,
                                 functools.partial(_default_checkify_rule, _convert_element_type_p))
    _error_checks[_convert_element_type_p] = _CheckedWhileLocating(_convert_element_type_p, previous)


def _cast_check_names_present() -> bool:
    return (isinstance(_error_checks, dict) and callable(_nan_error_check)
            and callable(_default_checkify_rule) and _convert_element_type_p is not None)


def located_checks(nan_checks: Any, infs: bool = False) -> frozenset:
    """checkify's ``nan_checks`` whose errors name the backward pass (``mul in the
    backward pass``) and, with ``infs``, find the first primitive that made an Inf
    instead (reported as checkify's NaN error of that primitive); casts are checked too."""
    if _inf_check_names_present() and _checkify_internal.check_nans is not _check_nans_told:
        _checkify_internal.check_nans = _check_nans_told
    _check_casts_while_locating()
    return frozenset(nan_checks) | {NamesPass} | ({InfsAsNaNs} if infs else set())


def _inf_check_names_present() -> bool:
    code = getattr(_jax_check_nans, "__code__", None)
    return (code is not None and _current_name_stack is not None
            and code.co_varnames[:code.co_argcount][-2:] == ("enabled_errors", "out"))


# -- checkify's Error: its dataclass fields (all private) --
# LocatedError subclasses jax.experimental.checkify.Error and is built from one; the
# batch shape of a mapped error is the shape of its predicates.
_CHECKIFY_ERROR_FIELDS = ("_pred", "_code", "_metadata", "_payload")


def checkify_error_fields(err: Any) -> tuple[Any, ...]:
    """The constructor arguments of a checkify ``Error``, in order."""
    return tuple(getattr(err, name) for name in _CHECKIFY_ERROR_FIELDS)


def checkify_error_predicates(err: Any) -> list[Any]:
    """The failure predicates of a checkify ``Error``, one per error kind it checks."""
    return list(err._pred.values())


def _checkify_error_fields_present() -> bool:
    import dataclasses

    from jax.experimental import checkify

    fields = tuple(f.name for f in dataclasses.fields(checkify.Error))
    return fields == _CHECKIFY_ERROR_FIELDS


# -- are we staging a computation, or running eagerly? --
_trace_state_clean = _private("jax._src.core", "trace_state_clean")


def is_tracing() -> bool:
    """True while JAX traces (jit, vmap, grad, scan bodies...), False when eager."""
    if _trace_state_clean is None:
        return True  # unknown: take the staged path, which also works eagerly
    return not _trace_state_clean()


# -- the equations of a traced program, for where a NaN came from --

def program_equations(closed_jaxpr: Any) -> list[Any]:
    """Every equation of a traced program (``jax.make_jaxpr``), those of the programs
    nested in it (jit, scan and loop bodies, shard_map, custom rules) included."""
    found: list[Any] = []
    seen: set[int] = set()

    def walk(jaxpr: Any) -> None:
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)  # a ClosedJaxpr holds its Jaxpr
        if id(jaxpr) in seen or not hasattr(jaxpr, "eqns"):
            return
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            found.append(eqn)
            for value in eqn.params.values():
                for item in (value if isinstance(value, (tuple, list)) else (value,)):
                    if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                        walk(item)
    walk(closed_jaxpr)
    return found


def equation_primitive(eqn: Any) -> str:
    return str(getattr(eqn.primitive, "name", eqn.primitive))


def equation_frames(eqn: Any) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of where the equation was traced, innermost first."""
    return traceback_frames(getattr(eqn.source_info, "traceback", None))


def equation_is_backward(eqn: Any) -> bool:
    """Whether JAX made the equation by transposing (the backward pass of a gradient):
    its name stack reads ``transpose(jvp(...))``."""
    return "transpose(" in str(getattr(eqn.source_info, "name_stack", ""))


# -- which devices JAX's NaN / Inf check of one output found the value on --
# With jax_debug_nans / jax_debug_infs on, every computation JAX runs (the jitted call,
# then each primitive of its op-by-op re-run after a failure) checks its outputs in
# ``dispatch.check_special(name, per-device buffers)`` (JAX 0.7) or
# ``dispatch.check_special_array(name, array)`` (0.10 on; pxla looks both up on each
# call), which raise ``InternalFloatingPointError`` at the first buffer that holds one.
# Wrapped, a failing check records which devices' buffers hold it; under a sharded jit
# that is the only place JAX says which device made it.
_dispatch = _private("jax._src", "dispatch")
_InternalFloatingPointError = _private("jax._src.api_util", "InternalFloatingPointError")
_SPECIAL_CHECKS = ("check_special", "check_special_array")
_failed_checks = threading.local()


@dataclasses.dataclass(frozen=True)
class FailedCheck:
    """One output that JAX's NaN / Inf check raised for."""

    name: str  # JAX's name of the computation: "jit(f)", then "jit(sqrt)" in the re-run
    kind: str  # "nan" or "inf"
    devices: tuple[int, ...]  # ids of the devices whose buffer holds it, in JAX's order
    spread: int  # how many devices the output lies on


def holds_nonfinite(data: Any, kind: str) -> bool:
    """Whether a buffer of floats holds a ``kind`` (``"nan"`` / ``"inf"``)."""
    import numpy as np

    values = np.asarray(data)
    if not np.issubdtype(values.dtype, np.inexact):
        return False
    return bool((np.isnan(values) if kind == "nan" else np.isinf(values)).any())


def _pieces(args: tuple) -> list[tuple[int, Any]]:
    """``(device id, buffer)`` of what a check was given: single-device buffers, or one
    array (its addressable shards)."""
    given = args[1] if len(args) > 1 else ()
    if isinstance(given, jax.Array):
        return [(int(s.device.id), s.data) for s in given.addressable_shards]
    return [(int(next(iter(buf.devices())).id), buf) for buf in given]


def _recording(check: Callable[..., Any]) -> Callable[..., Any]:
    def recorded(*args: Any, **kwargs: Any) -> Any:
        try:
            return check(*args, **kwargs)
        except Exception as exc:
            records = getattr(_failed_checks, "records", None)
            if records is not None and isinstance(exc, _InternalFloatingPointError):
                try:
                    pieces = _pieces(args)
                    records.append(FailedCheck(
                        str(exc.name), str(exc.ty),
                        tuple(d for d, buf in pieces if holds_nonfinite(buf, str(exc.ty))), len(pieces)))
                except Exception:  # buffers this cannot read: the check's error stands alone
                    pass
            raise
    cast(Any, recorded)._jaxdbg_records_failures = True  # marks the wrapper as ours
    return recorded


def record_failed_checks() -> bool:
    """Wrap JAX's NaN / Inf output checks so that :func:`failed_checks` can tell where
    they failed. Returns whether this JAX has them. Idempotent; a check outside
    :func:`failed_checks` costs one more Python call, and only while JAX's flags are on."""
    if _dispatch is None or _InternalFloatingPointError is None \
            or not hasattr(_dispatch, "check_special"):
        return False
    for name in _SPECIAL_CHECKS:
        check = getattr(_dispatch, name, None)
        if check is not None and not getattr(check, "_jaxdbg_records_failures", False):
            setattr(_dispatch, name, _recording(check))
    return True


@contextlib.contextmanager
def failed_checks() -> Iterator[list[FailedCheck]]:
    """The checks that fail in this thread inside the block, in the order they failed
    (the call's own output first, then its re-run's)."""
    outer = getattr(_failed_checks, "records", None)
    records: list[FailedCheck] = []
    _failed_checks.records = records
    try:
        yield records
    finally:
        _failed_checks.records = outer


def _special_checks_present() -> bool:
    if _dispatch is None or _InternalFloatingPointError is None:
        return False
    error = _InternalFloatingPointError("sqrt", "nan")
    needed = _SPECIAL_CHECKS if jax_version() >= (0, 10) else _SPECIAL_CHECKS[:1]
    return all(callable(getattr(_dispatch, n, None)) for n in needed) \
        and (error.name, error.ty) == ("sqrt", "nan")


# -- a traced program run up to one of its equations: a value made inside a jit --
# Equations inside these are the call's own, run once with its inputs: the program up
# to one of them is the same program with the call inlined. Loops, conds and maps run
# their bodies other than once (or per device) and are not entered.
_INLINED_CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
                            "remat", "checkpoint"})
_CALL_BODIES = ("jaxpr", "call_jaxpr")


def _call_body(eqn: Any) -> Any | None:
    """The ``(jaxpr, consts)`` that a call equation runs, when it is inlined."""
    if equation_primitive(eqn) not in _INLINED_CALLS:
        return None
    for key in _CALL_BODIES:
        body = eqn.params.get(key)
        if body is not None and hasattr(getattr(body, "jaxpr", body), "eqns"):
            return (body.jaxpr, list(body.consts)) if hasattr(body, "consts") else (body, [])
    return None


def path_to_equation(closed_jaxpr: Any, found: Callable[[Any], bool]) -> list[Any] | None:
    """The equations from the program's top to the first (in program order) that
    ``found`` accepts, entering only inlined calls; None when there is none."""
    def walk(jaxpr: Any) -> list[Any] | None:
        for eqn in jaxpr.eqns:
            if found(eqn):
                return [eqn]
            body = _call_body(eqn)
            if body is not None:
                inner = walk(body[0])
                if inner is not None:
                    return [eqn, *inner]
        return None
    return walk(closed_jaxpr.jaxpr)


def _bind(eqn: Any, values: list[Any]) -> list[Any]:
    """The equation's primitive applied to ``values``, as ``eval_jaxpr`` applies it."""
    bound = eqn.primitive.get_bind_params(eqn.params)
    if isinstance(bound, tuple):  # JAX < 0.8: (subfuns, params)
        subfuns, params = bound
    else:  # later: the params, with the subfuns among them
        subfuns, params = (), bound
    context = getattr(getattr(eqn, "ctx", None), "manager", None)
    with context if context is not None else contextlib.nullcontext():
        outs = eqn.primitive.bind(*subfuns, *values, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def run_up_to(closed_jaxpr: Any, path: list[Any], flat_args: list[Any]) -> list[Any]:
    """The outputs of the last equation of ``path`` when the program runs on
    ``flat_args`` (traceable: run it inside a ``jax.jit``)."""
    def read(env: dict, var: Any) -> Any:
        return var.val if type(var).__name__ == "Literal" else env[var]

    def run(jaxpr: Any, consts: list[Any], args: list[Any], depth: int) -> list[Any]:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            values = [read(env, v) for v in eqn.invars]
            if eqn is path[depth] and depth + 1 < len(path):
                body, body_consts = cast(Any, _call_body(eqn))
                return run(body, body_consts, values, depth + 1)
            outs = _bind(eqn, values)
            if eqn is path[depth]:
                return outs
            env.update(zip(eqn.outvars, outs))
        raise ValueError("the equation is not in the program")
    return run(closed_jaxpr.jaxpr, list(closed_jaxpr.consts), list(flat_args), 0)
# -- a program run piece by piece, each shard_map a piece of its own --
# checkify's rule for shard_map hands the error so far into the body replicated and
# gives it back with a leading axis of devices; a check after that (a second shard_map,
# as a gradient's backward pass makes, or any checked primitive) then fails to trace
# ("select cases must have the same shapes"). Run piece by piece, each piece checked
# on its own starts from a fresh error. The pieces are jax.extend.core Jaxprs of the
# program's own equations, so each keeps its traceback and name stack (the pass).
_DropVar = _private("jax._src.core", "DropVar")
_DebugInfo = _private("jax._src.core", "DebugInfo")
_JIT_CALLS = ("pjit", "jit")  # the jit call primitive's name: pjit before 0.8, jit after


def _is_jit_call(eqn: Any) -> bool:
    return equation_primitive(eqn) in _JIT_CALLS and hasattr(eqn.params.get("jaxpr"), "jaxpr")


def holds_shard_map(closed_jaxpr: Any) -> bool:
    return any(equation_primitive(eqn) == "shard_map" for eqn in program_equations(closed_jaxpr))


def _piece(eqns: list[Any]) -> tuple[Any, list[Any], list[Any]]:
    """The closed program of these equations: of the values they read and do not make,
    to every value they make; with those inputs and outputs."""
    from jax.extend import core as jex_core

    made: dict[Any, None] = {}
    needed: dict[Any, None] = {}
    for eqn in eqns:
        for var in eqn.invars:
            if isinstance(var, jex_core.Var) and var not in made:
                needed[var] = None
        for var in eqn.outvars:
            if not isinstance(var, _DropVar):
                made[var] = None
    effects = frozenset().union(*(eqn.effects for eqn in eqns))
    info = _DebugInfo("jaxdbg's NaN location", "a piece of the program",
                      tuple(f"in{i}" for i in range(len(needed))),
                      tuple(f"out{i}" for i in range(len(made))))
    jaxpr = jex_core.Jaxpr([], list(needed), list(made), eqns, effects, info)
    return jex_core.ClosedJaxpr(jaxpr, []), list(needed), list(made)


def run_in_pieces(closed_jaxpr: Any, args: list[Any],
                  run_piece: Callable[[Any, list[Any], bool], list[Any] | None]) -> bool:
    """Run a traced program (``jax.make_jaxpr``) on ``args`` (its flat inputs) piece by
    piece: each shard_map (also one inside a jit call, which is opened) alone, the
    equations between them together. ``run_piece(closed, inputs, backward)`` runs one
    piece (``backward``: a shard_map JAX made by transposing, or a piece of a jit call's
    body it made so, the backward pass, which checkify's checks inside cannot tell)
    and returns its outputs, or None to stop
    there. Whether it ran to the end."""
    from jax.extend import core as jex_core

    def run(jaxpr: Any, consts: list[Any], inputs: list[Any], backward: bool) -> list[Any] | None:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, inputs))
        pending: list[Any] = []

        def read(atom: Any) -> Any:
            return env[atom] if isinstance(atom, jex_core.Var) else atom.val

        def flush(in_backward_pass: bool = backward) -> bool:  # a body's name stack is its own
            if not pending:
                return True
            piece, needed, made = _piece(pending)
            pending.clear()
            outs = run_piece(piece, [read(v) for v in needed], in_backward_pass)
            if outs is None:
                return False
            env.update(zip(made, outs))
            return True

        for eqn in jaxpr.eqns:
            if _is_jit_call(eqn) and holds_shard_map(eqn.params["jaxpr"]):
                if not flush():
                    return None
                inner = eqn.params["jaxpr"]
                outs = run(inner.jaxpr, list(inner.consts), [read(v) for v in eqn.invars],
                           backward or equation_is_backward(eqn))
                if outs is None:
                    return None
                env.update((v, out) for v, out in zip(eqn.outvars, outs) if not isinstance(v, _DropVar))
            elif equation_primitive(eqn) == "shard_map":
                if not flush():
                    return None
                pending.append(eqn)
                if not flush(backward or equation_is_backward(eqn)):
                    return None
            else:
                pending.append(eqn)
        if not flush():
            return None
        return [read(v) for v in jaxpr.outvars]

    return run(closed_jaxpr.jaxpr, list(closed_jaxpr.consts), list(args), False) is not None


# -- equations a gradient's linearization made: the derivative of a line --
# Under jax.grad the forward pass is traced as a JVP, so its equations all read
# ``jvp(...)`` in their name stack: the primal ones (sqrt) and the ones the primitive's
# derivative rule added (sqrt's 0.5 / sqrt(x), a div). The name stack cannot tell them
# apart; where their values go can: a primal value reaches the function's own result
# (the loss, which grad traces and drops), a derivative's reaches only the backward
# pass. Bodies of jit calls and shard_maps are followed (their name stacks nest).

def _inlined(closed_jaxpr: Any) -> list[tuple[Any, str, list[Any], list[Any]]]:
    """``(eqn, name stack, inputs, outputs)`` of every equation, jit and shard_map
    bodies opened in place; a value is named by its Var or a stand-in, and a body's
    inputs and outputs by those of the equation that calls it."""
    from jax.extend import core as jex_core

    found: list[tuple[Any, str, list[Any], list[Any]]] = []

    def walk(jaxpr: Any, stack: str, rename: dict[Any, Any]) -> None:
        def name(atom: Any) -> Any:
            return rename.get(atom, atom) if isinstance(atom, jex_core.Var) else None

        for eqn in jaxpr.eqns:
            inner = eqn.params.get("jaxpr") if isinstance(eqn.params, dict) else None
            body: Any = getattr(inner, "jaxpr", inner)
            here = f"{stack}/{eqn.source_info.name_stack}"
            if (equation_primitive(eqn) in (*_JIT_CALLS, "shard_map") and hasattr(body, "eqns")
                    and len(body.invars) == len(eqn.invars) and len(body.outvars) == len(eqn.outvars)):
                inner_names = {v: name(a) for v, a in zip(body.invars, eqn.invars)}
                outer_outs = [name(v) for v in eqn.outvars]
                # A body's result is the equation's: a stand-in reads the body's value.
                for v, out in zip(body.outvars, outer_outs):
                    if isinstance(v, jex_core.Var) and v not in inner_names and out is not None:
                        inner_names[v] = out
                    elif out is not None:  # passed through or a literal: an identity step
                        source = inner_names.get(v) if isinstance(v, jex_core.Var) else None
                        found.append((eqn, here, [source], [out]))
                walk(body, here, inner_names)
                continue
            # A dropped output is a value nothing reads: a stand-in of its own.
            found.append((eqn, here, [name(a) for a in eqn.invars],
                          [object() if isinstance(v, _DropVar) else name(v) for v in eqn.outvars]))

    walk(closed_jaxpr.jaxpr, "", {})
    return found


def derivative_equations(closed_jaxpr: Any) -> list[Any]:
    """The equations a gradient's linearization added to its forward pass (a
    primitive's derivative), found by where their values go (see above)."""
    from jax.extend import core as jex_core

    eqns = _inlined(closed_jaxpr)
    forward = [i for i, (_, stack, _, _) in enumerate(eqns)
               if "jvp(" in stack and "transpose(" not in stack]
    forward_set = set(forward)
    read: set[Any] = {v for _, _, ins, _ in eqns for v in ins if v is not None}
    made_by = {v: i for i, (_, _, _, outs) in enumerate(eqns) for v in outs if v is not None}
    results = {v for v in closed_jaxpr.jaxpr.outvars if isinstance(v, jex_core.Var)}
    # The function's own result: forward values nothing reads, or the program returns;
    # every forward equation whose value leads there is the forward pass proper.
    pending = [i for i in forward if any(v not in read or v in results for v in eqns[i][3])]
    if not pending:
        return []  # no result of the forward pass is left to tell by
    primal = set(pending)
    while pending:
        for v in eqns[pending.pop()][2]:
            maker = made_by.get(v)
            if maker in forward_set and maker not in primal:
                primal.add(maker)
                pending.append(maker)
    return [eqns[i][0] for i in forward if i not in primal]


# -- the values JAX's op-by-op re-run of a failing call held --
# jax_debug_nans re-runs a failing call eagerly; where it raises, the user's frames
# hold its tracers, which carry concrete values: a shard_map's (ShardMapTracer.val,
# every device's block along a leading axis in the mesh's device order, or one block
# for a value the same on all) and a gradient's forward pass (the primal of a
# Linearize/JVP tracer).
_ShardMapTracer = _private("jax._src.shard_map", "ShardMapTracer")
_PRIMAL_TRACERS = tuple(t for t in (_private("jax._src.interpreters.ad", "LinearizeTracer"),
                                    _private("jax._src.interpreters.ad", "JVPTracer"))
                        if t is not None)


def rerun_value(value: Any, device: int | None) -> Any | None:
    """The concrete value of a tracer of JAX's eager re-run (``device``: the position in
    the mesh of the device whose block a shard_map value is read from); None when it
    holds none, or the value is not one device's alone."""
    for _ in range(8):  # tracers nest: a gradient of a shard_map, ...
        if not isinstance(value, jax.core.Tracer):
            return value
        if _ShardMapTracer is not None and isinstance(value, _ShardMapTracer):
            blocks = value.val
            mesh = getattr(getattr(value, "_trace", None), "mesh", None)
            count = getattr(blocks, "shape", (0,))[0] if getattr(blocks, "ndim", 0) else 0
            if count == 1:
                value = blocks[0]
            elif device is not None and mesh is not None and count == mesh.size and device < count:
                value = blocks[device]
            else:  # varying over some of the mesh's axes only: not read here
                return None
        elif _PRIMAL_TRACERS and isinstance(value, _PRIMAL_TRACERS):
            value = value.primal
        else:
            return None
    return None


def _rerun_value_names_present() -> bool:
    if _ShardMapTracer is None or len(_PRIMAL_TRACERS) != 2:
        return False
    init = getattr(_ShardMapTracer, "__init__", None)
    code = getattr(init, "__code__", None)
    return code is not None and "val" in code.co_varnames
