"""checkify's internals: the tracebacks it keeps with each error, an error's user frame
when it was raised inside jnp's own jitted functions, and its ``Error``'s private fields.

Split from :mod:`jax_api` (whose ``_private`` and version checks it uses); as there,
``tests/internals/test_internals.py`` fails loudly through :func:`names_in_use` when a
name used here moves in a new JAX release.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from typing import Any, Callable, Iterator

from jaxdbg.internals.jax_api import _private, jax_version

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

        return [(f.filename, f.lineno or 0, f.name) for f in reversed(traceback.extract_tb(traceback_info))]
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
            whole = len(inner) >= len(around) and tuple(inner[-len(around) :]) == tuple(around)
            # A body of the user's own (a jit traced before, whose recorded stack ends at
            # the call that traced it): the failing equation's frames are right there.
            called = _called_function_file(outer_eqn)
            own_body = called is not None and is_user_file is not None and is_user_file(called)
            return traceback if inner and (whole or own_body) else outer
    return traceback


def _locating_names_present() -> bool:
    return _jax_get_traceback is not None and hasattr(_checkify_interpreter, "__code__")


@contextlib.contextmanager
def checkify_errors_at_user_frames(
    user_frames_of: Callable[[Any], Any], is_user_file: Callable[[str], bool] | None = None
) -> Iterator[None]:
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


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.checkify.get_traceback, checkify_jaxpr_flat": _locating_names_present(),
        "jax.experimental.checkify.Error fields (_pred, _code, _metadata, _payload)": _checkify_error_fields_present(),
    }
