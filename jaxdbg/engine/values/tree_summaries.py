"""One-line summaries of pytrees (Modules, parameter dicts, gradients, optimizer states).

A locals row of a pytree says what a JAX user asks of it: the library's kind
(``nnx.Module``, ``eqx.Module``, ``nnx.State``, an optax state, Haiku's params / state),
how many array leaves, elements, dtypes and bytes, the global L2 norm and largest ``|x|``
of its float leaves, and where the first NaN / Inf is, by key path
(``NaN in .l2.kernel (3)``). A value that is no pytree gets its type and size, never a
repr cut in the middle.

Flax, Equinox, Haiku and optax are never imported here: a value is of their kind only
when its library is already loaded (``sys.modules``).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import types
from typing import Any, Callable, Mapping

import jax
import numpy as np

from jaxdbg.engine.frames import Unavailable
from jaxdbg.engine.values import linen_modules, summaries
from jaxdbg.engine.values.leaf_stats import StatsArrays, as_arrays, is_float, many_leaf_stats
from jaxdbg.runtime import phrases
from jaxdbg.runtime.guarded_calls import format_exception, guarded

#: A locals row taken before the panel is up (``lazy``) reads the values of at most
#: this many leaves and elements; a bigger tree's statistics wait until its row is shown.
LAZY_LEAVES = 256
LAZY_ELEMENTS = 1_000_000
#: A repr up to this long is shown whole; a longer one becomes type and size.
SHORT_REPR = 60
SEPARATOR = " · "


# -- what library a value comes from --------------------------------------------------
def _flax_nnx() -> Any:
    return sys.modules.get("flax.nnx")


def is_variable(value: Any) -> bool:
    """A Flax NNX ``Variable`` (``Param``, ``BatchStat``, ...): one leaf of a Module."""
    nnx = _flax_nnx()
    return nnx is not None and isinstance(value, nnx.Variable)


def variable_value(value: Any) -> Any:
    """An NNX Variable's array (a one-leaf Variable's); any other value as it is."""
    if not is_variable(value):
        return value
    inner = jax.tree_util.tree_leaves(value)
    return inner[0] if len(inner) == 1 else value


def library_kind(value: Any) -> str:
    """``nnx.Module``, ``nnx.Param``, ``nnx.State``, ``eqx.Module``, ``optax state``,
    ``hk params / state``, ``dataclass``, or "" for a plain container or anything else."""
    return guarded(lambda: _library_kind(value), lambda e: "")


def _library_kind(value: Any) -> str:
    if isinstance(getattr(type(value), "jaxdbg_saved_kind", None), property):  # a tree reopened
        return str(value.jaxdbg_saved_kind)
    if type(value) is linen_modules.LinenModule:
        return linen_modules.KIND
    nnx = _flax_nnx()
    if nnx is not None:
        if isinstance(value, nnx.Variable):
            return f"nnx.{type(value).__name__}" if _from_module(type(value), "flax") else "nnx.Variable"
        if isinstance(value, nnx.Module):
            return "nnx.Module"
        if isinstance(value, nnx.State):
            return "nnx.State"
        if isinstance(value, nnx.Optimizer):
            return "nnx.Optimizer"
    eqx = sys.modules.get("equinox")
    if eqx is not None and isinstance(value, eqx.Module):
        return "eqx.Module"
    if _optax_state(value):
        return "optax state"
    if _optax_chain(value):
        return "optax state"
    if is_haiku_dict(value):
        return HAIKU_KIND
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "dataclass"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return "namedtuple"
    return ""


def _saved_kind(value: Any) -> str:
    """The kind a tree reopened from a saved stop had; "" for any other value."""
    return str(value.jaxdbg_saved_kind) if isinstance(getattr(type(value), "jaxdbg_saved_kind", None), property) else ""


#: What ``hk.transform`` gives and takes: params and state share one shape (Haiku types
#: both as ``Mapping[str, Mapping[str, Array]]``), so one kind names both.
HAIKU_KIND = "hk params / state"


def is_haiku_dict(value: Any) -> bool:
    """Haiku's params or state, where Haiku is loaded: a plain dict of module names
    (``'mlp/~/linear_0'``) to plain dicts of names (``'w'``) to arrays, two levels exactly
    (a Flax Linen ``{'params': {...}}`` is deeper)."""
    if "haiku" not in sys.modules or type(value) is not dict or not value:
        return False
    for module, entries in value.items():
        if type(module) is not str or type(entries) is not dict or not entries:
            return False
        if not all(type(name) is str and _array_like(leaf) for name, leaf in entries.items()):
            return False
    return True


def _from_module(cls: type, package: str) -> bool:
    return (getattr(cls, "__module__", "") or "").split(".")[0] == package


def _optax_state(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields") and _from_module(type(value), "optax")


def _optax_chain(value: Any, depth: int = 0) -> bool:
    """A chain's states: a tuple of optax states and of chains of them (``adam`` is one
    itself), live or reopened from a saved stop."""
    if type(value) is not tuple or not value or depth > 8:
        return False
    return all(_optax_state(v) or _saved_kind(v) == "optax state" or _optax_chain(v, depth + 1) for v in value)


def is_tree(value: Any) -> bool:
    """A pytree node (a registered type, dict, list, tuple): not an array, not a leaf."""
    if is_variable(value):  # it has an array's shape and dtype, but is a node holding one
        return True
    if type(value) in (dict, list, tuple):
        return len(value) > 0
    if summaries.is_array(value) or isinstance(value, (str, bytes, type, types.ModuleType)) or value is None:
        return False
    # one level is enough to tell a node from a leaf (a whole tree's structure is not)
    one_level = guarded(
        lambda: jax.tree_util.tree_structure(value, is_leaf=lambda node: node is not value), lambda e: None
    )
    return one_level is not None and not jax.tree_util.treedef_is_leaf(one_level)


def holds_arrays(value: Any) -> bool:
    """A pytree with an array among its leaves: what ``pp`` draws as an outline. One of
    plain values (``x.shape``, a dict of settings) prints as pdb's ``pp`` prints it."""
    return is_tree(value) and guarded(lambda: any(leaf.is_array for leaf in leaves(value, paths=False)), lambda e: True)


