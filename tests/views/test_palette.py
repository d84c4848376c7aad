"""One palette: the panel's stylesheet and every Python view take their colours from
jaxdbg.views.palette."""

from __future__ import annotations

import re
from pathlib import Path

from jaxdbg.views import palette, sharding_html, theme

ROOT = Path(__file__).resolve().parents[2]
PANEL_CSS = ROOT / "jaxdbg_widgets" / "static" / "panel.css"


def _declared(css: str) -> dict[str, str]:
    return dict(re.findall(r"(--jaxdbg-[\w-]+):\s*(var\(--jp-[^;]+\));", css))


def test_panel_css_declares_the_palette():
    declared = _declared(PANEL_CSS.read_text(encoding="utf-8"))
    assert declared == palette.panel_variables()


def test_panel_css_token_colours_are_the_palette_editor_tokens():
    css = PANEL_CSS.read_text(encoding="utf-8")
    declared = dict(re.findall(r"var\(--jp-mirror-editor-([\w-]+)-color, ([^)]+)\)", css))
    assert declared == palette.EDITOR_TOKENS
    assert f"var(--jaxdbg-fg)) {palette.TOKEN_MIX}, var(--jaxdbg-fg))" in css
    assert set(theme._TOKEN_VARIABLES.values()) <= set(palette.EDITOR_TOKENS)


def test_the_python_views_use_the_palette_colours():
    assert palette.LIGHT.accent in theme.CURRENT_LINE and palette.LIGHT.error in theme.ERROR
    assert palette.LIGHT.accent in str(sharding_html._CSS)


def test_no_python_module_writes_a_colour_of_its_own():
    literal = re.compile(r"#(?:[0-9a-fA-F]{3}){1,2}\b|(?:rgba?|hsla?)\(\d")
    sources = [p for package in ("jaxdbg", "jaxdbg_widgets") for p in (ROOT / package).rglob("*.py")]
    own = [
        str(p.relative_to(ROOT))
        for p in sources
        if p.name != "palette.py" and literal.search(p.read_text(encoding="utf-8"))
    ]
    assert not own, f"colours outside jaxdbg.views.palette: {own}"


def test_colab_colours_come_from_the_palette():
    from jaxdbg.frontends import colab_view

    for name in palette.COLAB_VARIABLES:
        assert palette.colab(name) in colab_view._CSS


def test_shard_colours_are_stable_and_spread():
    assert palette.shard_tint(0) == "hsla(200,78%,55%,0.38)"
    hues = {round(palette.shard_hue(n)) for n in range(16)}
    assert len(hues) == 16
    assert all(0 <= c <= 255 for c in palette.shard_terminal_rgb(3))
