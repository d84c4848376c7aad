"""A :class:`~jaxdbg.engine.values.sharding_layout.ShardingLayout` read from what a user
has: an array, a ``Sharding`` and a shape, a ``Mesh``, or a device-to-index map.

Only numpy and JAX's public API are used here.
"""

from __future__ import annotations

import bisect
import itertools
from typing import Any, Mapping, Sequence

import numpy as np

from jaxdbg.engine.values.sharding_layout import Interval, LayoutKind, Shard, ShardingLayout, ShardingView

# -- building a layout ---------------------------------------------------------------


def _bounds(
    index: tuple[Any, ...], shape: tuple[int, ...], memo: dict[Any, tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
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


def _slice_text(bounds: tuple[tuple[int, int], ...], shape: tuple[int, ...], blocks: bool = False) -> str:
    """``[0:4, :]``; for a shape-less sharding, block numbers: ``[0, :]``."""
    parts = [":" if (a, b) == (0, n) else (str(a) if blocks else f"{a}:{b}") for (a, b), n in zip(bounds, shape)]
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


def layout_from_indices(
    indices: Mapping[Any, tuple[Any, ...]],
    shape: Sequence[int],
    *,
    title: str,
    sharding_name: str,
    spec: Any = None,
    mesh_axes: Sequence[tuple[str, int]] = (),
    kind: LayoutKind = LayoutKind.ARRAY,
) -> ShardingLayout:
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
        shards.append(
            Shard(
                number=number,
                bounds=bounds,
                slice_text=_mesh_position_text(bounds, mesh_axes)
                if kind is LayoutKind.MESH
                else _slice_text(bounds, shape, blocks=kind is LayoutKind.BLOCKS),
                devices=tuple(sorted(d for d, _ in held)),
                processes=tuple(sorted({p for _, p in held})),
            )
        )

    # Elementary blocks: every shard boundary cuts its dimension.
    cuts = [
        sorted({0, n} | {a for b in ordered for a in (b[d][0], b[d][1]) if 0 <= a <= n}) for d, n in enumerate(shape)
    ]
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
        kind=kind,
        title=title,
        sharding_name=sharding_name,
        shape=shape,
        dim_names=dim_names,
        intervals=tuple(intervals),
        block_shard=block_shard,
        shards=tuple(shards),
        mesh_axes=tuple((str(n), int(s)) for n, s in mesh_axes),
        spec=_spec_text(spec) if spec is not None else None,
        platform=platform,
        device_count=len(devices),
        process_count=len(processes_seen) or 1,
    )


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
        name: str = np.dtype(dtype).name
        return name
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
            dev: tuple(slice(i, i + 1) for i in pos) for pos, dev in np.ndenumerate(devices)
        }
        axes = tuple((str(n), int(s)) for n, s in x.shape.items())
        return layout_from_indices(
            indices, devices.shape, title="Mesh", sharding_name="Mesh", mesh_axes=axes, kind=LayoutKind.MESH
        )
    abstract_mesh = getattr(jax.sharding, "AbstractMesh", None)
    if abstract_mesh is not None and isinstance(x, abstract_mesh):
        raise TypeError("an AbstractMesh has axis sizes but no devices; pass a concrete Mesh")
    if isinstance(x, jax.core.Tracer):
        raise TypeError(
            "this value is being traced (inside jit, vmap, ...), so it has no "
            "concrete sharding yet; use jaxdbg.inspect_sharding(x) there"
        )
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
        raise TypeError(f"expected a jax.Array, a Sharding (with shape=) or a Mesh, not {type(x).__name__}")
    shape = tuple(int(n) for n in shape)
    indices = sharding.devices_indices_map(shape)
    return layout_from_indices(
        indices,
        shape,
        title=_shape_title(shape, dtype),
        sharding_name=type(sharding).__name__,
        spec=getattr(sharding, "spec", None),
        mesh_axes=_mesh_axes_of(sharding),
    )


def _blocks_layout(sharding: Any) -> ShardingLayout:
    """A shape-less NamedSharding: one block per mesh position along each split dimension."""
    spec = getattr(sharding, "spec", None)
    axes = _mesh_axes_of(sharding)
    if spec is None or not axes:
        raise TypeError(f"a {type(sharding).__name__} lays out an array of a given shape; pass shape=(...)")
    sizes = dict(axes)
    shape = []
    for entry in spec:
        names = () if entry is None else (entry if isinstance(entry, (tuple, list)) else (entry,))
        shape.append(int(np.prod([sizes[str(n)] for n in names], dtype=int)))
    indices = sharding.devices_indices_map(tuple(shape))
    return layout_from_indices(
        indices,
        shape,
        title=type(sharding).__name__,
        sharding_name=type(sharding).__name__,
        spec=spec,
        mesh_axes=axes,
        kind=LayoutKind.BLOCKS,
    )


def sharding_view(x: Any, *, shape: Sequence[int] | None = None) -> ShardingView:
    """The layout of ``x`` (a ``jax.Array``, a ``Sharding`` with ``shape=``, or a ``Mesh``)."""
    return ShardingView(layout_of(x, shape=shape))
