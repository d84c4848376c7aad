"""The ``show EXPR`` debugger command: an array (or each array of a pytree) as a picture.

The Session evaluates ``EXPR`` in the current frame; this module makes an
:class:`~jaxdbg.engine.outputs.Output` of kind ``PICTURE`` whose ``data`` is a
:class:`~jaxdbg.engine.values.picture_sets.ShownArrays` (the terminal draws it with rich block characters, the panel
embeds its HTML) and whose ``text`` is its plain rendering.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.engine.command_table import error as _error
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.values import array_picture, picture_sets

#: A terminal row holds about this many cells (two picture rows per text line).
TERMINAL_SIDE = 64
LEAVES_SHOWN = 8


def run(session: Any, arg: str) -> Output:
    """``show EXPR`` in ``session``'s current frame."""
    source = arg.strip()
    if not source:
        return _error("show needs an expression, e.g. 'show x'")
    value, failed = session.value_of(source, expression_only=True)
    if failed is not None:
        return failed
    try:
        leaves = picture_sets.array_leaves(value, LEAVES_SHOWN + 1)
    except Exception as e:
        return _error(f"could not read the arrays of {source}: {type(e).__name__}: {e}")
    if not leaves:
        return _error(f"{source} holds no array to show (its type is {type(value).__name__})")
    pictures = []
    for path, leaf in leaves[:LEAVES_SHOWN]:
        try:
            pictures.append((path, array_picture.picture(leaf, axes=_axes_for(leaf), max_side=TERMINAL_SIDE)))
        except array_picture.PictureError as e:
            return _error(f"cannot show {source}{path}: {e}")
    shown = picture_sets.ShownArrays(source, pictures, more=len(leaves) - len(pictures))
    return Output(OutputKind.PICTURE, str(shown), shown)


def _axes_for(leaf: Any) -> tuple[int, int] | None:
    """A 2-D column (a Dense layer's ``(n, 1)`` kernel) as one row, not one cell a line;
    the picture's note says it is drawn transposed. Else the default, the last two axes."""
    shape = tuple(getattr(leaf, "shape", ()))
    return (1, 0) if shape[1:] == (1,) and len(shape) == 2 and shape[0] > 1 else None
