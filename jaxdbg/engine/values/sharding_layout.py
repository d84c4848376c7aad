"""How an array (or a mesh) is laid out over devices: one model, drawn by several views.

A :class:`ShardingLayout` is computed once from ``sharding.devices_indices_map(shape)``
(or from a ``Mesh``'s device grid). It knows every shard's slice and the devices (and
processes) that hold it, the elementary blocks each dimension is cut into, and which
dimensions form the grid. :class:`ShardingView` draws it as plain text (``str``), with
rich (``__rich_console__``) and as HTML (``_repr_html_``); the drawing lives in
:mod:`jaxdbg.views.sharding_text` and :mod:`jaxdbg.views.sharding_html`, which register
it (:mod:`drawable`). :mod:`layout_reading` reads a layout from an array, a sharding or
a mesh.

Only numpy and JAX's public API are used here.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
from typing import Any, Sequence

from jaxdbg.engine.values.drawable import Drawable


class LayoutKind(str, enum.Enum):
    """What a layout draws: an array's shards, a mesh's device grid, or the blocks of a
    sharding known without an array shape."""

    ARRAY = "array"
    MESH = "mesh"
    BLOCKS = "blocks"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Interval:
    """One elementary block along a dimension: ``start:stop``, labelled for display."""

    start: int
    stop: int
    label: str


@dataclasses.dataclass(frozen=True)
class Shard:
    """One distinct slice of the array and every device that holds a copy of it."""

    number: int  # position in ShardingLayout.shards; picks the colour
    bounds: tuple[tuple[int, int], ...]  # (start, stop) per dimension
    slice_text: str  # "[0:4, :]", or "x=0, y=1" for a mesh position
    devices: tuple[int, ...]  # device ids, ascending
    processes: tuple[int, ...]  # process indices of those devices, ascending

    @property
    def replicas(self) -> int:
        return len(self.devices)

    def holders(self) -> str:
        """``device 3`` or ``replicated ×4: 0,2,4,6``."""
        if len(self.devices) == 1:
            return f"device {self.devices[0]}"
        return f"replicated ×{len(self.devices)}: {compress_ids(self.devices)}"


@dataclasses.dataclass(frozen=True)
class Fold:
    """A run of rows, columns or grids left out of the drawing: ``first`` .. ``last``."""

    first: int
    last: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclasses.dataclass(frozen=True)
class ShardingLayout:
    """Everything the views draw. Build it with :func:`layout_of`."""

    kind: LayoutKind
    title: str  # "float32[8,8]", "shape [8,8]", "Mesh"
    sharding_name: str  # "NamedSharding", "Mesh", ...
    shape: tuple[int, ...]
    dim_names: tuple[str, ...]  # "dim 0 (x)", or a mesh axis name
    intervals: tuple[tuple[Interval, ...], ...]  # elementary blocks per dimension
    block_shard: dict[tuple[int, ...], int]  # block position -> shard number
    shards: tuple[Shard, ...]
    mesh_axes: tuple[tuple[str, int], ...]  # () when there is no mesh
    spec: str | None  # "P('x', 'y')" for a NamedSharding
    platform: str
    device_count: int
    process_count: int
    note: str = ""  # "as compiled": where the layout comes from

    # -- which dimensions make the grid ---------------------------------------
    @functools.cached_property
    def split_dims(self) -> tuple[int, ...]:
        """Dimensions cut into more than one block."""
        return tuple(d for d, iv in enumerate(self.intervals) if len(iv) > 1)

    @functools.cached_property
    def row_dim(self) -> int | None:
        return self._grid_dims()[0]

    @functools.cached_property
    def col_dim(self) -> int | None:
        return self._grid_dims()[1]

    @functools.cached_property
    def page_dims(self) -> tuple[int, ...]:
        """Leading split dimensions: one grid per combination of their blocks."""
        split = self.split_dims
        return split[:-2] if len(split) > 2 else ()

    def _grid_dims(self) -> tuple[int | None, int | None]:
        split = self.split_dims
        if len(split) >= 2:
            return split[-2], split[-1]
        if len(split) == 1:
            d = split[0]
            # A split last dimension (or a 1-D array) reads as a row of columns.
            return (None, d) if d == len(self.shape) - 1 else (d, None)
        return None, None

    def pages(self) -> list[tuple[int, ...]]:
        """Block positions of the page dimensions, one tuple per grid."""
        return list(itertools.product(*(range(len(self.intervals[d])) for d in self.page_dims)))

    def page_title(self, page: tuple[int, ...]) -> str:
        chosen = dict(zip(self.page_dims, page))
        if self.kind is LayoutKind.MESH:
            return ", ".join(f"{self.dim_names[d]}={self.intervals[d][i].label}" for d, i in chosen.items())
        parts = [self.intervals[d][chosen[d]].label if d in chosen else ":" for d in range(len(self.shape))]
        return "[" + ", ".join(parts) + "]"

    def rows(self) -> int:
        return 1 if self.row_dim is None else len(self.intervals[self.row_dim])

    def cols(self) -> int:
        return 1 if self.col_dim is None else len(self.intervals[self.col_dim])

    def shard_at(self, page: tuple[int, ...], row: int, col: int) -> Shard:
        position = [0] * len(self.shape)
        for d, i in zip(self.page_dims, page):
            position[d] = i
        rdim, cdim = self.row_dim, self.col_dim
        if rdim is not None:
            position[rdim] = row
        if cdim is not None:
            position[cdim] = col
        return self.shards[self.block_shard[tuple(position)]]

    def devices_in(self, pages: Sequence[tuple[int, ...]], rows: range, cols: range) -> list[int]:
        """All device ids in a region of the drawing (for what a fold hides)."""
        ids: set[int] = set()
        for page in pages:
            for r in rows:
                for c in cols:
                    ids.update(self.shard_at(page, r, c).devices)
        return sorted(ids)

    def axes_text(self) -> str:
        """``rows: dim 0 (x) · columns: dim 1 (y)`` (empty when there is one cell)."""
        parts = []
        if self.page_dims:
            parts.append("grids: " + ", ".join(self.dim_names[d] for d in self.page_dims))
        if self.row_dim is not None:
            parts.append(f"rows: {self.dim_names[self.row_dim]}")
        if self.col_dim is not None:
            parts.append(f"columns: {self.dim_names[self.col_dim]}")
        return " · ".join(parts)

    def header_text(self) -> str:
        """One line: what is laid out, over which mesh, with which spec."""
        axes = " × ".join(f"{n}={s}" for n, s in self.mesh_axes)
        if self.kind is LayoutKind.MESH:
            parts = [f"Mesh {axes}"]
        elif self.kind is LayoutKind.BLOCKS:
            parts = [self.title]
            if axes:
                parts.append(f"mesh {axes}")
        else:
            parts = [self.title, self.sharding_name]
            if axes:
                parts.append(f"mesh {axes}")
        if self.spec:
            parts.append(self.spec)
        parts.append(f"{self.device_count} {self.platform} device{'s' if self.device_count != 1 else ''}")
        if self.process_count > 1:
            parts.append(f"{self.process_count} processes")
        if self.note:
            parts.append(self.note)
        return " · ".join(parts)

    def cell_text(self, shard: Shard) -> str:
        """What a grid cell shows: its devices (and processes when there are several)."""
        text = compress_ids(shard.devices)
        if self.process_count > 1:
            text += f" p{compress_ids(shard.processes)}"
        return text

    def shard_details(self, shard: Shard) -> str:
        """Everything about one shard, for a hover or a legend line."""
        if self.kind is LayoutKind.MESH:
            lines = [shard.slice_text, f"device {compress_ids(shard.devices)}"]
        elif self.kind is LayoutKind.BLOCKS:
            lines = [f"block {shard.slice_text}", shard.holders()]
        else:
            shape = tuple(stop - start for start, stop in shard.bounds)
            lines = [f"{shard.slice_text}  shape {list(shape)}", shard.holders()]
        if self.process_count > 1:
            lines.append(f"process {compress_ids(shard.processes)}")
        return "\n".join(lines)

    def replication_summary(self) -> str:
        """``8 shards, one device each`` / ``2 shards, replicated ×4``."""
        n = len(self.shards)
        counts = sorted({s.replicas for s in self.shards})
        if counts == [1]:
            each = "one device each" if n > 1 else "on one device"
        else:
            each = "replicated ×" + "/".join(map(str, counts))
        noun = "position" if self.kind is LayoutKind.MESH else "shard"
        return f"{n} {noun}{'s' if n != 1 else ''}, {each}"


def fold(count: int, limit: int) -> list[int | Fold]:
    """Indices to draw out of ``count``: all of them, or the first few, a Fold and the last."""
    if count <= limit:
        return list(range(count))
    head = max(limit - 2, 1)
    return [*range(head), Fold(head, count - 2), count - 1]


def compress_ids(ids: Sequence[int], max_parts: int = 4) -> str:
    """``0–63``, ``0,2,4,6``, ``0–3,8–11``; long lists end with ``… (N)``."""
    ids = sorted(ids)
    if not ids:
        return ""
    runs: list[tuple[int, int]] = []
    start = prev = ids[0]
    for i in ids[1:]:
        if i == prev + 1:
            prev = i
            continue
        runs.append((start, prev))
        start = prev = i
    runs.append((start, prev))
    parts = [str(a) if a == b else (f"{a},{b}" if b == a + 1 else f"{a}–{b}") for a, b in runs]
    if len(parts) > max_parts:
        return ",".join(parts[: max_parts - 1]) + f",… ({len(ids)})"
    return ",".join(parts)


class ShardingView(Drawable):
    """A displayable sharding layout: HTML in a notebook, rich in a terminal, text in ``str``.
    Drawn by :mod:`jaxdbg.views.sharding_text` (plain, rich) and
    :mod:`jaxdbg.views.sharding_html` (html), registered there."""

    def __init__(self, layout: ShardingLayout) -> None:
        self.layout = layout
        self._text: str | None = None
        self._html: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = str(self.drawn("plain"))
        return self._text

    def drawn_model(self) -> ShardingLayout:
        return self.layout

    def __repr__(self) -> str:
        return f"<ShardingView {self.layout.header_text()}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's text/plain
        p.text(str(self))

    def _repr_html_(self) -> str:
        if self._html is None:
            self._html = str(self.drawn("html"))
        return self._html
