"""A replay that reaches a collective: which one, over which axis.

A replay runs one device's function alone, so a collective over the mapped axis
(``psum``, ``all_gather``, ``ppermute``, ``axis_index``, ...) has no other devices to
talk to and JAX raises something that does not say so (``unbound axis name: d``, or
``Evaluation rule for 'ppermute' not implemented``, by version). The exception's
traceback still holds the frame of the ``jax.lax`` collective the user called, with
its ``axis_name`` argument: the replay ends there with a message that names both.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import types
from typing import Any

import jax

_PARALLEL_FILE = os.path.join("lax", "parallel.py")
_AXIS_ONLY = frozenset({"axis_index", "axis_size"})  # they ask the axis, not the devices


@functools.lru_cache(maxsize=1)
def _collective_codes() -> dict[types.CodeType, str]:
    """The code of each of ``jax.lax``'s collectives (its functions of lax/parallel.py)."""
    found = {}
    for name, value in vars(jax.lax).items():
        function = inspect.unwrap(value) if inspect.isfunction(value) else None
        code = getattr(function, "__code__", None)
        if code is not None and code.co_filename.endswith(_PARALLEL_FILE):
            found[code] = name
    return found


@dataclasses.dataclass(frozen=True)
class CollectiveReached:
    """The collective a replay called, and its axis name(s)."""

    name: str
    axis: Any
    caller: tuple[str, int, str] | None = None  # (file, line, function) of the call

    def call(self) -> str:
        """``psum over axis 'd'``."""
        names = self.axis if isinstance(self.axis, (tuple, list)) else (self.axis,)
        axes = ", ".join(repr(a) for a in names)
        return f"{self.name} {'of' if self.name in _AXIS_ONLY else 'over'} ax{'es' if len(names) > 1 else 'is'} {axes}"

    def why(self) -> str:
        if self.name in _AXIS_ONLY:
            return "a one-device replay has no mapped axis"
        return "a one-device replay cannot run a collective (it needs every device of the axis)"


def collective_reached(exc: BaseException, traceback: types.TracebackType | None = None) -> CollectiveReached | None:
    """The outermost ``jax.lax`` collective whose call ``exc`` was raised in, if any
    (read from ``traceback``, by default the exception's)."""
    codes = _collective_codes()
    tb = traceback if traceback is not None else exc.__traceback__
    caller = None
    while tb is not None:
        code = tb.tb_frame.f_code
        name = codes.get(code)
        if name is not None:
            return CollectiveReached(name, tb.tb_frame.f_locals.get("axis_name"), caller)
        caller = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return None
