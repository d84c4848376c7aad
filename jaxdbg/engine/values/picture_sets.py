"""Several arrays' pictures at once: a frame's locals for the stop summary, and the
array leaves of a pytree for ``show``."""

from __future__ import annotations

import html
from typing import Any, Iterator, Mapping

import numpy as np

from jaxdbg.engine.values import tree_summaries
from jaxdbg.engine.values.array_picture import THUMBNAIL_SIDE, ArrayPicture, PictureError, picture
from jaxdbg.runtime.lazy_values import hint_of

SUMMARY_PICTURES = 12  # arrays the static stop summary draws
# Bigger arrays are left out of the summary: drawing one reads its host copy, which for a
# value still on an accelerator (a notebook global) is a transfer the user never asked for.
SUMMARY_MAX_ELEMENTS = 1 << 24


def small_pictures(values: Mapping[str, Any], limit: int = SUMMARY_PICTURES) -> tuple[tuple[str, ArrayPicture], ...]:
    """Small pictures of the arrays among ``values`` (a frame's locals), at most ``limit``;
    values that cannot be drawn (scalars, empty, object arrays) or hold more than
    SUMMARY_MAX_ELEMENTS elements are left out."""
    found: list[tuple[str, ArrayPicture]] = []
    for name in values:
        if len(found) >= limit:
            break
        if name.startswith("__") or hint_of(values, name) is not None:  # a big tree not read: no array
            continue
        value = values[name]
        if isinstance(value, type):
            continue
        try:
            if not (hasattr(value, "shape") and hasattr(value, "dtype")) or not tuple(value.shape):
                continue
            if int(np.prod(value.shape)) > SUMMARY_MAX_ELEMENTS:
                continue
            found.append((name, picture(value, max_side=THUMBNAIL_SIDE)))
        except (PictureError, TypeError, ValueError):
            continue
    return tuple(found)


# ---------------------------------------------------------------------- pytrees


def array_leaves(value: Any, limit: int = 16) -> list[tuple[str, Any]]:
    """``(key path, leaf)`` of the array leaves of a pytree (the value itself when it
    is an array), at most ``limit``."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and not tree_summaries.is_variable(value):
        return [("", value)]
    found: list[tuple[str, Any]] = []
    # An NNX Param is named by its own path (.l1.kernel, as p takes it), not .l1.kernel.value.
    for leaf in tree_summaries.leaves(value):
        array = leaf.value
        if hasattr(array, "shape") and hasattr(array, "dtype") and int(getattr(array, "size", 0)):
            found.append((leaf.path, array))
            if len(found) >= limit:
                break
    return found


class ShownArrays:
    """The pictures ``show`` drew, each with its pytree key path ("" for the value itself)."""

    def __init__(self, source: str, pictures: list[tuple[str, ArrayPicture]], more: int = 0) -> None:
        self.source = source
        self.pictures = pictures
        self.more = more  # array leaves left out

    def _labels(self) -> Iterator[tuple[str, ArrayPicture]]:
        for path, pic in self.pictures:
            yield self.source + path, pic

    def __str__(self) -> str:
        parts = [f"{label}: {pic}" for label, pic in self._labels()]
        if self.more:
            parts.append(f"... {self.more} more arrays")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        # Each picture under its name (grads['l2']['kernel']), which also names it for a
        # screen reader; the picture's own alt text says only its type.
        return "".join(
            f'<figure class="jaxdbg-shown" aria-label="{html.escape(label)}" style="margin:2px 0">'
            f'<figcaption style="font-family:monospace">{html.escape(label, quote=False)}</figcaption>{pic._repr_html_()}</figure>'
            for label, pic in self._labels()
        ) + (f"<div>... {self.more} more arrays</div>" if self.more else "")

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        for label, pic in self._labels():
            yield f"{label}:"
            yield pic
        if self.more:
            yield f"... {self.more} more arrays"
