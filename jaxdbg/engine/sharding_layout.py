"""How an array (or a mesh) is laid out over devices: one model, drawn by several views.

A :class:`ShardingLayout` is computed once from ``sharding.devices_indices_map(shape)``
(or from a ``Mesh``'s device grid). It knows every shard's slice and the devices (and
processes) that hold it, the elementary blocks each dimension is cut into, and which
dimensions form the grid. :class:`ShardingView` draws it as plain text (``str``), with
rich (``__rich_console__``) and as HTML (``_repr_html_``); the drawing lives in
:mod:`jaxdbg.views.sharding_text` and :mod:`jaxdbg.views.sharding_html`, which register
it with :func:`register_drawing`.

Only numpy and JAX's public API are used here.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import functools
import itertools
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np


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

    number: int                        # position in ShardingLayout.shards; picks the colour
    bounds: tuple[tuple[int, int], ...]  # (start, stop) per dimension
    slice_text: str                    # "[0:4, :]", or "x=0, y=1" for a mesh position
    devices: tuple[int, ...]           # device ids, ascending
    processes: tuple[int, ...]         # process indices of those devices, ascending

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
    title: str                                 # "float32[8,8]", "shape [8,8]", "Mesh"
    sharding_name: str                         # "NamedSharding", "Mesh", ...
    shape: tuple[int, ...]
    dim_names: tuple[str, ...]                 # "dim 0 (x)", or a mesh axis name
    intervals: tuple[tuple[Interval, ...], ...]  # elementary blocks per dimension
    block_shard: dict[tuple[int, ...], int]    # block position -> shard number
    shards: tuple[Shard, ...]
    mesh_axes: tuple[tuple[str, int], ...]     # () when there is no mesh
    spec: str | None                           # "P('x', 'y')" for a NamedSharding
    platform: str
    device_count: int
    process_count: int
    note: str = ""                             # "as compiled": where the layout comes from

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
            return ", ".join(f"{self.dim_names[d]}={self.intervals[d][i].label}"
                             for d, i in chosen.items())
        parts = [self.intervals[d][chosen[d]].label if d in chosen else ":"
                 for d in range(len(self.shape))]
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
        return ",".join(parts[:max_parts - 1]) + f",… ({len(ids)})"
    return ",".join(parts)


# -- building a layout ---------------------------------------------------------------

def _bounds(index: tuple[Any, ...], shape: tuple[int, ...],
            memo: dict[Any, tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """(start, stop) per dimension; ``memo`` saves re-resolving the same slices."""
    out = []
    for dim, size in enumerate(shape):
        s = index[dim] if dim < len(index) else slice(None)
        if isinstance(s, slice):
            key = (dim, s.start, s.stop, s.step)
            bounds = memo.get(key)
            if bounds is None:
                start, stop, _ = s.indices(size)
                bounds = memo[key] = (start, stop)
            out.append(bounds)
        else:  # an integer index selects one element
            out.append((int(s), int(s) + 1))
    return tuple(out)


def _slice_text(bounds: tuple[tuple[int, int], ...], shape: tuple[int, ...],
                blocks: bool = False) -> str:
    """``[0:4, :]``; for a shape-less sharding, block numbers: ``[0, :]``."""
    parts = [":" if (a, b) == (0, n) else (str(a) if blocks else f"{a}:{b}")
             for (a, b), n in zip(bounds, shape)]
    return "[" + ", ".join(parts) + "]"


def _device_id(device: Any) -> int:
    return int(getattr(device, "id", device))


def _process(device: Any) -> int:
    return int(getattr(device, "process_index", 0))


def _spec_axes(spec: Any, ndim: int) -> list[str]:
    """Mesh axis names per array dimension, from a PartitionSpec ('' when unsplit)."""
    names = []
    for d in range(ndim):
        entry = spec[d] if spec is not None and d < len(spec) else None
        if entry is None:
            names.append("")
        elif isinstance(entry, (tuple, list)):
            names.append("×".join(str(e) for e in entry))
        else:
            names.append(str(entry))
    return names


def layout_from_indices(indices: Mapping[Any, tuple[Any, ...]], shape: Sequence[int], *,
                        title: str, sharding_name: str, spec: Any = None,
                        mesh_axes: Sequence[tuple[str, int]] = (),
                        kind: LayoutKind = LayoutKind.ARRAY) -> ShardingLayout:
    """The layout of a device → index map (what ``devices_indices_map`` returns)."""
    shape = tuple(int(n) for n in shape)
    holders: dict[tuple[tuple[int, int], ...], list[tuple[int, int]]] = {}
    memo: dict[Any, tuple[int, int]] = {}
    processes_seen: set[int] = set()
    for device, index in indices.items():
        process = _process(device)
        processes_seen.add(process)
        holders.setdefault(_bounds(tuple(index), shape, memo), []).append((_device_id(device), process))
    ordered = sorted(holders)
    shards = []
    for number, bounds in enumerate(ordered):
        held = holders[bounds]
        shards.append(Shard(
            number=number, bounds=bounds,
            slice_text=_mesh_position_text(bounds, mesh_axes) if kind is LayoutKind.MESH
            else _slice_text(bounds, shape, blocks=kind is LayoutKind.BLOCKS),
            devices=tuple(sorted(d for d, _ in held)),
            processes=tuple(sorted({p for _, p in held}))))

    # Elementary blocks: every shard boundary cuts its dimension.
    cuts = [sorted({0, n} | {a for b in ordered for a in (b[d][0], b[d][1]) if 0 <= a <= n})
            for d, n in enumerate(shape)]
    intervals = []
    for d, n in enumerate(shape):
        points = cuts[d] if n > 0 else [0, 0]
        blocks = []
        for a, b in zip(points, points[1:] or [0]):
            if kind in (LayoutKind.MESH, LayoutKind.BLOCKS):
                label = str(a)
            else:
                label = ":" if (a, b) == (0, n) else f"{a}:{b}"
            blocks.append(Interval(a, b, label))
        intervals.append(tuple(blocks) or (Interval(0, 0, ":"),))

    block_shard: dict[tuple[int, ...], int] = {}
    for shard in shards:
        ranges = []
        for d, (a, b) in enumerate(shard.bounds):
            lo = bisect.bisect_left(cuts[d], a)
            hi = max(bisect.bisect_left(cuts[d], b), lo + 1)
            ranges.append(range(lo, min(hi, len(intervals[d]))))
        for position in itertools.product(*ranges):
            block_shard[position] = shard.number

    axes = _spec_axes(spec, len(shape)) if kind is not LayoutKind.MESH else []
    if kind is LayoutKind.MESH:
        dim_names = tuple(name for name, _ in mesh_axes)
    else:
        dim_names = tuple(f"dim {d}" + (f" ({axes[d]})" if axes[d] else "") for d in range(len(shape)))
    devices = list(indices)
    platform = str(getattr(devices[0], "platform", "")) if devices else ""
    return ShardingLayout(
        kind=kind, title=title, sharding_name=sharding_name, shape=shape, dim_names=dim_names,
        intervals=tuple(intervals), block_shard=block_shard, shards=tuple(shards),
        mesh_axes=tuple((str(n), int(s)) for n, s in mesh_axes),
        spec=_spec_text(spec) if spec is not None else None,
        platform=platform, device_count=len(devices), process_count=len(processes_seen) or 1)


def _mesh_position_text(bounds: tuple[tuple[int, int], ...], mesh_axes: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{name}={a}" for (name, _), (a, _b) in zip(mesh_axes, bounds))


def _spec_text(spec: Any) -> str:
    entries = []
    for entry in spec:
        if entry is None:
            entries.append("None")
        elif isinstance(entry, (tuple, list)):
            entries.append("(" + ", ".join(repr(e) for e in entry) + ("," if len(entry) == 1 else "") + ")")
        else:
            entries.append(repr(entry))
    return "P(" + ", ".join(entries) + ")"


def _shape_title(shape: Sequence[int], dtype: Any = None) -> str:
    dims = ",".join(str(int(n)) for n in shape)
    return f"{_dtype_name(dtype)}[{dims}]" if dtype is not None else f"shape [{dims}]"


def _dtype_name(dtype: Any) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:  # JAX's extended dtypes, such as PRNG keys (key<fry>)
        return str(dtype)


def _mesh_axes_of(obj: Any) -> tuple[tuple[str, int], ...]:
    mesh = getattr(obj, "mesh", None)
    shape = getattr(mesh, "shape", None)
    if not shape or not hasattr(shape, "items"):
        return ()
    try:
        return tuple((str(n), int(s)) for n, s in shape.items())
    except Exception:  # an abstract mesh without sizes
        return ()


def layout_of(x: Any, *, shape: Sequence[int] | None = None, dtype: Any = None) -> ShardingLayout:
    """The layout of a ``jax.Array``, a ``Sharding`` (with ``shape=``) or a ``Mesh``.

    ``dtype`` only names the element type in the heading of a Sharding's layout.
    """
    import jax

    if isinstance(x, jax.sharding.Mesh):
        devices = np.asarray(x.devices)
        indices: Mapping[Any, tuple[slice, ...]] = {
            dev: tuple(slice(i, i + 1) for i in pos) for pos, dev in np.ndenumerate(devices)}
        axes = tuple((str(n), int(s)) for n, s in x.shape.items())
        return layout_from_indices(indices, devices.shape, title="Mesh", sharding_name="Mesh",
                                   mesh_axes=axes, kind=LayoutKind.MESH)
    abstract_mesh = getattr(jax.sharding, "AbstractMesh", None)
    if abstract_mesh is not None and isinstance(x, abstract_mesh):
        raise TypeError("an AbstractMesh has axis sizes but no devices; pass a concrete Mesh")
    if isinstance(x, jax.core.Tracer):
        raise TypeError("this value is being traced (inside jit, vmap, ...), so it has no "
                        "concrete sharding yet; use jaxdbg.inspect_sharding(x) there")
    if isinstance(x, jax.sharding.Sharding):
        if shape is None:
            return _blocks_layout(x)
        sharding = x
    elif isinstance(x, jax.Array):
        sharding = x.sharding
        dtype = x.dtype
        if shape is None:
            shape = x.shape
    else:
        raise TypeError(f"expected a jax.Array, a Sharding (with shape=) or a Mesh, "
                        f"not {type(x).__name__}")
    shape = tuple(int(n) for n in shape)
    indices = sharding.devices_indices_map(shape)
    return layout_from_indices(indices, shape, title=_shape_title(shape, dtype),
                               sharding_name=type(sharding).__name__,
                               spec=getattr(sharding, "spec", None),
                               mesh_axes=_mesh_axes_of(sharding))


def _blocks_layout(sharding: Any) -> ShardingLayout:
    """A shape-less NamedSharding: one block per mesh position along each split dimension."""
    spec = getattr(sharding, "spec", None)
    axes = _mesh_axes_of(sharding)
    if spec is None or not axes:
        raise TypeError(f"a {type(sharding).__name__} lays out an array of a given shape; "
                        "pass shape=(...)")
    sizes = dict(axes)
    shape = []
    for entry in spec:
        names = () if entry is None else (entry if isinstance(entry, (tuple, list)) else (entry,))
        shape.append(int(np.prod([sizes[str(n)] for n in names], dtype=int)))
    indices = sharding.devices_indices_map(tuple(shape))
    return layout_from_indices(indices, shape, title=type(sharding).__name__,
                               sharding_name=type(sharding).__name__, spec=spec,
                               mesh_axes=axes, kind=LayoutKind.BLOCKS)


# How a layout is drawn. The views register their drawings here
# (jaxdbg.views.sharding_text: plain and rich; jaxdbg.views.sharding_html: html), so
# the model never imports its views; ``import jaxdbg`` imports both.
_drawings: dict[str, Callable[[ShardingLayout], Any]] = {}


def register_drawing(*, plain: Callable[[ShardingLayout], str] | None = None,
                     rich: Callable[[ShardingLayout], Iterator[Any]] | None = None,
                     html: Callable[[ShardingLayout], str] | None = None) -> None:
    """Set how :class:`ShardingView` draws a layout as plain text, with rich, or as HTML."""
    for form, draw in (("plain", plain), ("rich", rich), ("html", html)):
        if draw is not None:
            _drawings[form] = draw


def _draw(form: str, layout: ShardingLayout) -> Any:
    draw = _drawings.get(form)
    if draw is None:
        raise LookupError(f"no {form} drawing of sharding layouts is registered "
                          "(import jaxdbg registers them)")
    return draw(layout)


class ShardingView:
    """A displayable sharding layout: HTML in a notebook, rich in a terminal, text in ``str``."""

    def __init__(self, layout: ShardingLayout) -> None:
        self.layout = layout
        self._text: str | None = None
        self._html: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = _draw("plain", self.layout)
        return self._text

    def __repr__(self) -> str:
        return f"<ShardingView {self.layout.header_text()}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # IPython's text/plain
        p.text(str(self))

    def _repr_html_(self) -> str:
        if self._html is None:
            self._html = str(_draw("html", self.layout))
        return self._html

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        yield from _draw("rich", self.layout)


def sharding_view(x: Any, *, shape: Sequence[int] | None = None) -> ShardingView:
    """The layout of ``x`` (a ``jax.Array``, a ``Sharding`` with ``shape=``, or a ``Mesh``)."""
    return ShardingView(layout_of(x, shape=shape))