# -- leaves and their statistics -------------------------------------------------------
class Leaf:
    """One leaf by key path (``.l1.kernel``, ``['bn']['mean']``, ``[0].mu``): an array
    or an opaque value. ``kind``: the NNX Variable type that holds it (``Param``). The
    path's text is made when asked for (a 10,000-leaf tree's row names one or two)."""

    __slots__ = ("_keys", "_path", "kind", "value")

    def __init__(self, keys: tuple[Any, ...], value: Any, kind: str = "") -> None:
        self._keys, self.value, self.kind = keys, value, kind
        self._path: str | None = None

    @property
    def path(self) -> str:
        if self._path is None:
            self._path = jax.tree_util.keystr(self._keys)
        return self._path

    @property
    def is_array(self) -> bool:
        return _array_like(self.value)


_ARRAY_TYPES: set[type] = set()  # jax.Array's and numpy's concrete types, as met


def _array_like(value: Any) -> bool:
    kind = type(value)
    if kind in _ARRAY_TYPES:  # an isinstance of jax.Array costs ~2 us: 10,000 leaves, 20 ms
        return True
    if isinstance(value, (jax.Array, np.ndarray)) and not isinstance(value, jax.core.Tracer):
        _ARRAY_TYPES.add(kind)
        return True
    return summaries.is_array(value)


