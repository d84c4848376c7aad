"""Inline styles for static notebook HTML that take their colours from the theme.

Static views (stop summaries, print logs, checkify errors, the status table) are saved
in the notebook, so they carry inline styles rather than a stylesheet. Three places
read them:

* JupyterLab / Notebook 7: the ``--jp-*`` theme variables give Light, Dark and High
  Contrast their own colours;
* a frontend without those variables (nbconvert, other viewers): every fallback is
  relative to the inherited text colour (``currentColor``), never a fixed light-theme
  hex, so it reads on a light or a dark page alike;
* an untrusted notebook: Lab's sanitizer drops every declaration it cannot check
  (``var()``, ``color-mix()``), so no colour is left at all and the text takes the
  page's own. No style here may be a bare literal colour that would survive the
  sanitizer and clash with a dark page; meaning is always in the words too (``→``
  marks the current line).
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from jaxdbg.engine.source_window import numbered_lines
from jaxdbg.views import palette, source_tokens

MONO = "font-family:var(--jp-code-font-family, monospace);font-size:12px;line-height:1.45;"
MUTED = "color:var(--jp-content-font-color2, color-mix(in srgb, currentColor 72%, transparent));"
# The theme's error colour drawn a quarter towards the text colour, so it keeps AA
# contrast on Dark (whose red alone falls short of 4.5:1 on its background).
ERROR = f"color:color-mix(in srgb, {palette.themed('error')} 75%, var(--jp-content-font-color1, currentColor));"
BORDER = "border:1px solid var(--jp-border-color2, color-mix(in srgb, currentColor 30%, transparent));"
BOX = MONO + BORDER + "border-radius:3px;padding:4px 6px;"
CURRENT_LINE = f"background:color-mix(in srgb, {palette.themed('accent')} 14%, transparent);font-weight:bold;"

# pygments token families -> the editor's theme variable for them (as the live panel).
_TOKEN_VARIABLES = {
    "Keyword": "keyword",
    "Operator.Word": "keyword",
    "Name.Builtin": "builtin",
    "Name.Function": "def",
    "Name.Class": "def",
    "Name.Decorator": "meta",
    "Name.Attribute": "property",
    "Name": "variable",
    "Literal.String": "string",
    "Literal.Number": "number",
    "Comment": "comment",
    "Operator": "operator",
    "Punctuation": "punctuation",
    "Error": "error",
}


def token_style(kind) -> str:
    """The inline colour of a pygments token type: the editor's theme colour for it,
    mixed towards the text colour (the live panel's mix, which keeps AA contrast in
    Light, Dark and High Contrast); "" for plain text."""
    while kind is not None:
        name = ".".join(kind) if kind else ""
        variable = _TOKEN_VARIABLES.get(name)
        if variable:
            colour = palette.editor_token(variable, "currentColor")
            return f"color:color-mix(in srgb, {colour} {palette.TOKEN_MIX}, currentColor);"
        kind = kind.parent
    return ""


def _styled(kind: Any, text: str) -> Markup:
    style = token_style(kind)
    return Markup('<span style="{}">{}</span>').format(style, text) if style else escape(text)


def highlighted_lines(lines: list[str], first_lineno: int, current_lineno: int | None) -> Markup:
    """Source lines, highlighted, numbered, the current one marked with ``→`` and a tint."""
    rows = [[_styled(kind, text) for kind, text in runs] for runs in source_tokens.token_lines(lines)]
    out = []
    for line, runs in zip(numbered_lines(lines, first_lineno, current_lineno), rows):
        current = line.current
        out.append(
            Markup('<span class="{cls}" style="{bg}"><span style="{muted}">{n} </span>{marker} {code}</span>\n').format(
                cls="jaxdbg-line jaxdbg-current-line" if current else "jaxdbg-line",
                # the current line's number in the text colour: muted on the tint falls short
                bg=CURRENT_LINE + "display:inline-block;min-width:100%;" if current else "",
                muted="" if current else MUTED,
                n=line.number_text,
                marker="→" if current else " ",
                code=Markup("").join(runs),
            )
        )
    # <pre>: the indentation survives an untrusted notebook, where styles are stripped
    return Markup(
        '<pre class="jaxdbg-code-lines" style="{}overflow-x:auto;margin:2px 0;padding:0;'
        'background:transparent;">{}</pre>'
    ).format(MONO, Markup("").join(out))
