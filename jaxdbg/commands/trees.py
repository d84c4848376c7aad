"""``pp`` of a pytree and the ``tree`` command: a tree of per-leaf summaries.

``pp EXPR`` of a pytree (a Module, a parameter dict, an optimizer state) draws its
outline by key path, each leaf summarised, not every element of every leaf; ``pp EXPR
--full`` prints all of it as before (pprint). ``tree EXPR [depth]`` draws the outline
``depth`` levels deep. The outline is :mod:`jaxdbg.engine.values.tree_outline`'s model,
drawn by :mod:`jaxdbg.views.tree_view`.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.engine.command_table import error
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.values import tree_outline, tree_summaries

FULL = "--full"


def pretty(session: Any, arg: str) -> Output:
    """``pp EXPR``: an outline for a pytree of arrays, pprint for anything else or with ``--full``."""
    source, full = _without_full(arg)
    if not source:
        return error("pp needs an expression, e.g. 'pp params' (add --full to print every element)")
    value, failed = session.value_of(source, expression_only=True)
    if failed is not None:
        return failed
    if full or not tree_summaries.holds_arrays(value):
        return session.value_output(value, pretty=True)
    return _outline(source, value, None)


def tree(session: Any, arg: str) -> Output:
    """``tree EXPR [depth]``: the outline of a pytree, ``depth`` levels deep."""
    source, depth = _with_depth(arg.strip())
    if not source:
        return error("tree needs an expression, e.g. 'tree model' or 'tree model 2'")
    if depth is not None and depth < 1:
        return error(f"tree's depth is a positive number of levels, not {depth}")
    value, failed = session.value_of(source, expression_only=True)
    if failed is not None:
        return failed
    if not tree_summaries.is_tree(value):
        return error(f"{source} is not a pytree ({tree_summaries.short_description(value)}); try 'p {source}'")
    return _outline(source, value, depth)


def _outline(source: str, value: Any, depth: int | None) -> Output:
    view = tree_outline.outline(source, value, depth)
    return Output(OutputKind.VALUE, str(view), value)


def _without_full(arg: str) -> tuple[str, bool]:
    words = arg.split()
    if words and words[-1] == FULL:
        return arg.strip()[: -len(FULL)].strip(), True
    return arg.strip(), False


def _with_depth(arg: str) -> tuple[str, int | None]:
    """``model 2`` -> (``model``, 2). A line that is a whole expression (``a - 2``)
    keeps its last number."""
    head, _, last = arg.rpartition(" ")
    if not head or not last.lstrip("-").isdigit() or _compiles(arg):
        return arg, None
    return head.strip(), int(last)


def _compiles(source: str) -> bool:
    try:
        compile(source, "<tree>", "eval")
    except SyntaxError:
        return False
    return True
