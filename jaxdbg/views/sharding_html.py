"""A sharding layout as HTML for notebooks.

Colours come from the notebook theme's CSS variables (JupyterLab's ``--jp-*``, with
plain fallbacks elsewhere) plus one translucent hue per shard, so the same output
reads on light and dark themes: the hue tints whatever background the theme has and
the text keeps the theme's own colour. Every piece of text goes through markupsafe.
Hovering a cell shows its slice, shape, devices and processes. Fragments are joined as
plain strings, each dynamic piece escaped by markupsafe on its way in (joining Markup
objects would escape the tags a second time, and per-cell ``Markup.format`` is slow on
512-device layouts).
"""

from __future__ import annotations

from markupsafe import Markup, escape

from jaxdbg.engine.sharding_layout import (Fold, ShardingLayout, Shard, compress_ids, fold,
                                           register_drawing)
from jaxdbg.views.sharding_text import hue

MAX_ROWS = 32
MAX_COLS = 32
MAX_GRIDS = 16
MAX_LEGEND = 32

_CSS = Markup("""<style>
.jaxdbg-sharding{font-family:var(--jp-code-font-family,ui-monospace,SFMono-Regular,Menlo,monospace);
 font-size:var(--jp-code-font-size,12px);color:var(--jp-content-font-color1,inherit);line-height:1.35;
 margin:2px 0}
.jaxdbg-sharding .jxs-head{font-weight:600;margin-bottom:2px}
.jaxdbg-sharding .jxs-axes,.jaxdbg-sharding .jxs-note,.jaxdbg-sharding .jxs-sum{
 color:var(--jp-content-font-color2,inherit)}
.jaxdbg-sharding .jxs-pages{display:flex;flex-wrap:wrap;gap:10px 18px;align-items:flex-start;margin:4px 0}
.jaxdbg-sharding .jxs-page{margin:0}
.jaxdbg-sharding .jxs-page figcaption{font-weight:600;margin-bottom:2px}
.jaxdbg-sharding .jxs-grid{display:grid;gap:2px;align-items:stretch}
.jaxdbg-sharding .jxs-grid>div{padding:2px 6px;text-align:center;white-space:nowrap}
.jaxdbg-sharding .jxs-lab{color:var(--jp-content-font-color2,inherit);font-size:.92em}
.jaxdbg-sharding .jxs-cell{border:1px solid var(--jp-border-color1,rgba(128,128,128,.55));
 border-radius:2px;min-width:2.6em;cursor:default}
.jaxdbg-sharding .jxs-cell:hover{outline:2px solid var(--jp-brand-color1,#1976d2);outline-offset:-1px}
.jaxdbg-sharding .jxs-fold{border:1px dashed var(--jp-border-color1,rgba(128,128,128,.55));
 font-style:italic;color:var(--jp-content-font-color2,inherit)}
.jaxdbg-sharding .jxs-legend{list-style:none;padding:0;margin:4px 0 0 0;columns:2 22em;max-width:52em}
.jaxdbg-sharding .jxs-legend li{margin:1px 0;break-inside:avoid}
.jaxdbg-sharding .jxs-sw{display:inline-block;width:1.6em;height:.95em;vertical-align:-.1em;
 margin-right:.5em;border:1px solid var(--jp-border-color1,rgba(128,128,128,.55));border-radius:2px}
</style>""")


def tint(number: int) -> str:
    """A translucent hue: pastel over a light theme, deep over a dark one."""
    return f"hsla({hue(number):.0f},78%,55%,0.38)"


def _e(text: object) -> str:
    """Escaped with markupsafe, as a plain str so that pieces join without re-escaping."""
    return str(escape(text))


