"""A pytree's structure (``whatis``) and its outline by key path (``pp``, ``tree``).

The outline is one row per node: an inner node (a Module, a dict, an optimizer state)
with the summary of its subtree, a leaf with its array statistics; Equinox's static
fields are rows of their own, marked static. Each row's ``expression`` is valid Python
in the frame (``model.l1.kernel``, ``grads['bn']['mean']``), so a view can offer it.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Iterator

import jax

from jaxdbg.engine.values import drawable, summaries, tree_summaries
from jaxdbg.runtime.guarded_calls import guarded

#: Children listed under one node; the rest are counted (a 10,000-leaf dict).
CHILDREN_SHOWN = 50
#: Nodes a walk visits at most (``whatis`` of a huge tree stays quick).
NODES_WALKED = 200_000


def node_children(value: Any) -> list[tuple[str, Any]]:
    """The children of one pytree node by key (``.l1``, ``['bn']``, ``[0]``); none for a
    leaf, an array or an NNX Variable (whose array is its value). NNX's private
    bookkeeping (``_pytree__state``) is left out."""
    if not tree_summaries.is_tree(value) or tree_summaries.is_variable(value):
        return []
    flat, _ = jax.tree_util.tree_flatten_with_path(value, is_leaf=lambda node: node is not value)
    out = []
    for keys, child in flat:
        label = jax.tree_util.keystr(keys)
        if not label.startswith("._pytree__"):
            out.append((label, child))
    return out


def static_fields(value: Any) -> list[tuple[str, Any]]:
    """An Equinox Module's static fields (part of its type, not of its pytree)."""
    eqx = sys.modules.get("equinox")
    if eqx is None or not isinstance(value, eqx.Module):
        return []
    return [
        (f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value) if f.metadata.get("static", False)
    ]


def _walk(value: Any) -> Iterator[Any]:
    """Every node below ``value`` (not itself), depth first, at most NODES_WALKED."""
    stack = [child for _, child in reversed(node_children(value))]
    seen = 0
    while stack and seen < NODES_WALKED:
        node = stack.pop()
        seen += 1
        yield node
        stack.extend(child for _, child in reversed(node_children(node)))


_MODULE_KINDS = ("nnx.Module", "eqx.Module")


def structure(value: Any) -> str | None:
    """``whatis`` of a pytree: ``nnx.Module MLP: 3 submodules, 6 Param (146 float32),
    2 BatchStat (32 float32)``. None for a value that is no library object and no
    nested container (a flat list says more as ``list of 3: ...``). Never raises."""
    return guarded(lambda: _structure(value), lambda e: None)


def _structure(value: Any) -> str | None:
    if not tree_summaries.is_tree(value):
        return None
    kind = tree_summaries.library_kind(value)
    children = node_children(value)
    if not kind and not any(tree_summaries.is_tree(child) for _, child in children):
        return None
    if tree_summaries.is_variable(value):
        summary = tree_summaries.summarize_tree(value)
        return f"{kind} {summary.array_type}".strip()
    parts = []
    submodules = sum(1 for node in _walk(value) if tree_summaries.library_kind(node) in _MODULE_KINDS)
    if submodules:
        parts.append(f"{submodules} {'submodule' if submodules == 1 else 'submodules'}")
    parts += _leaf_groups(tree_summaries.leaves(value))
    statics = static_fields(value)
    if statics:
        names = ", ".join(name for name, _ in statics[:6]) + (", ..." if len(statics) > 6 else "")
        parts.append(f"{len(statics)} static {'field' if len(statics) == 1 else 'fields'} ({names})")
    if not kind:
        parts.insert(0, f"{len(children)} {'entry' if len(children) == 1 else 'entries'}")
    if kind == tree_summaries.HAIKU_KIND:  # its keys are the names of the modules that made it
        names = ", ".join(str(k) for k in list(value)[:6]) + (", ..." if len(value) > 6 else "")
        parts.insert(0, f"{len(value)} {'module' if len(value) == 1 else 'modules'} ({names})")
        return f"{kind}: {', '.join(parts)}"
    name = summaries.type_name(value)
    head = kind if kind.rpartition(".")[2] == name else f"{kind} {name}".strip()  # not "nnx.State State"
    return f"{head}: {', '.join(parts) or 'no leaves'}"


