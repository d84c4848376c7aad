"""Array pictures (:class:`jaxdbg.engine.values.array_picture.ArrayPicture`) as plain text,
with rich (block characters in colour, the ``show`` command) and as HTML (an inline PNG,
which a saved notebook keeps); and the colour table the panel's browser code draws with.

Every colour comes from :mod:`jaxdbg.views.palette`.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
from markupsafe import Markup

from jaxdbg.engine.values import array_picture as model
from jaxdbg.engine.values.array_picture import ArrayPicture, CellClass
from jaxdbg.views import palette, png, theme

_CLASS_NAMES = {CellClass.NAN: "nan", CellClass.POS_INF: "+inf", CellClass.NEG_INF: "-inf", CellClass.ZERO: "zero"}
# Plain text: the ramp in nine steps of ink, and a letter for each marked class.
_TEXT_RAMP = ".:-=+*#%@"
_TEXT_CLASSES = {CellClass.NAN: "N", CellClass.POS_INF: "I", CellClass.NEG_INF: "i", CellClass.ZERO: "0"}
THUMBNAIL_PIXELS = 64  # the longest side of an inline picture, in CSS pixels
CELL_PIXELS = 8  # the most CSS pixels one cell gets


def colour_table() -> np.ndarray:
    """(256, 3) uint8: the colour of every code (codes no class uses are grey)."""
    table = np.full((256, 3), 128, np.uint8)
    table[: model.LEVELS] = np.array(palette.ramp(model.LEVELS), np.uint8)
    for cls, name in _CLASS_NAMES.items():
        table[int(cls)] = palette.PICTURE_CLASSES[name]
    return table


_TABLE = colour_table()


def rgb(pic: ArrayPicture) -> np.ndarray:
    """The picture's cells as an (rows, cols, 3) uint8 image."""
    return _TABLE[pic.codes]


def browser_colours() -> dict[str, Any]:
    """What the panel's browser code draws with: the 256 codes' colours, the ramp's
    length and each class's code and colour (synced once into the widget)."""
    return {
        "table": [palette.hex_colour(tuple(int(v) for v in c)) for c in _TABLE],  # type: ignore[arg-type]
        "levels": model.LEVELS,
        "shard_line": [palette.hex_colour(c) for c in palette.PICTURE_SHARD_LINE],
        "classes": {
            name: {"code": int(cls), "colour": palette.hex_colour(palette.PICTURE_CLASSES[name])}
            for cls, name in _CLASS_NAMES.items()
        },
    }


def _number(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def places_text(pic: ArrayPicture) -> str:
    """Where the array's first NaN / Inf values are: ``(nan at [40, 3], +inf at [57, 20])``."""
    places = pic.stats.nonfinite_places() if pic.stats is not None else ""
    return f"({places})" if places else ""


def legend_text(pic: ArrayPicture) -> str:
    """``low … high`` (the ramp's ends: the array's exact range unless a view chose
    one), the counts of the marked classes in the whole array, and where its first
    NaN / Inf values are."""
    parts = [f"{_number(pic.low)} .. {_number(pic.high)}"]
    parts += [f"{name}={count:,}" for name, count in pic.class_counts.items() if count]
    if places_text(pic):
        parts.append(places_text(pic))
    return "  ".join(parts)


def header_text(pic: ArrayPicture) -> str:
    shape = ",".join(map(str, pic.shape))
    return f"{pic.dtype}[{shape}]" + (f"  {pic.note}" if pic.note else "")


def render_plain(pic: ArrayPicture) -> str:
    """One character per cell (``N`` NaN, ``I`` / ``i`` +/-Inf, ``0`` zero), a header and a legend."""
    chars = np.array(
        [_TEXT_RAMP[min(i * len(_TEXT_RAMP) // model.LEVELS, len(_TEXT_RAMP) - 1)] for i in range(model.LEVELS)]
        + ["?"] * (256 - model.LEVELS)
    )
    for cls, ch in _TEXT_CLASSES.items():
        chars[int(cls)] = ch
    lines = ["".join(row) for row in chars[pic.codes]]
    return "\n".join([header_text(pic), *lines, legend_text(pic)])


def render_rich(pic: ArrayPicture) -> Iterator[Any]:
    """Two cells per character (the upper half block: its colour on top, the
    background below), then the ramp and the classes' swatches."""
    from rich.style import Style
    from rich.text import Text

    image = rgb(pic)
    yield Text(header_text(pic), style="bold")
    for top in range(0, image.shape[0], 2):
        line = Text()
        for c in range(image.shape[1]):
            upper = palette.hex_colour(tuple(int(v) for v in image[top, c]))  # type: ignore[arg-type]
            lower = (
                palette.hex_colour(tuple(int(v) for v in image[top + 1, c]))  # type: ignore[arg-type]
                if top + 1 < image.shape[0]
                else None
            )
            line.append("▀", Style(color=upper, bgcolor=lower))
        yield line
    scale = Text(f"{_number(pic.low)} ")
    for colour in palette.ramp(16):
        scale.append("█", Style(color=palette.hex_colour(colour)))
    scale.append(f" {_number(pic.high)}")
    for name, count in pic.class_counts.items():
        if count:
            scale.append("  ")
            scale.append("█", Style(color=palette.hex_colour(palette.PICTURE_CLASSES[name])))
            scale.append(f" {name}={count:,}")
    if places_text(pic):
        scale.append(f"  {places_text(pic)}")
    yield scale


def image_uri(pic: ArrayPicture) -> str:
    """The picture as a PNG data URI, one pixel per cell."""
    return png.data_uri(png.encode_rgb(np.ascontiguousarray(rgb(pic))))


def render_html(pic: ArrayPicture) -> Markup:
    """An inline image (drawn crisp at a few pixels per cell), its header and legend."""
    rows, cols = pic.codes.shape
    # A few pixels per cell, at most CELL_PIXELS: a float32[1] is a small square, not a
    # 64-pixel block that reads as a big array.
    scale = max(1, min(CELL_PIXELS, THUMBNAIL_PIXELS // max(rows, cols)))
    width, height = cols * scale, max(rows * scale, 8)  # a 1-D row stays visible
    return Markup(
        '<span class="jaxdbg-picture"><img src="{}" alt="{}" width="{}" height="{}" '
        'style="image-rendering:pixelated;vertical-align:middle;{}">'
        ' <span style="{}">{}</span></span>'
    ).format(
        image_uri(pic),
        header_text(pic),
        width,
        height,
        theme.BORDER,
        theme.MUTED,
        header_text(pic) + "  " + legend_text(pic),
    )


model.ArrayPicture.register_drawing(plain=render_plain, rich=render_rich, html=render_html)