def render_html(layout: ShardingLayout) -> str:
    parts: list[str] = [str(_CSS), '<div class="jaxdbg-sharding">']
    parts.append(f'<div class="jxs-head">{_e(layout.header_text())}</div>')
    axes = layout.axes_text()
    if axes:
        parts.append(f'<div class="jxs-axes">{_e(axes)}</div>')
    parts.append('<div class="jxs-pages">')
    pages = layout.pages()
    for item in fold(len(pages), MAX_GRIDS):
        if isinstance(item, Fold):
            devices = layout.devices_in(pages[item.first:item.last + 1], range(layout.rows()),
                                        range(layout.cols()))
            note = (f"⋯ {item.count} more grids ({layout.page_title(pages[item.first])} to "
                    f"{layout.page_title(pages[item.last])}; devices {compress_ids(devices)})")
            parts.append(f'<div class="jxs-note">{_e(note)}</div>')
            continue
        _page(layout, pages[item], parts)
    parts.append("</div>")
    _legend(layout, parts)
    parts.append("</div>")
    return "".join(parts)


def _page(layout: ShardingLayout, page: tuple[int, ...], parts: list[str]) -> None:
    rdim, cdim = layout.row_dim, layout.col_dim
    row_items = fold(layout.rows(), MAX_ROWS)
    col_items = fold(layout.cols(), MAX_COLS)
    parts.append('<figure class="jxs-page">')
    if layout.page_dims:
        parts.append(f"<figcaption>{_e(layout.page_title(page))}</figcaption>")
    label_col = "auto " if rdim is not None else ""
    parts.append(f'<div class="jxs-grid" style="grid-template-columns:{label_col}'
                 f'repeat({len(col_items)},minmax(2.2em,max-content))">')
    if cdim is not None:
        if rdim is not None:
            parts.append("<div></div>")
        for c in col_items:
            if isinstance(c, Fold):
                parts.append(f'<div class="jxs-lab" title="{_e(_fold_title(layout, "columns", cdim, c))}">⋯</div>')
            else:
                parts.append(f'<div class="jxs-lab">{_e(layout.intervals[cdim][c].label)}</div>')
    for r in row_items:
        if rdim is not None:
            label = "⋮" if isinstance(r, Fold) else layout.intervals[rdim][r].label
            parts.append(f'<div class="jxs-lab">{_e(label)}</div>')
        for c in col_items:
            if isinstance(r, Fold) or isinstance(c, Fold):
                rows = range(r.first, r.last + 1) if isinstance(r, Fold) else range(r, r + 1)
                cols = range(c.first, c.last + 1) if isinstance(c, Fold) else range(c, c + 1)
                count = r.count if isinstance(r, Fold) else c.count
                what = "rows" if isinstance(r, Fold) else "columns"
                title = f"{count} {what} folded; devices {compress_ids(layout.devices_in([page], rows, cols))}"
                parts.append(f'<div class="jxs-fold" title="{_e(title)}">×{count}</div>')
                continue
            parts.append(_cell(layout, layout.shard_at(page, r, c)))
    parts.append("</div></figure>")


def _cell(layout: ShardingLayout, shard: Shard) -> str:
    return (f'<div class="jxs-cell" style="background:{tint(shard.number)}" '
            f'title="{_e(layout.shard_details(shard))}">{_e(layout.cell_text(shard))}</div>')


def _fold_title(layout: ShardingLayout, what: str, dim: int, item: Fold) -> str:
    blocks = layout.intervals[dim]
    return f"{item.count} {what} folded: {blocks[item.first].label} to {blocks[item.last].label}"


def _legend(layout: ShardingLayout, parts: list[str]) -> None:
    summary = layout.replication_summary()
    if layout.kind == "mesh" or len(layout.shards) > MAX_LEGEND:
        hint = "" if layout.kind == "mesh" else " · hover a cell for its slice and devices"
        parts.append(f'<div class="jxs-sum">{_e(summary + hint)}</div>')
        return
    parts.append(f'<div class="jxs-sum">{_e(summary)}</div><ul class="jxs-legend">')
    for shard in layout.shards:
        parts.append(f'<li><span class="jxs-sw" style="background:{tint(shard.number)}"></span>'
                     f'{_e(shard.slice_text)} {_e(shard.holders())}</li>')
    parts.append("</ul>")


register_drawing(html=render_html)