def leaves(value: Any, *, paths: bool = True) -> list[Leaf]:
    """Every leaf of ``value`` with its key path; an NNX Variable's array is named by the
    Variable's path (``.l1.kernel``, a valid expression), with the Variable's kind.
    ``paths=False``: without their paths (8x quicker: a big tree's structure only)."""
    found: list[Leaf] = []
    nnx = _flax_nnx()
    variable = nnx.Variable if nnx is not None else None
    stop_at = (lambda node: isinstance(node, variable)) if variable is not None else None
    if paths:
        flat = jax.tree_util.tree_flatten_with_path(value, is_leaf=stop_at)[0]
    else:
        flat = [((), leaf) for leaf in jax.tree_util.tree_leaves(value, is_leaf=stop_at)]
    for keys, leaf in flat:
        if variable is not None and isinstance(leaf, variable):
            inner = jax.tree_util.tree_flatten_with_path(leaf)[0]
            for sub, array in inner:
                found.append(Leaf(keys if len(inner) == 1 else keys + sub, array, type(leaf).__name__))
        else:
            found.append(Leaf(keys, leaf))
    return found


@dataclasses.dataclass(frozen=True)
class NonFiniteLeaf:
    """The first leaf (in key-path order) that holds NaN (or Inf), and how many leaves do."""

    path: str
    count: int  # in that leaf
    leaves: int = 1
    total: int = 0

    def text(self, word: str) -> str:
        more = self.leaves - 1
        tail = f" and {more} more {'leaf' if more == 1 else 'leaves'} ({phrases.count(self.total)} in all)"
        where = f" in {self.path}" if self.path else ""  # a Variable's own row: no path
        return f"{word}{where} ({phrases.count(self.count)})" + (tail if more else "")


@dataclasses.dataclass(frozen=True)
class TreeSummary:
    """What a pytree's row says. Statistics are of its float leaves, over finite values;
    ``stats_pending``: not taken yet (a big tree's, taken when its row is shown)."""

    type_name: str
    kind: str
    arrays: int
    elements: int
    dtypes: tuple[tuple[str, int], ...]  # (dtype, elements), first seen first
    nbytes: int
    others: int  # leaves that are no array: functions, strings, ...
    norm: float | None = None
    max_abs: float | None = None
    nan: NonFiniteLeaf | None = None
    inf: NonFiniteLeaf | None = None
    stats_pending: bool = False
    #: One array leaf's type (``float32[4,16]``): a Variable's or a one-array tree's.
    array_type: str = ""

    @property
    def nonfinite(self) -> bool:
        return self.nan is not None or self.inf is not None

    def parts(self) -> list[tuple[str, bool]]:
        """``(text, alarming)`` pieces of :meth:`line`, NaN / Inf alarming."""
        out: list[tuple[str, bool]] = []
        if self.kind:
            out.append((self.kind, False))
        if self.array_type:
            out.append((self.array_type, False))
        elif self.arrays:
            out.append((f"{phrases.count(self.arrays)} {'array' if self.arrays == 1 else 'arrays'}", False))
            out.append((" + ".join(f"{phrases.count(n)} {d}" for d, n in self.dtypes), False))
        elif not self.others:
            out.append(("no leaves", False))
        if self.arrays:
            out.append((byte_size(self.nbytes), False))
        if self.others:
            leaf_word = "leaf" if self.others == 1 else "leaves"
            other = f"other {leaf_word}" if self.arrays else f"{leaf_word}, no arrays"
            out.append((f"{phrases.count(self.others)} {other}", False))
        if self.stats_pending:
            out.append(("statistics when shown", False))
        if self.norm is not None:
            out.append((f"‖·‖ {self.norm:.4g}", False))
        if self.max_abs is not None:
            out.append((f"max {self.max_abs:.4g}", False))
        if self.nan is not None:
            out.append((self.nan.text("NaN"), True))
        if self.inf is not None:
            out.append((self.inf.text("Inf"), True))
        return out

    def line(self) -> str:
        """``nnx.Module · 6 arrays · 146 float32 · 584 B · ‖·‖ 0.41 · max 0.26 · NaN in .l2.kernel (3)``."""
        return SEPARATOR.join(text for text, _ in self.parts())


