"""One-line descriptions of values, with statistics for arrays.

Used by the ``locals`` command and by every backend's locals table, so a
10-million-element array is described by its statistics, never its repr.
"""

from __future__ import annotations

import dataclasses
import reprlib
import types
from typing import Any, Mapping

import jax
import numpy as np

from jaxdbg.engine import program_shardings
from jaxdbg.engine.frames import Unavailable
from jaxdbg.engine.values import linen_modules
from jaxdbg.engine.values.array_statistics import NONFINITE_LISTED as NONFINITE_LISTED
from jaxdbg.engine.values.array_statistics import NONFINITE_NAMED as NONFINITE_NAMED
from jaxdbg.engine.values.array_statistics import STATS_CHUNK as STATS_CHUNK
from jaxdbg.engine.values.array_statistics import ArrayStats as ArrayStats
from jaxdbg.engine.values.array_statistics import NonFiniteCell as NonFiniteCell
from jaxdbg.engine.values.array_statistics import array_stats as array_stats
from jaxdbg.runtime import phrases
from jaxdbg.runtime.guarded_calls import format_exception, guarded

_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = 60
_SHORT_REPR.maxother = 60
_SHORT_REPR.maxlist = _SHORT_REPR.maxtuple = _SHORT_REPR.maxdict = 6


@dataclasses.dataclass(frozen=True)
class ValueSummary:
    """What the locals table shows for one name.

    ``sharding`` is the value's layout in the program where the stop knows it
    (``P('x',) on mesh x=8``, ``device 3``), else where the value lives now.
    Views draw :attr:`array_type` and :meth:`stat_parts` rather than re-spelling them.
    """

    name: str
    type_name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    sharding: str | None = None
    stats: ArrayStats | None = None
    preview: str = ""  # short repr for non-arrays, or small arrays
    #: The statistics were left to be taken later (``summarize(..., with_stats=False)``).
    stats_pending: bool = False
    #: A pytree's preview in ``(text, alarming)`` pieces, so a view can mark its NaN / Inf.
    preview_parts: tuple[tuple[str, bool], ...] = ()

    @property
    def is_array(self) -> bool:
        return self.shape is not None

    @property
    def array_type(self) -> str:
        """The one shape notation of every view: ``float32[3,4]`` (``float32[]`` for a scalar)."""
        return array_type(self.shape, self.dtype) if self.shape is not None else ""

    def stat_parts(self) -> list[tuple[str, bool]]:
        """``(text, alarming)`` pieces: min/max/mean (over the finite values, and said so
        when there are others), then NaN / Inf counts (alarming). A scalar has none of
        min/max/mean: its value (the preview) says it all."""
        s = self.stats
        if s is None or self.shape == ():
            return []
        parts = []
        partial = bool(s.nan_count or s.inf_count)
        if s.min is not None:
            if s.magnitudes:
                text = f"mean={_num(s.mean)} |x| min={_num(s.min)} max={_num(s.max)}"
            else:
                text = f"min={_num(s.min)} max={_num(s.max)} mean={_num(s.mean)}"
            parts.append((text + (" of finite values" if partial else ""), False))
        elif partial:
            parts.append(("no finite values", False))
        if s.nan_count:
            parts.append((f"nan={phrases.count(s.nan_count)}", True))
        if s.inf_count:
            parts.append((f"inf={phrases.count(s.inf_count)}", True))
        if s.nonfinite_places():
            parts.append((f"({s.nonfinite_places()})", True))
        return parts

    def details(self) -> str:
        """The summary column: statistics and a preview of tiny arrays, or a short repr."""
        if not self.is_array:
            return self.preview
        return " ".join([text for text, _ in self.stat_parts()] + ([self.preview] if self.preview else []))

    def describe(self) -> str:
        """Plain-text summary: ``float32[3,4] min=… max=… mean=… nan=1``."""
        if not self.is_array:
            return self.preview
        return " ".join(p for p in (self.array_type, self.details()) if p)

    def describe_with_sharding(self) -> str:
        """:meth:`describe`, then an array's layout: ``float32[8] min=… [P('x',) on mesh x=8]``
        (the summary column of every plain locals table)."""
        return self.describe() + (f"  [{self.sharding}]" if self.sharding and self.is_array else "")

    @property
    def nonfinite(self) -> bool:
        """The statistics counted NaN or Inf values (so min / max / mean leave them out)."""
        s = self.stats
        return bool(s is not None and (s.nan_count or s.inf_count))


def _num(x: float | complex | None) -> str:
    if x is None:
        return "-"
    if isinstance(x, complex):
        return f"{x.real:.4g}{x.imag:+.4g}j"
    return f"{x:.4g}"


def array_type(shape: tuple[int, ...], dtype: Any) -> str:
    return f"{dtype}[{','.join(map(str, shape))}]"


def scalar_text(value: Any) -> str:
    """A 0-d array's value as numpy prints its dtype: ``968.4093`` for a float32,
    not the float64 digits of ``float(x)``; ``True``, ``nan``, ``(1+2j)``."""
    return str(np.asarray(value)[()])