def _leaf_groups(found: list[tree_summaries.Leaf]) -> list[str]:
    """``6 Param (146 float32)``, ``4 arrays (12 int32)``, ``2 functions``: leaves by
    their Variable kind, plain arrays, then the other leaves by type."""
    groups: dict[str, list[Any]] = {}
    others: dict[str, int] = {}
    for leaf in found:
        if leaf.is_array:
            groups.setdefault(leaf.kind or "", []).append(leaf.value)
        else:
            name = "function" if callable(leaf.value) else type(leaf.value).__name__
            others[name] = others.get(name, 0) + 1
    parts = []
    for kind, arrays in groups.items():
        elements: dict[str, int] = {}
        for array in arrays:
            elements[str(array.dtype)] = elements.get(str(array.dtype), 0) + _size(array)
        counts = " + ".join(f"{n:,} {dtype}" for dtype, n in sorted(elements.items(), key=lambda item: -item[1]))
        word = kind or ("array" if len(arrays) == 1 else "arrays")
        parts.append(f"{len(arrays)} {word} ({counts})")
    for name, n in others.items():
        parts.append(f"{n} {name}{'' if n == 1 else 's'}")
    return parts


def _size(array: Any) -> int:
    size = 1
    for d in array.shape:
        size *= int(d)
    return size


# -- the outline -------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class OutlineRow:
    """One node of the outline. ``parts``: the summary as ``(text, alarming)`` pieces;
    ``hidden``: the children not listed (past CHILDREN_SHOWN, or below the depth)."""

    depth: int
    label: str  # the key: ".l1", "['bn']", "[0]"; the expression for the root
    expression: str  # valid in the frame: "model.l1"
    type_name: str
    parts: tuple[tuple[str, bool], ...]
    hidden: int = 0
    static: bool = False

    @property
    def text(self) -> str:
        return tree_summaries.SEPARATOR.join(text for text, _ in self.parts)


@dataclasses.dataclass(frozen=True)
class TreeOutline(drawable.Drawable):
    """A pytree as rows of summaries (drawn as text and rich by ``views/tree_view.py``)."""

    rows: tuple[OutlineRow, ...]


def outline(expression: str, value: Any, depth: int | None = None) -> TreeOutline:
    """The outline of ``value`` (named ``expression`` in the frame), ``depth`` levels
    deep (None: all), CHILDREN_SHOWN children per node."""
    rows: list[OutlineRow] = []
    _add(rows, 0, expression, expression, value, depth)
    return TreeOutline(tuple(rows))


def _add(rows: list[OutlineRow], level: int, label: str, expression: str, value: Any, depth: int | None) -> None:
    children = node_children(value)
    statics = static_fields(value)
    folded = depth is not None and level >= depth
    shown = [] if folded else children[:CHILDREN_SHOWN]
    rows.append(
        OutlineRow(level, label, expression, summaries.type_name(value), _parts(value), len(children) - len(shown))
    )
    if folded:
        return
    for name, field in statics:
        text = tree_summaries.short_description(field)
        rows.append(OutlineRow(level + 1, f".{name}", f"{expression}.{name}", "static", ((text, False),), static=True))
    for key, child in shown:
        _add(rows, level + 1, key, expression + key, child, depth)


def _parts(value: Any) -> tuple[tuple[str, bool], ...]:
    if tree_summaries.is_tree(value):
        return tuple(tree_summaries.summarize_tree(value).parts())
    if summaries.is_array(value):
        row = summaries.summarize("", value)
        preview = " ".join(row.preview.split())  # a small array's elements, on the row's one line
        return ((row.array_type, False), *row.stat_parts(), *(((preview, False),) if preview else ()))
    return ((tree_summaries.short_description(value), False),)
