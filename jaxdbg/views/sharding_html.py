"""A sharding layout as HTML for notebooks.

Colours come from the notebook theme's CSS variables (JupyterLab's ``--jp-*``, with
plain fallbacks elsewhere) plus one translucent hue per shard, so the same output
reads on light and dark themes: the hue tints whatever background the theme has and
the text keeps the theme's own colour. The HTML is built from ``markupsafe.Markup``
fragments: ``Markup.format`` escapes its arguments and ``Markup("").join`` escapes only
the parts that are not Markup already, so every piece of text from the layout is
escaped exactly once, and whether it was is carried by its type.
"""

from __future__ import annotations

from markupsafe import Markup

from jaxdbg.engine.values.sharding_layout import (
    Fold,
    LayoutKind,
    Shard,
    ShardingLayout,
    ShardingView,
    compress_ids,
    fold,
)
from jaxdbg.views import palette

MAX_ROWS = 32
MAX_COLS = 32
MAX_GRIDS = 16
MAX_LEGEND = 32

# Colours from the palette: the hover outline is its accent (written without spaces, as
# the rest), borders its neutral grey.
_CSS = Markup(
    """<style>
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
.jaxdbg-sharding .jxs-cell{border:1px solid var(--jp-border-color1,{border});
 border-radius:2px;min-width:2.6em;cursor:default}
.jaxdbg-sharding .jxs-cell:hover{outline:2px solid {accent};outline-offset:-1px}
.jaxdbg-sharding .jxs-fold{border:1px dashed var(--jp-border-color1,{border});
 font-style:italic;color:var(--jp-content-font-color2,inherit)}
.jaxdbg-sharding .jxs-legend{list-style:none;padding:0;margin:4px 0 0 0;columns:2 22em;max-width:52em}
.jaxdbg-sharding .jxs-legend li{margin:1px 0;break-inside:avoid}
.jaxdbg-sharding .jxs-sw{display:inline-block;width:1.6em;height:.95em;vertical-align:-.1em;
 margin-right:.5em;border:1px solid var(--jp-border-color1,{border});border-radius:2px}
</style>""".replace("{accent}", palette.themed("accent").replace(" ", "")).replace("{border}", palette.NEUTRAL_BORDER)
)


tint = palette.shard_tint


def render_html(layout: ShardingLayout) -> Markup:
    parts: list[Markup] = [_CSS, Markup('<div class="jaxdbg-sharding">')]
    parts.append(Markup('<div class="jxs-head">{}</div>').format(layout.header_text()))
    axes = layout.axes_text()
    if axes:
        parts.append(Markup('<div class="jxs-axes">{}</div>').format(axes))
    parts.append(Markup('<div class="jxs-pages">'))
    pages = layout.pages()
    for item in fold(len(pages), MAX_GRIDS):
        if isinstance(item, Fold):
            devices = layout.devices_in(pages[item.first : item.last + 1], range(layout.rows()), range(layout.cols()))
            note = (
                f"⋯ {item.count} more grids ({layout.page_title(pages[item.first])} to "
                f"{layout.page_title(pages[item.last])}; devices {compress_ids(devices)})"
            )
            parts.append(Markup('<div class="jxs-note">{}</div>').format(note))
            continue
        _page(layout, pages[item], parts)
    parts.append(Markup("</div>"))
    _legend(layout, parts)
    parts.append(Markup("</div>"))
    return Markup("").join(parts)


def _page(layout: ShardingLayout, page: tuple[int, ...], parts: list[Markup]) -> None:
    rdim, cdim = layout.row_dim, layout.col_dim
    row_items = fold(layout.rows(), MAX_ROWS)
    col_items = fold(layout.cols(), MAX_COLS)
    parts.append(Markup('<figure class="jxs-page">'))
    if layout.page_dims:
        parts.append(Markup("<figcaption>{}</figcaption>").format(layout.page_title(page)))
    label_col = "auto " if rdim is not None else ""
    parts.append(
        Markup('<div class="jxs-grid" style="grid-template-columns:{}repeat({},minmax(2.2em,max-content))">').format(
            label_col, len(col_items)
        )
    )
    if cdim is not None:
        if rdim is not None:
            parts.append(Markup("<div></div>"))
        for c in col_items:
            if isinstance(c, Fold):
                parts.append(
                    Markup('<div class="jxs-lab" title="{}">⋯</div>').format(_fold_title(layout, "columns", cdim, c))
                )
            else:
                parts.append(Markup('<div class="jxs-lab">{}</div>').format(layout.intervals[cdim][c].label))
    for r in row_items:
        if rdim is not None:
            label = "⋮" if isinstance(r, Fold) else layout.intervals[rdim][r].label
            parts.append(Markup('<div class="jxs-lab">{}</div>').format(label))
        for c in col_items:
            if isinstance(r, Fold) or isinstance(c, Fold):
                rows = range(r.first, r.last + 1) if isinstance(r, Fold) else range(r, r + 1)
                cols = range(c.first, c.last + 1) if isinstance(c, Fold) else range(c, c + 1)
                count = len(rows) if isinstance(r, Fold) else len(cols)  # what is folded
                what = "rows" if isinstance(r, Fold) else "columns"
                title = f"{count} {what} folded; devices {compress_ids(layout.devices_in([page], rows, cols))}"
                parts.append(Markup('<div class="jxs-fold" title="{}">×{}</div>').format(title, count))
                continue
            parts.append(_cell(layout, layout.shard_at(page, r, c)))
    parts.append(Markup("</div></figure>"))


_CELL = Markup('<div class="jxs-cell" style="background:%s" title="%s">%s</div>')


def _cell(layout: ShardingLayout, shard: Shard) -> Markup:
    # ``%`` escapes its arguments as ``format`` does, at under half the cost: a layout
    # draws up to MAX_ROWS * MAX_COLS cells per grid.
    return _CELL % (tint(shard.number), layout.shard_details(shard), layout.cell_text(shard))


def _fold_title(layout: ShardingLayout, what: str, dim: int, item: Fold) -> str:
    blocks = layout.intervals[dim]
    return f"{item.count} {what} folded: {blocks[item.first].label} to {blocks[item.last].label}"


def _legend(layout: ShardingLayout, parts: list[Markup]) -> None:
    summary = layout.replication_summary()
    if layout.kind is LayoutKind.MESH or len(layout.shards) > MAX_LEGEND:
        hint = "" if layout.kind is LayoutKind.MESH else " · hover a cell for its slice and devices"
        parts.append(Markup('<div class="jxs-sum">{}</div>').format(summary + hint))
        return
    parts.append(Markup('<div class="jxs-sum">{}</div><ul class="jxs-legend">').format(summary))
    for shard in layout.shards:
        parts.append(
            Markup('<li><span class="jxs-sw" style="background:{}"></span>{} {}</li>').format(
                tint(shard.number), shard.slice_text, shard.holders()
            )
        )
    parts.append(Markup("</ul>"))


ShardingView.register_drawing(html=render_html)
