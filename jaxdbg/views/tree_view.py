"""A pytree's outline (``pp``, ``tree``) drawn as a rich tree: plain text and coloured.

One rich ``Tree`` makes both forms, so the terminal and the plain text never disagree;
NaN / Inf pieces are bold red in colour, and said in words in both.
"""

from __future__ import annotations

import io
from typing import Any, Iterator

from jaxdbg.engine.values.tree_outline import OutlineRow, TreeOutline
from jaxdbg.engine.values.tree_summaries import SEPARATOR


def _label(row: OutlineRow) -> Any:
    from rich.text import Text

    text = Text()
    text.append(row.label, style="bold" if row.depth == 0 else "cyan")
    text.append(f"  {row.type_name}  ", style="dim")
    for i, (piece, alarming) in enumerate(row.parts):
        if i:
            text.append(SEPARATOR)
        text.append(piece, style="bold red" if alarming else ("dim" if row.static else ""))
    if row.hidden:
        text.append(f"  (… {row.hidden:,} more)", style="dim")
    return text


def rich_tree(view: TreeOutline) -> Any:
    from rich.tree import Tree

    if not view.rows:
        return Tree("")
    root = Tree(_label(view.rows[0]), guide_style="dim")
    stack = [root]
    for row in view.rows[1:]:
        del stack[row.depth :]
        stack.append(stack[-1].add(_label(row)))
    return root


def render_plain(view: TreeOutline) -> str:
    from rich.console import Console

    out = io.StringIO()
    # force_jupyter=False: in a kernel rich would display the tree itself and write nothing here.
    console = Console(
        file=out, width=10_000, no_color=True, color_system=None, highlight=False, emoji=False, force_jupyter=False
    )
    console.print(rich_tree(view))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def render_rich(view: TreeOutline) -> Iterator[Any]:
    yield rich_tree(view)


TreeOutline.register_drawing(plain=render_plain, rich=render_rich)
