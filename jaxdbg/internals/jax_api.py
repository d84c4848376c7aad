"""JAX internals for stopping inside a traced program, each use guarded and tested.

Frames, traces, named axes, host calls under remat and custom_vmap, and callback
errors. With ``jax_debugger`` (JAX's debugger registry), ``jax_checkify_errors``
(checkify's tracebacks and errors), ``jax_programs`` (a traced program's equations) and
``jax_nan_checks`` (JAX's NaN / Inf checks), ``jax_nan_reruns`` (the re-run of a call
that failed them), ``jax_partial_eval`` (which partial evaluation a breakpoint is traced
under) and ``jax_host_calls`` (a breakpoint's question to the host) these are
the only modules that touch JAX
internals; everything else in jaxdbg uses public JAX APIs.
``tests/internals/test_internals.py`` fails loudly when a name used here moves in a new
JAX release.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import types
from typing import Any, Callable, cast

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
_include_filename = _private("jax._src.traceback_util", "include_filename")
_exclude_paths = _private("jax._src.traceback_util", "_exclude_paths")
_included: dict[tuple[str, int], bool] = {}  # JAX's answer takes ~0.3 ms a file: asked once


def include_frame(frame: types.FrameType) -> bool:
    if _include_filename is None:
        return True
    filename = frame.f_code.co_filename
    key = (filename, len(_exclude_paths) if isinstance(_exclude_paths, list) else -1)  # a library may add paths
    answer = _included.get(key)
    if answer is None:
        answer = _included[key] = bool(_include_filename(filename))
        if len(_included) > 10_000:
            _included.clear()
    return answer


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
        if (
            frame.f_code.co_filename.endswith(_PXLA_FILE)
            and "devices" in frame.f_code.co_varnames
            and len(axis_names) == 1
        ):
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
_NOT_REALLY_EFFECTS = tuple(
    t
    for t in (_private("jax._src.core", "NamedAxisEffect"), _private("jax._src.core", "InternalMutableArrayEffect"))
    if t is not None
)
_REMAT_NAMES = ("partial_eval_jaxpr_custom_rules", "ensure_enum", "SaveableType", "RecomputeType")
_RECOMPUTE_AS = "_jaxdbg_recompute_as"


def recompute_custom_vmap_as(vmap_rule: Callable[..., Any], recomputed: Callable[[], Callable[..., Any]]) -> None:
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
    avals = [
        jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type) for v in eqn.invars[n_consts:]
    ]
    closed = jax.make_jaxpr(lambda *flat: layer(*jax.tree_util.tree_unflatten(args_tree, list(flat))))(*avals)
    calls = [e for e in closed.jaxpr.eqns if e.primitive is eqn.primitive]
    if len(calls) != 1 or closed.consts or closed.jaxpr.constvars or len(calls[0].invars) != len(eqn.invars):
        return eqn
    return eqn.replace(params=calls[0].params)


def _custom_vmap_partial_eval_custom(saveable: Any, unks_in: Any, inst_in: Any, eqn: Any):
    n_out = len(eqn.outvars)
    if any(unks_in):  # depends on unknowns: the staged half computes it, once
        return None, eqn, [True] * n_out, [True] * n_out, _not_instantiated(eqn, inst_in)
    policy = _pe.ensure_enum(saveable(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params))
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
    return (eqn, _recomputed_eqn(eqn, recomputed), [False] * n_out, [True] * n_out, _not_instantiated(eqn, inst_in))


def _remat_names_present() -> bool:
    return (
        _pe is not None
        and _Var is not None
        and _custom_vmap_p is not None
        and all(hasattr(_pe, n) for n in _REMAT_NAMES)
    )


def stage_host_calls_again_under_remat() -> bool:
    """Register the rule above, unless this JAX has a rule for custom_vmap of its own."""
    if not _remat_names_present():
        return False
    rules = _pe.partial_eval_jaxpr_custom_rules
    if rules.get(_custom_vmap_p, _custom_vmap_partial_eval_custom) is not _custom_vmap_partial_eval_custom:
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
        raise NotImplementedError(
            "Transpose rule (for reverse-mode differentiation) for 'custom_vmap_call' not implemented"
        )
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

# -- a differentiated value's primal, without linearizing anything --
_JVPTracer = _private("jax._src.interpreters.ad", "JVPTracer")
_LinearizeTracer = _private("jax._src.interpreters.ad", "LinearizeTracer")
_DIFFERENTIATED = tuple(kind for kind in (_JVPTracer, _LinearizeTracer) if kind is not None)


def primal_of(value: Any) -> Any:
    """``value`` without its tangents, where JAX is differentiating it (as JAX's own
    ``stop_gradient`` takes a JVPTracer's primal). ``lax.stop_gradient`` of a
    LinearizeTracer costs a linearization of its rule, about 0.4 ms a value."""
    while _DIFFERENTIATED and isinstance(value, _DIFFERENTIATED):
        value = value.primal
    return value


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


# jax.debug.log (newer JAX) hands its rows to the same module's logger, at INFO.
_debugging_logger = _private("jax._src.debugging", "logger")


def debug_log_logger() -> logging.Logger:
    """The logger ``jax.debug.log`` hands its records to, so a routed row that reaches
    Python logging is the record JAX would have made (filters, handlers, level)."""
    return logging.getLogger(_CALLBACK_LOGGER)


def _debug_log_logger_present() -> bool:
    """Where JAX has ``jax.debug.log``, its records go to :func:`debug_log_logger`."""
    if not hasattr(jax.debug, "log"):
        return True
    return getattr(_debugging_logger, "name", None) == _CALLBACK_LOGGER


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


def failed_in_an_input(exc: BaseException) -> bool:
    """Whether XLA's error ``exc`` is a failed computation's error carried into another
    through an input (the failed one's result), not raised by a computation of its own.

    XLA's CPU client then says the computation's dispatch failed, ahead of the carried
    error's text; that wording is XLA's too. Where it is missing (another platform's
    wording), this says False, which loses only a hint.
    """
    return is_jax_runtime_error(exc) and "Error dispatching computation" in str(exc)


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.traceback_util.include_filename, _exclude_paths (a list)": _include_filename is not None
        and isinstance(_exclude_paths, list),
        "jax._src.core.get_axis_env": _get_axis_env is not None,
        "jax._src.interpreters.batching.BatchTracer": _BatchTracer is not None,
        "logger jax._src.debugging": _CALLBACK_LOGGER in logging.Logger.manager.loggerDict,
        "jax._src.debugging.logger (jax.debug.log's records)": _debug_log_logger_present(),
        "jax._src.core.trace_state_clean": _trace_state_clean is not None,
        "jax._src.dispatch.runtime_tokens": _runtime_tokens is not None,
        "jax._src.dispatch.RuntimeTokenSet (current_tokens, output_runtime_tokens, clear)": _RuntimeTokenSet is not None
        and _runtime_tokens is not None
        and all(hasattr(_runtime_tokens, f) for f in _TOKEN_SET_FIELDS),
        "jax._src.core.trace_ctx": _trace_ctx is not None,
        "jax._src.interpreters.ad.JVPTracer, LinearizeTracer (.primal)": all(
            kind is not None and "primal" in getattr(kind, "__slots__", ()) for kind in (_JVPTracer, _LinearizeTracer)
        ),
        "jax._src.interpreters.partial_eval.DynamicJaxprTrace": _DynamicJaxprTrace is not None,
        "jax._src.custom_batching.custom_vmap_p": _custom_vmap_p is not None or not _CUSTOM_VMAP_DROPS_EFFECTS,
        "jax._src.interpreters.partial_eval (custom rules, ensure_enum, Saveable / Recompute)"
        ", jax._src.core.Var": _remat_names_present(),
        "jax._src.interpreters.ad.primitive_transposes": hasattr(_ad, "primitive_transposes"),
        "jax._src.xla_bridge._backends (a dict)": isinstance(_backends, dict),
    }


# -- has JAX started its backends (after which XLA reads XLA_FLAGS no more)? --
_backends = _private("jax._src.xla_bridge", "_backends")


def backends_started() -> bool | None:
    """Whether JAX has started a backend in this process (None when this JAX does not say)."""
    return None if not isinstance(_backends, dict) else bool(_backends)


# -- are we staging a computation, or running eagerly? --
_trace_state_clean = _private("jax._src.core", "trace_state_clean")


def is_tracing() -> bool:
    """True while JAX traces (jit, vmap, grad, scan bodies...), False when eager."""
    if _trace_state_clean is None:
        return True  # unknown: take the staged path, which also works eagerly
    return not _trace_state_clean()


def holds_tracer(tree: Any) -> bool:
    """True where a leaf of ``tree`` is a tracer (public API only)."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(tree))
