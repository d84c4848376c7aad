"""A host call that XLA keeps where the program puts it, and that receives NumPy arrays.

A breakpoint asks the host at every step whether its stop opens, and a screened stop
sends the few locals its condition reads. ``jax.pure_callback`` does neither well:

- XLA takes it as pure: without operands it is hoisted out of a loop and asked once
  per call;
- before the callback runs, JAX puts every operand on a device as a JAX array, about
  50 µs per call with one scalar (the question alone costs 3 µs).

:func:`host_call` lowers to the same custom call as an unordered ``io_callback``
(``has_side_effect``: XLA neither hoists, merges nor drops it), without its JAX
effect: JAX refuses IO effects inside ``custom_jvp`` and ``checkpoint``, where a
breakpoint's layers live, and the call changes nothing JAX must keep in order. Its
operands reach the callback as NumPy arrays, as XLA's buffers hold them.

:func:`call_on_every_device` runs a callback once on each device of a sharded ``jit``
(a host call runs on its first device only): a stop that ends its computation there
must end every device's program, or the others wait for the first one at their next
collective for ever. It carries JAX's debug effect, as ``jax.debug.callback`` does, so
that JAX keeps it without a result to use.

:func:`branch_on` is ``lax.switch`` on an index a host call gave: ``lax.cond`` and
``lax.switch`` first make their index (a comparison and a conversion, a clamp), which
XLA compiles into a kernel of its own, about 2 to 5 ms of compile time each on CPU, at
every lax.cond a stop stages. XLA's conditional takes an index past its last branch
as the last branch (as StableHLO's ``case`` says), as ``lax.switch``'s clamp does.

Private names: ``jax._src.callback.emit_python_callback`` (the lowering every JAX
callback uses), ``_callback_op_sharding`` (where the call runs under a sharded
``jit``, ``pmap`` or ``shard_map``: its first device's sharding, which
:func:`_on_device` moves to another device), ``jax._src.debugging.debug_effect`` and
``jax._src.lax.control_flow.conditionals._switch_internal`` (``lax.switch`` after its
clamp);
``tests/internals/test_internals.py`` fails when one moves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.extend import core as extend_core
from jax.interpreters import mlir

from jaxdbg.internals.jax_api import _private

_emit_python_callback = _private("jax._src.callback", "emit_python_callback")
_callback_op_sharding = _private("jax._src.callback", "_callback_op_sharding")
_debug_effect = _private("jax._src.debugging", "debug_effect")
_ShardingContext = _private("jax._src.sharding_impls", "ShardingContext")
_switch_internal = _private("jax._src.lax.control_flow.conditionals", "_switch_internal")

#: A host call's results: (shape, dtype) each.
Results = tuple[tuple[tuple[int, ...], np.dtype], ...]

host_call_p = extend_core.Primitive("jaxdbg_host_call")
host_call_p.multiple_results = True


def host_call(callback: Callable[..., Sequence[Any]], *operands: Any, results: Results) -> list[Any]:
    """``callback(*operands)`` on the host, at every execution of this point of the
    program; it gets NumPy arrays and returns one array-like per ``results`` entry."""
    return host_call_p.bind(*operands, callback=callback, results=results)


def _abstract_eval(*avals: Any, callback: Any, results: Results) -> list[Any]:
    return [jax.core.ShapedArray(shape, dtype) for shape, dtype in results]


def _run_on_host(callback: Callable[..., Sequence[Any]], results: Results, *args: Any) -> tuple[np.ndarray, ...]:
    # JAX's own callbacks run with the CPU as the default device: a JAX operation
    # the callback makes must not wait on the accelerator, which waits on the callback.
    with _on_cpu():
        out = callback(*args)
    return tuple(np.asarray(value, dtype=dtype).reshape(shape) for value, (shape, dtype) in zip(out, results))


def _impl(*args: Any, callback: Any, results: Results) -> list[Any]:
    """Outside a trace (``jax.disable_jit``): the call, now."""
    host = _run_on_host(callback, results, *(np.asarray(a) for a in args))
    return [jax.numpy.asarray(value) for value in host]


def _lowering(ctx: Any, *args: Any, callback: Any, results: Results) -> Any:
    sharding = _callback_op_sharding(ctx.module_context.axis_context, None, ctx.avals_out)
    out, _, _ = _emit_python_callback(
        ctx,
        functools.partial(_run_on_host, callback, results),
        None,
        list(args),
        ctx.avals_in,
        ctx.avals_out,
        has_side_effect=True,
        sharding=sharding,
        **_NO_TOKEN,
    )
    return out


@functools.lru_cache(maxsize=1)
def _cpu() -> Any:
    try:
        return jax.local_devices(backend="cpu")[0]
    except RuntimeError:  # no CPU backend (JAX_PLATFORMS without cpu): leave the default
        return None


def _on_cpu() -> Any:
    cpu = _cpu()
    return jax.default_device(cpu) if cpu is not None else contextlib.nullcontext()


def _no_token_argument() -> dict[str, bool]:
    """``returns_token=False`` where this JAX asks for it (0.8 and later); before, a
    call without a token returned none."""
    if _emit_python_callback is None:
        return {}
    return {"returns_token": False} if "returns_token" in inspect.signature(_emit_python_callback).parameters else {}


_NO_TOKEN = _no_token_argument()

host_call_p.def_abstract_eval(_abstract_eval)
host_call_p.def_impl(_impl)
mlir.register_lowering(host_call_p, _lowering)


every_device_call_p = extend_core.Primitive("jaxdbg_every_device_call")
every_device_call_p.multiple_results = True


def call_on_every_device(callback: Callable[..., None], *operands: Any) -> None:
    """``callback(device, *operands)`` on the host, once for each device of a sharded
    ``jit`` (``device``: its position in the program's devices), or once where the
    program runs on one device or per device already (``pmap``, ``shard_map``: 0)."""
    every_device_call_p.bind(*operands, callback=callback)


def _every_device_abstract_eval(*avals: Any, callback: Any) -> tuple[list, set]:
    return [], {_debug_effect}


def _every_device_impl(*args: Any, callback: Any) -> list:
    with _on_cpu():
        callback(0, *(np.asarray(a) for a in args))
    return []


def _every_device_lowering(ctx: Any, *args: Any, callback: Any) -> list:
    context = ctx.module_context.axis_context
    devices = context.num_devices if _ShardingContext is not None and isinstance(context, _ShardingContext) else 1
    for device in range(devices):

        def on_host(*values: Any, device: int = device) -> tuple:
            with _on_cpu():
                callback(device, *values)
            return ()

        _emit_python_callback(
            ctx,
            on_host,
            None,
            list(args),
            ctx.avals_in,
            [],
            has_side_effect=True,
            sharding=_on_device(_callback_op_sharding(context, None, []), device),
            **_NO_TOKEN,
        )
    return []


def _on_device(first: Any, device: int) -> Any:
    """A new callback sharding on its program's first device (``_callback_op_sharding``'s
    answer: GSPMD's OpSharding or Shardy's SdyArrayList), moved to ``device``."""
    if first is None or device == 0:
        return first
    if hasattr(first, "tile_assignment_devices"):
        first.tile_assignment_devices = [device]
        return first
    arrays = [dataclasses.replace(array, logical_device_ids=(device,)) for array in first.shardings]
    return dataclasses.replace(first, shardings=type(first.shardings)(arrays))


#: Whether :func:`call_on_every_device` can be staged in this JAX (else a sharded jit's
#: stop raises on its first device alone, as before it).
EVERY_DEVICE_CALLS = _debug_effect is not None

if EVERY_DEVICE_CALLS:
    every_device_call_p.def_effectful_abstract_eval(_every_device_abstract_eval)
    every_device_call_p.def_impl(_every_device_impl)
    mlir.register_lowering(every_device_call_p, _every_device_lowering)


def _switch_takes_an_index() -> bool:
    """Whether ``_switch_internal`` is ``(index, branches, operands, *, branches_platforms)``."""
    if _switch_internal is None:
        return False
    parameters = list(inspect.signature(_switch_internal).parameters)
    return parameters == ["index", "branches", "operands", "branches_platforms"]


_SWITCH = _switch_takes_an_index()


def branch_on(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[min(index, len(branches) - 1)](*operands)`` in the program, for an
    int32 ``index`` of at least 0 (a host call's answer), with no kernel made of it
    first; ``lax.switch`` where this JAX has no other way."""
    if not _SWITCH:
        return jax.lax.switch(index, branches, *operands)
    if not isinstance(index, jax.core.Tracer):  # run now (jax.disable_jit): no XLA to take it
        return branches[min(int(index), len(branches) - 1)](*operands)
    return _switch_internal(index, tuple(branches), operands, branches_platforms=None)


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.callback.emit_python_callback (ctx, callback, token, operands, avals in, avals out, has_side_effect)": (
            _emit_python_callback is not None
            and {"has_side_effect", "sharding"} <= set(inspect.signature(_emit_python_callback).parameters)
        ),
        "jax._src.callback._callback_op_sharding (axis_context, sharding, avals_out)": _callback_op_sharding is not None
        and len(inspect.signature(_callback_op_sharding).parameters) == 3,
        "jax._src.debugging.debug_effect (jax.debug.callback's effect)": _debug_effect is not None,
        "jax._src.sharding_impls.ShardingContext.num_devices (a sharded jit's devices)": _ShardingContext is not None
        and "num_devices" in getattr(_ShardingContext, "__dataclass_fields__", {}),
        "jax._src.lax.control_flow.conditionals._switch_internal (index, branches, operands, *, branches_platforms)": (
            _SWITCH
        ),
    }
