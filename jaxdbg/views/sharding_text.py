"""A sharding layout drawn as a box grid: plain text for ``str``, coloured for rich.

Both come from one list of lines made of segments ``(text, style)``, so the terminal
and the plain rendering can never disagree. Cells show the devices holding the block;
row and column headers show the block's slice (or mesh index); big layouts fold runs
of rows, columns and grids into one marked line with a count.
"""

from __future__ import annotations

import functools
from typing import Any, Iterator, Union

from jaxdbg.engine.values.sharding_layout import Fold, LayoutKind, ShardingLayout, ShardingView, compress_ids, fold
from jaxdbg.views import palette

MAX_ROWS = 16
MAX_COLS = 8
MAX_GRIDS = 4
MAX_LEGEND = 16

# A segment's style: None (plain), a name below, or a shard number (its colour).
Style = Union[None, str, int]
Segment = tuple[str, Style]
Line = list[Segment]


def render_plain(layout: ShardingLayout) -> str:
    return "\n".join("".join(text for text, _ in line).rstrip() for line in build_lines(layout))


def render_rich(layout: ShardingLayout) -> Iterator[Any]:
    from rich.text import Text

    for line in build_lines(layout):
        # "ignore": a line wider than the terminal is never cut, so nothing is lost.
        text = Text(no_wrap=True, overflow="ignore", end="\n")
        for segment, style in line:
            text.append(segment, _rich_style(style))
        yield text


@functools.lru_cache(maxsize=4096)
def _rich_style(style: Style) -> Any:
    from rich.style import Style as RichStyle

    if style is None:
        return None
    if isinstance(style, int):
        r, g, b = palette.shard_terminal_rgb(style)
        return RichStyle(color="black", bgcolor=f"rgb({r},{g},{b})")
    return {
        "head": RichStyle(bold=True),
        "title": RichStyle(bold=True, underline=True),
        "label": RichStyle(dim=True),
        "fold": RichStyle(italic=True, dim=True),
    }[style]


# -- the drawing -----------------------------------------------------------------------


def build_lines(layout: ShardingLayout) -> list[Line]:
    lines: list[Line] = [[(layout.header_text(), "head")]]
    axes = layout.axes_text()
    if axes:
        lines.append([(axes, "label")])
    pages = layout.pages()
    for item in fold(len(pages), MAX_GRIDS):
        if isinstance(item, Fold):
            lines.append(
                [
                    (
                        _fold_note(
                            layout,
                            "grids",
                            layout.page_dims[0] if len(layout.page_dims) == 1 else None,
                            item,
                            pages[item.first : item.last + 1],
                            None,
                            None,
                        ),
                        "fold",
                    )
                ]
            )
            continue
        page = pages[item]
        if layout.page_dims:
            lines.append([(layout.page_title(page), "title")])
        lines.extend(_grid(layout, page))
    lines.extend(_legend(layout))
    return lines


def _span(layout: ShardingLayout, dim: int, fold_: Fold) -> str:
    blocks = layout.intervals[dim]
    if layout.kind is LayoutKind.MESH:
        return f"{layout.dim_names[dim]} {fold_.first}–{fold_.last}"
    return f"{layout.dim_names[dim]} {blocks[fold_.first].start}:{blocks[fold_.last].stop}"


def _fold_note(
    layout: ShardingLayout, what: str, dim: int | None, fold_: Fold, pages: list, rows: range | None, cols: range | None
) -> str:
    rows = rows if rows is not None else range(layout.rows())
    cols = cols if cols is not None else range(layout.cols())
    devices = layout.devices_in(pages, rows, cols)
    where = f"; {_span(layout, dim, fold_)}" if dim is not None else ""
    mark = "⋯" if what == "columns" else "⋮"
    return (
        f"{mark} {fold_.count} {what} folded ({what} {fold_.first}–{fold_.last}{where}; "
        f"devices {compress_ids(devices)})"
    )


def _grid(layout: ShardingLayout, page: tuple[int, ...]) -> list[Line]:
    row_items = fold(layout.rows(), MAX_ROWS)
    col_items = fold(layout.cols(), MAX_COLS)
    rdim, cdim = layout.row_dim, layout.col_dim

    def row_label(item: int | Fold) -> str:
        if isinstance(item, Fold):
            return "⋮"
        return layout.intervals[rdim][item].label if rdim is not None else ""

    def col_label(item: int | Fold) -> str:
        if isinstance(item, Fold):
            return "⋯"
        return layout.intervals[cdim][item].label if cdim is not None else ""

    def cell(r: int | Fold, c: int | Fold) -> tuple[str, Style]:
        if isinstance(r, Fold):
            return (f"×{r.count}", "fold")
        if isinstance(c, Fold):
            return (f"×{c.count}", "fold")
        shard = layout.shard_at(page, r, c)
        return layout.cell_text(shard), shard.number

    cells = [[cell(r, c) for c in col_items] for r in row_items]
    # One width for every column, so a grid reads as a regular lattice.
    width = max([len(col_label(c)) for c in col_items] + [len(text) for row in cells for text, _ in row]) + 2
    widths = [width] * len(col_items)
    label_width = max(len(row_label(r)) for r in row_items)
    indent = " " * (label_width + 1)

    def rule(left: str, mid: str, right: str) -> Line:
        return [(indent + left + mid.join("─" * w for w in widths) + right, None)]

    out: list[Line] = []
    if cdim is not None:
        out.append([(indent + " " + " ".join(col_label(c).center(w) for c, w in zip(col_items, widths)), "label")])
    out.append(rule("┌", "┬", "┐"))
    for i, r in enumerate(row_items):
        line: Line = [(row_label(r).rjust(label_width) + " ", "label"), ("│", None)]
        for (text, style), w in zip(cells[i], widths):
            line.append((text.center(w), style))
            line.append(("│", None))
        out.append(line)  # no rule between rows: the row labels and colours separate them
    out.append(rule("└", "┴", "┘"))
    for r in row_items:
        if isinstance(r, Fold):
            out.append(
                [(indent + _fold_note(layout, "rows", rdim, r, [page], range(r.first, r.last + 1), None), "fold")]
            )
    for c in col_items:
        if isinstance(c, Fold):
            out.append(
                [(indent + _fold_note(layout, "columns", cdim, c, [page], None, range(c.first, c.last + 1)), "fold")]
            )
    return out


def _legend(layout: ShardingLayout) -> list[Line]:
    if layout.kind is LayoutKind.MESH:
        return [[(layout.replication_summary(), "label")]]
    if len(layout.shards) > MAX_LEGEND:
        return [[(layout.replication_summary() + " (too many to list)", "label")]]
    width = max(len(s.slice_text) for s in layout.shards)
    out: list[Line] = [[(layout.replication_summary() + ":", "label")]]
    for shard in layout.shards:
        out.append([(" ", None), ("  ", shard.number), (f" {shard.slice_text.ljust(width)}  {shard.holders()}", None)])
    return out


ShardingView.register_drawing(plain=render_plain, rich=render_rich)