def byte_size(n: int) -> str:
    """``584 B``, ``2.3 KB``, ``1.5 MB`` (powers of 1024, as memory is counted)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.3g} {unit}"
        size /= 1024
    return f"{n} B"  # unreachable


def summarize_tree(value: Any, *, lazy: bool = False) -> TreeSummary:
    """The summary of a pytree (see :class:`TreeSummary`). ``lazy``: a tree over
    :data:`LAZY_LEAVES` leaves or :data:`LAZY_ELEMENTS` elements keeps its statistics
    for later; its structure (shapes and dtypes, no values) is always read."""
    found = leaves(value)
    return summarize_leaves(summaries.type_name(value), library_kind(value), found, lazy=lazy)


def summarize_leaves(type_name: str, kind: str, found: list[Leaf], *, lazy: bool = False) -> TreeSummary:
    """The summary of ``found`` leaves (a tree's, or a subtree's in an opened node)."""
    structure, floats = leaf_structure(type_name, kind, found)
    if not floats:
        return structure
    if lazy and (structure.arrays > LAZY_LEAVES or structure.elements > LAZY_ELEMENTS):
        return dataclasses.replace(structure, stats_pending=True)
    stats = as_arrays(many_leaf_stats([leaf.value for leaf in floats]))
    return add_up(structure, stats, lambda i: floats[i].path)


def leaf_structure(type_name: str, kind: str, found: list[Leaf]) -> tuple[TreeSummary, list[Leaf]]:
    """The summary of ``found`` without statistics (what their shapes and dtypes say),
    and the float array leaves its statistics would read."""
    arrays = [leaf for leaf in found if leaf.is_array]
    by_dtype: dict[Any, int] = {}  # dtype objects: their names are slow to make, so once each
    for leaf in arrays:
        dtype = leaf.value.dtype
        by_dtype[dtype] = by_dtype.get(dtype, 0) + math.prod(leaf.value.shape)
    dtypes = sorted(((str(d), n) for d, n in by_dtype.items()), key=lambda item: -item[1])
    elements = sum(by_dtype.values())
    nbytes = sum(n * _itemsize(d) for d, n in by_dtype.items())
    one = arrays[0].value if len(arrays) == 1 and len(found) == 1 else None
    structure = TreeSummary(
        type_name,
        kind,
        len(arrays),
        elements,
        tuple(dtypes),
        nbytes,
        len(found) - len(arrays),
        array_type=summaries.array_type(tuple(int(d) for d in one.shape), one.dtype) if one is not None else "",
    )
    float_dtypes = {d for d in by_dtype if is_float(d)}
    return structure, [leaf for leaf in arrays if leaf.value.dtype in float_dtypes]


def _itemsize(dtype: Any) -> int:
    try:
        return int(dtype.itemsize)
    except Exception:  # an extended dtype (a PRNG key's) may have none
        return 0


def add_up(structure: TreeSummary, stats: StatsArrays, path_of: Callable[[int], str]) -> TreeSummary:
    """``structure`` with its float leaves' statistics (``stats``, in order) added up;
    ``path_of(i)`` names the ``i``-th float leaf (asked for only where a NaN or Inf is)."""
    total, top = float(stats.sum_squares.sum()), float(stats.max_abs.max())
    if stats.all_finite:
        return dataclasses.replace(structure, norm=math.sqrt(total), max_abs=top)
    if math.isnan(total) or math.isnan(top):  # a leaf not read, or one without finite values
        total = float(np.nansum(stats.sum_squares))
        tops = stats.max_abs[~np.isnan(stats.max_abs)]
        top = float(tops.max()) if tops.size else math.nan
    return dataclasses.replace(
        structure,
        norm=math.sqrt(total),
        max_abs=None if math.isnan(top) else top,
        nan=_first_nonfinite(stats.nans, path_of),
        inf=_first_nonfinite(stats.infs, path_of),
    )


def _first_nonfinite(counts: np.ndarray, path_of: Callable[[int], str]) -> NonFiniteLeaf | None:
    if not counts.any():
        return None
    holding = np.flatnonzero(counts)
    first = int(holding[0])
    return NonFiniteLeaf(path_of(first), int(counts[first]), int(holding.size), int(counts.sum()))


def tree_summary(value: Any, *, lazy: bool = False) -> TreeSummary | None:
    """The summary of a pytree, or None for a value that is none (an array, a leaf) and
    for a small tree without arrays (``{'lr': 0.1}``), whose short repr says more."""
    if not is_tree(value):
        return None
    return guarded(lambda: _tree_summary(value, lazy), lambda e: None)


def _tree_summary(value: Any, lazy: bool) -> TreeSummary | None:
    found = leaves(value, paths=not lazy)
    if not any(leaf.is_array for leaf in found) and _short_repr(value):
        return None
    summary = summarize_leaves(summaries.type_name(value), library_kind(value), found, lazy=lazy)
    if lazy and not summary.stats_pending and summary.arrays:  # small: its paths name its NaN
        summary = summarize_leaves(summary.type_name, summary.kind, leaves(value), lazy=True)
    return summary


def summarize(name: str, value: Any, sharding: str | None = None, *, with_stats: bool = True) -> summaries.ValueSummary:
    """One row of a locals table: an array's statistics (:func:`summaries.summarize`), a
    pytree's :class:`TreeSummary` line, or any other value's :func:`short_description`."""
    if isinstance(value, Unavailable) or (summaries.is_array(value) and not is_variable(value)):
        return summaries.summarize(name, value, sharding, with_stats=with_stats)
    tree = tree_summary(value, lazy=not with_stats)
    if tree is None:
        return summaries.ValueSummary(name, summaries.type_name(value), preview=short_description(value))
    return summaries.ValueSummary(
        name, summaries.type_name(value), preview=tree.line(), preview_parts=tuple(tree.parts())
    )


def summarize_locals(
    values: Mapping[str, Any], shardings: dict[str, str] | None = None
) -> list[summaries.ValueSummary]:
    """Rows for a frame's locals (``locals``); ``shardings`` maps names to their program layout."""
    shardings = shardings or {}
    return [summarize(name, value, shardings.get(name)) for name, value in values.items() if not name.startswith("__")]


