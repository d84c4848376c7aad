"""Every colour jaxdbg draws with, in one place, for light and dark pages.

Notebook views take their colours from the frontend's theme (JupyterLab's ``--jp-*``
variables). Where a frontend has no such variables the fallbacks below apply:
:data:`LIGHT` is what the panel's stylesheet falls back to (``panel.css`` declares
its ``--jaxdbg-*`` variables from :func:`panel_variables`, checked by a test), and the
static views fall back to colours relative to the text colour, which read on either.
Where a view must pick literal colours itself it picks both variants: the shard hues
are translucent in HTML (pastel over a light page, deep over a dark one) and mid-light
behind black text in a terminal; Colab's token colours have a light and a dark style.

This module imports nothing of jaxdbg.
"""

from __future__ import annotations

import colorsys
import dataclasses


@dataclasses.dataclass(frozen=True)
class Palette:
    """The named colours of a view, as CSS colour values (the fallbacks of a page without
    theme variables; a dark page defines the variables)."""

    fg: str  # text
    fg_muted: str  # secondary text: line numbers, notes
    bg: str  # the view's background
    code_bg: str  # behind source code
    border: str
    accent: str  # the current line, focus, the primary button
    error: str


LIGHT = Palette(
    fg="#1f1f1f", fg_muted="#555", bg="#fff", code_bg="#fff", border="#ccc", accent="#1976d2", error="#c62828"
)

#: Source token colours: the editor's theme variable ``--jp-mirror-editor-<name>-color``
#: for each, with JupyterLab's light editor colour as the panel stylesheet's fallback.
#: (Static HTML falls back to the text colour instead: see :mod:`jaxdbg.views.theme`.)
EDITOR_TOKENS = {
    "keyword": "#008000",
    "builtin": "#008000",
    "def": "#0000ff",
    "meta": "#aa22ff",
    "property": "#05a",
    "variable": "#1f1f1f",
    "string": "#ba2121",
    "number": "#080",
    "comment": "#408080",
    "operator": "#aa22ff",
    "punctuation": "#05a",
    "error": "#f00",
}
#: How much of a token's colour is kept, mixed towards the text colour, so that every
#: token keeps WCAG AA contrast in Light, Dark and High Contrast (the panel and static HTML).
TOKEN_MIX = "62%"


def editor_token(name: str, fallback: str | None = None) -> str:
    """``var(--jp-mirror-editor-keyword-color, #008000)``, or with another fallback."""
    return f"var(--jp-mirror-editor-{name}-color, {fallback or EDITOR_TOKENS[name]})"


#: A grey border that reads on light and dark pages alike (the sharding grids' fallback).
NEUTRAL_BORDER = "rgba(128,128,128,.55)"

#: The JupyterLab theme variable each colour comes from on a themed page.
THEME_VARIABLES = {
    "fg": "--jp-content-font-color1",
    "fg_muted": "--jp-content-font-color2",
    "bg": "--jp-layout-color1",
    "code_bg": "--jp-layout-color0",
    "border": "--jp-border-color2",
    "accent": "--jp-brand-color1",
    "error": "--jp-error-color1",
}


def themed(name: str, fallback: Palette = LIGHT) -> str:
    """``var(--jp-brand-color1, #1976d2)``: the theme's colour, else the palette's."""
    return f"var({THEME_VARIABLES[name]}, {getattr(fallback, name)})"


def panel_variables() -> dict[str, str]:
    """The ``--jaxdbg-*`` custom properties the panel's stylesheet declares."""
    return {"--jaxdbg-" + name.replace("_", "-"): themed(name) for name in THEME_VARIABLES}


#: Colab's theme variables for the same colours, with Colab's light colours as fallbacks
#: (its dark theme defines the variables). ``current`` tints the current source line.
COLAB_VARIABLES = {
    "fg": ("--colab-primary-text-color", "#202124"),
    "fg_muted": ("--colab-secondary-text-color", "#5f6368"),
    "surface": ("--colab-primary-surface-color", "#fff"),
    "surface_alt": ("--colab-secondary-surface-color", "#f1f3f4"),  # buttons
    "border": ("--colab-border-color", "#dadce0"),
    "error": ("--colab-error-text-color", "#d93025"),
    "current": ("--colab-highlighted-surface-color", "rgba(255, 213, 79, 0.35)"),
}


def colab(name: str) -> str:
    """``var(--colab-border-color, #dadce0)``: Colab's colour for ``name``."""
    variable, fallback = COLAB_VARIABLES[name]
    return f"var({variable}, {fallback})"


#: pygments styles for source drawn with literal token colours (Colab's view).
PYGMENTS_STYLES = {"light": "default", "dark": "github-dark"}


def shard_hue(number: int) -> float:
    """A deterministic, well spread hue in degrees for shard ``number`` (golden angle)."""
    return (number * 137.508 + 200.0) % 360.0


def shard_tint(number: int) -> str:
    """A shard's colour in HTML: translucent, so pastel over a light theme, deep over a dark one."""
    return f"hsla({shard_hue(number):.0f},78%,55%,0.38)"


def shard_terminal_rgb(number: int) -> tuple[int, int, int]:
    """A shard's colour in a terminal: a mid-light background behind black text, readable
    on dark and light terminals."""
    r, g, b = colorsys.hls_to_rgb(shard_hue(number) / 360.0, 0.72, 0.55)
    return int(r * 255), int(g * 255), int(b * 255)


# --------------------------------------------------------------------------- array pictures
# The array view's heatmap colours are data colours: the same on every theme. The ramp
# is viridis (perceptually uniform, readable with the common colour-vision deficiencies
# and in greyscale), interpolated from these anchors; the marked classes sit outside it:
# NaN vermilion and zero mid grey (both absent from viridis), +Inf white and -Inf black
# (the ends of lightness, beyond the ramp's). Views draw a theme-coloured border around
# the picture so white and black cells read on light, dark and high-contrast pages.
_VIRIDIS_ANCHORS = (
    (0.00, (68, 1, 84)),
    (0.13, (71, 44, 122)),
    (0.25, (59, 81, 139)),
    (0.38, (44, 113, 142)),
    (0.50, (33, 144, 141)),
    (0.63, (39, 173, 129)),
    (0.75, (92, 200, 99)),
    (0.88, (170, 220, 50)),
    (1.00, (253, 231, 37)),
)

#: The colour of each marked class of cells, by the name the engine counts them under.
PICTURE_CLASSES = {"nan": (213, 94, 0), "+inf": (255, 255, 255), "-inf": (0, 0, 0), "zero": (150, 150, 150)}

#: Shard boundaries over a heatmap: a dark line under a light one, which reads on every cell.
PICTURE_SHARD_LINE = ((0, 0, 0), (255, 255, 255))


def ramp(levels: int) -> list[tuple[int, int, int]]:
    """``levels`` colours from the ramp's low end to its high end."""
    out: list[tuple[int, int, int]] = []
    for i in range(levels):
        t = i / max(levels - 1, 1)
        for (t0, c0), (t1, c1) in zip(_VIRIDIS_ANCHORS, _VIRIDIS_ANCHORS[1:]):
            if t <= t1:
                f = (t - t0) / (t1 - t0)
                r, g, b = (round(lo + (hi - lo) * f) for lo, hi in zip(c0, c1))
                out.append((r, g, b))
                break
    return out


def hex_colour(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb
