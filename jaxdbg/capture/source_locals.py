"""The local names of the function around a line, read from its source.

A stop that knows a line only from where JAX traced it (a NaN located inside a compiled
program that JAX's re-run did not come back to) has no frame and no values. Its locals
table still lists the function's parameters and the names it assigns, each saying why
it has no value, so that ``p block`` explains itself instead of a ``NameError``.
"""

from __future__ import annotations

import ast
from typing import Union

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


def _enclosing(tree: ast.AST, lineno: int) -> _Function | None:
    """The innermost function (or lambda) whose lines hold ``lineno``."""
    best: _Function | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            end = getattr(node, "end_lineno", None) or node.lineno
            if node.lineno <= lineno <= end and (best is None or node.lineno >= best.lineno):
                best = node
    return best


def _parameters(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _assigned(function: _Function) -> list[str]:
    """Names the function's own body binds, in source order; not those of functions
    nested in it."""
    found: list[tuple[int, int, str]] = []
    body = function.body if isinstance(function.body, list) else [function.body]
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.col_offset, node.id))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.col_offset, node.name))
            continue  # its body is another scope
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue  # a scope of its own too
        pending.extend(ast.iter_child_nodes(node))
    return [name for _, _, name in sorted(found)]


def local_names(source: list[str], lineno: int) -> list[str]:
    """The parameters, then the assigned names, of the function around ``lineno`` in
    ``source`` (its lines); empty when the source does not parse or the line is not in a
    function."""
    try:
        tree = ast.parse("".join(source))
    except (SyntaxError, ValueError):
        return []
    function = _enclosing(tree, lineno)
    if function is None:
        return []
    names = _parameters(function.args) + _assigned(function)
    return list(dict.fromkeys(names))  # in order, once each
