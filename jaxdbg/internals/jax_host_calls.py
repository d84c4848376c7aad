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

Private names: ``jax._src.callback.emit_python_callback`` (the lowering every JAX
callback uses) and ``_callback_op_sharding`` (where the call runs under a sharded
``jit``, ``pmap`` or ``shard_map``); ``tests/internals/test_internals.py`` fails when
either moves.
"""

from __future__ import annotations

import contextlib
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


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.callback.emit_python_callback (ctx, callback, token, operands, avals in, avals out, has_side_effect)": (
            _emit_python_callback is not None
            and {"has_side_effect", "sharding"} <= set(inspect.signature(_emit_python_callback).parameters)
        ),
        "jax._src.callback._callback_op_sharding (axis_context, sharding, avals_out)": _callback_op_sharding is not None
        and len(inspect.signature(_callback_op_sharding).parameters) == 3,
    }