# -- values that are no pytree ---------------------------------------------------------
def short_description(value: Any) -> str:
    """A value's whole repr when it is short and on one line; else its type and size
    (``str, 1,204 characters``, ``function relu``, ``Foo object, 48 B``), never a cut repr."""
    return guarded(lambda: _short_description(value), lambda e: f"{type(value).__name__} object")


def _short_repr(value: Any) -> str:
    text = guarded(lambda: repr(value), lambda e: "")
    return text if len(text) <= SHORT_REPR and "\n" not in text else ""


def _short_description(value: Any) -> str:
    text = guarded(lambda: repr(value), lambda e: e)
    if not isinstance(text, str):  # said, as every view says it, rather than hidden
        return f"<repr failed: {format_exception(text)}>" if isinstance(text, BaseException) else type(value).__name__
    if len(text) <= SHORT_REPR and "\n" not in text:
        return text
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}"
    if isinstance(value, str):
        return f"str, {phrases.count(len(value))} characters"
    if isinstance(value, (bytes, bytearray)):
        return f"{type(value).__name__}, {byte_size(len(value))}"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{type(value).__name__} {getattr(value, '__module__', None) or '?'}.{value.__qualname__}"
    if callable(value) and hasattr(getattr(value, "__wrapped__", None), "__qualname__"):
        inner = value.__wrapped__
        return f"{type(value).__name__} {getattr(inner, '__module__', None) or '?'}.{inner.__qualname__}"
    size = guarded(lambda: len(value), lambda e: None)
    if isinstance(size, int):
        return f"{type(value).__name__} of {phrases.count(size)} items"
    return f"{type(value).__name__} object, {byte_size(sys.getsizeof(value))}"