def is_array(value: Any) -> bool:
    """Array-like values (jax, numpy, ...). Modules such as ``jnp`` also have ``shape``
    and ``dtype`` attributes (functions), hence the tuple check. A property that
    raises (anything) means "not an array"."""
    if isinstance(value, (type, types.ModuleType)):
        return False
    return guarded(
        lambda: isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype"), lambda e: False
    )


def describe_sharding(value: Any) -> str | None:
    """Where a concrete value lives: ``host``, ``cpu:0`` or ``P('x',) on mesh x=8``."""
    return guarded(lambda: program_shardings.runtime_label(value), lambda e: None)


def type_name(value: Any) -> str:
    cls = type(value)
    if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
        return "Array"  # what users know jax.Array by (not ArrayImpl)
    if cls is linen_modules.LinenModule:  # a Linen Module at a stop: the Module's class
        return str(value.module_type.__name__)
    return cls.__name__


def _preview(value: Any) -> str:
    return guarded(
        lambda: " ".join(_SHORT_REPR.repr(value).split()),  # one line
        lambda e: f"<repr failed: {format_exception(e)}>",
    )


def summarize(name: str, value: Any, sharding: str | None = None, *, with_stats: bool = True) -> ValueSummary:
    """One row of the locals table. ``sharding``: the program's layout when the stop
    knows it; otherwise where the value lives now is shown. ``with_stats=False`` leaves
    an array's statistics out (``stats_pending``), for a view that takes them only
    when the row is shown. Never raises (user ``__repr__`` / properties may raise
    anything; KeyboardInterrupt excepted)."""
    return guarded(
        lambda: _summarize(name, value, sharding, with_stats),
        lambda e: ValueSummary(name, type(value).__name__, preview=f"<summary failed: {format_exception(e)}>"),
    )


def _summarize(name: str, value: Any, sharding: str | None, with_stats: bool = True) -> ValueSummary:
    kind_name = type_name(value)
    if isinstance(value, Unavailable):  # the reason is the whole point: never cut it
        return ValueSummary(name, kind_name, preview=repr(value))
    if is_array(value):
        shape = tuple(int(d) for d in value.shape)
        size = int(np.prod(shape)) if shape else 1
        preview = ""
        if shape == ():  # a scalar's value, as numpy prints its dtype, in every view
            preview = guarded(lambda: scalar_text(value), lambda e: "")
        elif size <= 8:  # on one line, as a table row is: numpy gives a 2-D one's rows a line each
            text = guarded(
                lambda: np.array2string(np.asarray(value), threshold=8, separator=", ", max_line_width=10_000),
                lambda e: "",
            )
            preview = text.replace("\n", "")
        return ValueSummary(
            name,
            kind_name,
            shape,
            str(value.dtype),
            sharding or describe_sharding(value),
            array_stats(value) if with_stats else None,
            preview,
            stats_pending=not with_stats,
        )
    if isinstance(value, (list, tuple, dict)):
        arrays = _array_leaves(value)
        if arrays:
            elements = sum(int(np.prod(a.shape)) for a in arrays)
            return ValueSummary(
                name, kind_name, preview=(f"{len(value)} items; {len(arrays)} arrays, {elements:,} elements")
            )
    return ValueSummary(name, kind_name, preview=_preview(value))


_ELEMENTS_SHOWN = 6


def container_type(value: Any) -> str | None:
    """``whatis`` of a list, tuple or dict: ``list of 3: int, float32[4], str``;
    ``list of 50, each float32[4]``; the first few and how many more when long.
    None for anything else. Never raises."""
    if not isinstance(value, (list, tuple, dict)):
        return None
    return guarded(lambda: _container_type(value), lambda e: None)


def _container_type(value: list | tuple | dict) -> str:
    head = f"{type_name(value)} of {len(value)}"
    if isinstance(value, dict):
        shown = [f"{k!r}: {_element_type(v)}" for k, v in list(value.items())[:_ELEMENTS_SHOWN]]
    else:
        kinds = [_element_type(v) for v in value]
        if len(kinds) > 1 and len(set(kinds)) == 1:
            return f"{head}, each {kinds[0]}"
        shown = kinds[:_ELEMENTS_SHOWN]
    if not shown:
        return head
    more = len(value) - len(shown)
    return f"{head}: {', '.join(shown)}" + (f", ... ({more} more)" if more else "")


def _element_type(value: Any) -> str:
    if is_array(value):
        return array_type(tuple(int(d) for d in value.shape), value.dtype)
    if isinstance(value, (list, tuple, dict)):
        return f"{type_name(value)} of {len(value)}"
    return type_name(value)


def _array_leaves(tree: Any) -> list[Any]:
    return guarded(lambda: [leaf for leaf in jax.tree_util.tree_leaves(tree) if is_array(leaf)], lambda e: [])


def summarize_locals(values: Mapping[str, Any], shardings: dict[str, str] | None = None) -> list[ValueSummary]:
    """Rows for a frame's locals; ``shardings`` maps names to their program layout."""
    shardings = shardings or {}
    return [summarize(name, value, shardings.get(name)) for name, value in values.items() if not name.startswith("__")]
