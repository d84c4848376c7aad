"""Array pictures drawn: the PNG (decoded here with zlib), rich's block characters,
the plain text, and a palette whose marked classes stand apart from the ramp."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np
from rich.console import Console

from jaxdbg.engine.values import array_picture as ap
from jaxdbg.views import array_picture_view as view
from jaxdbg.views import palette, png


def decode_png(data: bytes) -> np.ndarray:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height = size
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + 3 * width)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(height, width, 3)


def test_the_png_holds_each_cells_colour():
    pic = ap.picture(np.array([[np.nan, 0.0], [-1.0, 2.0]]))
    uri = view.image_uri(pic)
    pixels = decode_png(base64.b64decode(uri.split(",", 1)[1]))
    assert tuple(pixels[0, 0]) == palette.PICTURE_CLASSES["nan"]
    assert tuple(pixels[0, 1]) == palette.PICTURE_CLASSES["zero"]
    assert tuple(pixels[1, 1]) == palette.ramp(ap.LEVELS)[-1]
    assert tuple(pixels[1, 0]) == palette.ramp(ap.LEVELS)[0]


def test_png_rejects_other_shapes():
    import pytest

    with pytest.raises(ValueError):
        png.encode_rgb(np.zeros((2, 2), np.uint8))


def test_the_marked_classes_stand_apart_from_the_ramp():
    ramp = np.array(palette.ramp(ap.LEVELS), float)
    assert len(ramp) == ap.LEVELS
    for name, colour in palette.PICTURE_CLASSES.items():
        nearest = np.sqrt(((ramp - np.array(colour, float)) ** 2).sum(axis=1)).min()
        assert nearest > 60, (name, nearest)
    lightness = ramp @ np.array([0.2126, 0.7152, 0.0722])
    assert (np.diff(lightness) > -1).all()  # the ramp gets lighter: it reads in greyscale too


def test_plain_text_marks_each_class_with_a_letter():
    text = str(ap.picture(np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 2.0])))
    lines = text.splitlines()
    assert lines[0] == "float64[6]" and lines[1] == "NIi0.@"
    assert lines[2] == "-1 .. 2  nan=1  +inf=1  -inf=1  zero=1  (nan at [0], +inf at [1], -inf at [2])"


def test_rich_draws_two_rows_per_line_in_the_palettes_colours():
    pic = ap.picture(np.array([[np.nan, 1.0], [2.0, 0.0], [1.0, 2.0]]))
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="truecolor", width=80).print(pic)
    text = out.getvalue()
    assert text.count("▀") == 4 + 0  # 3 rows -> 2 lines of 2 cells
    r, g, b = palette.PICTURE_CLASSES["nan"]
    assert f"38;2;{r};{g};{b}" in text  # NaN's colour on top of the first cell


def test_the_html_is_an_inline_image_with_its_legend():
    html = ap.picture(np.zeros((3, 3)))._repr_html_()
    assert 'src="data:image/png;base64,' in html and "image-rendering:pixelated" in html
    assert "zero=9" in html


def test_the_browser_gets_every_codes_colour():
    colours = view.browser_colours()
    assert len(colours["table"]) == 256 and colours["levels"] == ap.LEVELS
    assert colours["table"][int(ap.CellClass.NAN)] == palette.hex_colour(palette.PICTURE_CLASSES["nan"])


def test_the_stop_summary_says_the_whole_arrays_range_and_where_its_nan_and_inf_are():
    """Every view of the summary (text, rich, HTML) reads the exact statistics, in a
    small array drawn whole and in one the thumbnail samples."""
    from jaxdbg.engine.frames import Frame
    from jaxdbg.engine.session import Session
    from jaxdbg.engine.stop_info import StopInfo
    from jaxdbg.views import html, text

    rng = np.random.default_rng(1)
    small = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    small[1, 2], small[3, 7] = np.nan, np.inf
    big = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    big[41, 3], big[57, 20] = np.nan, np.inf
    session = Session([Frame("<cell>", 1, "f", {"small": small, "big": big}, {}, ["f()\n"], 1)], StopInfo())
    summary = session.summary()

    def exact(x):
        finite = x[np.isfinite(x)]
        return f"{finite.min():.4g} .. {finite.max():.4g}  nan=1  +inf=1"

    plain = text.stop_summary(summary)
    assert f"small: float32[4,8]  {exact(small)}  (nan at [1, 2], +inf at [3, 7])" in plain
    assert (
        "big: float32[64,32]  sampled (evenly spaced): 32 of 64 rows; every NaN / Inf cell kept  "
        f"{exact(big)}  (nan at [41, 3], +inf at [57, 20])"
    ) in plain
    markup = str(html.stop_summary(summary))
    assert f"{exact(big)}  (nan at [41, 3], +inf at [57, 20])" in markup
    ((_, big_picture),) = [p for p in summary.pictures if p[0] == "big"]
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(big_picture)
    drawn = console.export_text()
    assert "nan=1" in drawn and "(nan at [41, 3], +inf at [57, 20])" in drawn
