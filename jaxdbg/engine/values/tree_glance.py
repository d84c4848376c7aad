"""What a big pytree's locals row says before the browser shows it.

A row taken while the panel opens must not walk a 10,000-leaf tree (a transformer's
parameters): flattening such a dict alone takes tens of milliseconds, longer than
the rest of the stop. So the row first counts the tree's leaves only up to
:data:`LEAVES_AT_A_GLANCE`; a tree with more says its kind and how many entries its top
level holds (``dict · 5,000 entries · summary when shown``) and is sent ``pending``.
Its full summary (:func:`jaxdbg.engine.values.tree_summaries.tree_summary`) is taken
when the browser shows the row, as a big array's statistics are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from jaxdbg.engine.values import summaries, tree_summaries
from jaxdbg.runtime import phrases
from jaxdbg.runtime.guarded_calls import guarded

#: A tree with more leaves than this gets a glance first (its summary waits until shown).
LEAVES_AT_A_GLANCE = tree_summaries.LAZY_LEAVES
WHEN_SHOWN = "summary when shown"


_ARRAY_TYPES: set[type] = set()  # array types met as leaves: known at once the next time


def _one_level(node: Any) -> list[Any] | None:
    """The children of one pytree node, or None for a leaf."""
    kind = type(node)
    if kind in _ARRAY_TYPES:
        return None
    if kind is dict:
        return list(node.values())
    if kind in (list, tuple):
        return list(node)
    if node is None:
        return []  # an empty node: no leaves
    if summaries.is_array(node) and not tree_summaries.is_variable(node):
        if isinstance(node, (jax.Array, np.ndarray)) and not isinstance(node, jax.core.Tracer):
            _ARRAY_TYPES.add(kind)
        return None
    flat, treedef = jax.tree_util.tree_flatten(node, is_leaf=lambda child: child is not node)
    return None if jax.tree_util.treedef_is_leaf(treedef) else flat


def has_more_leaves(value: Any, limit: int = LEAVES_AT_A_GLANCE) -> bool:
    """Whether ``value`` has more than ``limit`` leaves, visiting at most ``limit + 1``
    of them (never the whole of a big tree). False where a node cannot be walked."""
    return bool(guarded(lambda: _count_past(value, limit), lambda e: False))


def _count_past(value: Any, limit: int) -> bool:
    stack = [value]
    seen = 0
    while stack:
        children = _one_level(stack.pop())
        if children is None:
            seen += 1
            if seen > limit:
                return True
        else:
            stack.extend(children)
    return False


def top_level_count(value: Any) -> int:
    """How many children the tree's top node holds (a dict's keys, a Module's fields)."""
    children = guarded(lambda: _one_level(value), lambda e: None)
    return len(children) if children is not None else 0


def glance(value: Any) -> str | None:
    """A big tree's row before it is shown: its kind (``nnx.Module``; a plain
    container's type) and its top level's size; None for a tree small enough to
    summarise at once (or no tree)."""
    if not tree_summaries.is_tree(value) or not has_more_leaves(value):
        return None
    kind = tree_summaries.library_kind(value) or summaries.type_name(value)
    entries = top_level_count(value)
    size = f"{phrases.count(entries)} {'entry' if entries == 1 else 'entries'}"
    return tree_summaries.SEPARATOR.join((kind, size, WHEN_SHOWN))


@dataclasses.dataclass(frozen=True)
class Glance:
    """A big traced tree's row until something reads the tree: a stop's frame rebuilds
    such a local from its leaves only then (``frames.TREE_LEAVES_REBUILT_AT_ONCE``).
    Taken once, when the breakpoint is traced: the structure is the same at every stop."""

    type_name: str
    summary: str
    expandable: bool


def glance_when_traced(value: Any) -> Glance | None:
    """The :class:`Glance` of a traced local (its leaves are tracers); None if it has none."""
    summary = glance(value)
    if summary is None:
        return None
    return Glance(summaries.type_name(value), summary, top_level_count(value) > 0)
