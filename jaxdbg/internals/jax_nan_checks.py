"""JAX's NaN / Inf checks, hooked to say where a value came from.

Neither checkify nor ``jax_debug_nans`` says which pass of a gradient, which device or
which value a NaN or Inf was made in; their checks are private functions, wrapped
here so that they do. Each name they need is checked by
``tests/internals/test_internals.py`` through :func:`names_in_use`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Any, Callable, cast

import jax

from jaxdbg.internals.jax_api import _private, jax_version

_checkify_internal = _private("jax._src", "checkify")


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
    previous = _error_checks.get(
        _convert_element_type_p, functools.partial(_default_checkify_rule, _convert_element_type_p)
    )
    _error_checks[_convert_element_type_p] = _CheckedWhileLocating(_convert_element_type_p, previous)


def _cast_check_names_present() -> bool:
    return (
        isinstance(_error_checks, dict)
        and callable(_nan_error_check)
        and callable(_default_checkify_rule)
        and _convert_element_type_p is not None
    )


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
    return (
        code is not None
        and _current_name_stack is not None
        and code.co_varnames[: code.co_argcount][-2:] == ("enabled_errors", "out")
    )


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
            if isinstance(exc, _InternalFloatingPointError):
                try:
                    pieces = _pieces(args)
                    _records().append(
                        FailedCheck(
                            str(exc.name),
                            str(exc.ty),
                            tuple(d for d, buf in pieces if holds_nonfinite(buf, str(exc.ty))),
                            len(pieces),
                        )
                    )
                except Exception:  # buffers this cannot read: the check's error stands alone
                    pass
            raise

    cast(Any, recorded)._jaxdbg_records_failures = True  # marks the wrapper as ours
    return recorded


def record_failed_checks() -> bool:
    """Wrap JAX's NaN / Inf output checks so that :func:`failed_checks_since` can tell where
    they failed. Returns whether this JAX has them. Idempotent; a check
    costs one more Python call, and only while JAX's flags are on."""
    if _dispatch is None or _InternalFloatingPointError is None or not hasattr(_dispatch, "check_special"):
        return False
    for name in _SPECIAL_CHECKS:
        check = getattr(_dispatch, name, None)
        if check is not None and not getattr(check, "_jaxdbg_records_failures", False):
            setattr(_dispatch, name, _recording(check))
    return True


def _records() -> list[FailedCheck]:
    records = getattr(_failed_checks, "records", None)
    if records is None:
        records = _failed_checks.records = []
    return records


def failed_checks_mark() -> int:
    """Where this thread's record of failed checks stands: taken before each watched
    call, so it must cost next to nothing (no context manager)."""
    return len(_records())


def failed_checks_since(mark: int) -> list[FailedCheck]:
    """The checks that failed in this thread since ``mark``, in the order they failed
    (the call's own output first, then its re-run's). A failure is rare and its record
    small, so the record is never trimmed."""
    return _records()[mark:]


def _special_checks_present() -> bool:
    if _dispatch is None or _InternalFloatingPointError is None:
        return False
    error = _InternalFloatingPointError("sqrt", "nan")
    needed = _SPECIAL_CHECKS if jax_version() >= (0, 10) else _SPECIAL_CHECKS[:1]
    return all(callable(getattr(_dispatch, n, None)) for n in needed) and (error.name, error.ty) == ("sqrt", "nan")


# -- the values JAX's op-by-op re-run of a failing call held --
# jax_debug_nans re-runs a failing call eagerly; where it raises, the user's frames
# hold its tracers, which carry concrete values: a shard_map's (ShardMapTracer.val,
# every device's block along a leading axis in the mesh's device order, or one block
# for a value the same on all) and a gradient's forward pass (the primal of a
# Linearize/JVP tracer).
_ShardMapTracer = _private("jax._src.shard_map", "ShardMapTracer")
_PRIMAL_TRACERS = tuple(
    t
    for t in (
        _private("jax._src.interpreters.ad", "LinearizeTracer"),
        _private("jax._src.interpreters.ad", "JVPTracer"),
    )
    if t is not None
)


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


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.checkify.check_nans(..., enabled_errors, out), "
        "jax._src.source_info_util.current_name_stack": _inf_check_names_present(),
        "jax._src.checkify.error_checks, nan_error_check, default_checkify_rule, "
        "jax._src.lax.lax.convert_element_type_p": _cast_check_names_present(),
        "jax._src.dispatch.check_special (and check_special_array from JAX 0.10), "
        "jax._src.api_util.InternalFloatingPointError (name, ty)": _special_checks_present(),
        "jax._src.shard_map.ShardMapTracer(val), jax._src.interpreters.ad.LinearizeTracer, "
        "JVPTracer": _rerun_value_names_present(),
    }
