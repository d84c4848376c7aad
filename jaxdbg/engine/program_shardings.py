"""The sharding a value has in the program, and labels for shardings.

Inside a sharded ``jit`` the host callback receives values gathered onto one
device, so their runtime sharding says ``cpu:0``. What the user wants to see is
how the program lays the value out. JAX knows that at trace time for meshes
with explicit axes (``jax.typeof(x).sharding``: spec and mesh); with automatic
axes it knows the mesh, and the compiler picks the layout. Under ``pmap`` and
``shard_map`` (manual axes) a value is one device's shard, which the stop's
device label names instead.

Only public JAX names are used; anything missing on an older JAX reads as
"unknown" rather than failing.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from typing import Any

import jax

from jaxdbg.runtime import jax_routes


@dataclasses.dataclass(frozen=True)
class ProgramSharding:
    """How the program lays out one traced value: a spec (None when the compiler
    chooses it, on automatic axes) over a mesh of named axes."""

    spec: str | None
    mesh: str  # "x=8" or "x=2, y=4"
    sharding: Any  # the NamedSharding over an abstract mesh, for replication

    def label(self) -> str:
        layout = self.spec if self.spec is not None else "auto"
        return f"{layout} on mesh {self.mesh}"


def mesh_label(mesh: Any) -> str | None:
    """``x=8`` / ``x=2, y=4`` for a (possibly abstract) mesh; None when empty or unknown."""
    try:
        shape = dict(mesh.shape)
    except Exception:
        return None
    return ", ".join(f"{name}={size}" for name, size in shape.items()) or None


def _axis_kinds(mesh: Any) -> set[str]:
    try:
        return {str(getattr(t, "name", t)).lower() for t in mesh.axis_types}
    except Exception:
        return set()


def of_tracer(value: Any) -> ProgramSharding | None:
    """The program's sharding of a traced value, or None (not a tracer, no mesh, a
    manual axis such as under pmap / shard_map, or a JAX that does not say)."""
    if not isinstance(value, jax.core.Tracer):
        return None
    typeof = getattr(jax, "typeof", None)
    try:
        aval: Any = typeof(value) if typeof is not None else value.aval
        sharding = aval.sharding
        mesh = sharding.mesh
    except Exception:
        return None
    label = mesh_label(mesh)
    kinds = _axis_kinds(mesh)
    if label is None or "manual" in kinds:
        return None
    spec = spec_text(sharding.spec) if "explicit" in kinds else None
    return ProgramSharding(spec, label, sharding)


def spec_text(spec: Any) -> str:
    """``P('x',)``: a PartitionSpec as JAX >= 0.8 writes it (older JAX spells the name out)."""
    text = str(spec)
    return "P(" + text[len("PartitionSpec(") :] if text.startswith("PartitionSpec(") else text


def replicated_for_host(value: Any, where: ProgramSharding) -> Any:
    """``value`` replicated over its mesh before it goes to the host callback.

    A callback runs on one device; from a sharded layout XLA then warns about an
    "Involuntary full rematerialization" (plain ``jax.debug.callback`` does the
    same). Asking for the replicated layout first is an ordinary all-gather and
    keeps that warning out of the user's output. Returns ``value`` unchanged when
    this JAX cannot express it.
    """
    try:
        from jax.sharding import NamedSharding, PartitionSpec

        target = NamedSharding(where.sharding.mesh, PartitionSpec())
        if where.spec is not None and hasattr(jax.sharding, "reshard"):
            return jax.sharding.reshard(_barrier(value), target)  # explicit axes
        # On automatic axes the barrier keeps the replicated copy from steering the
        # compiler's choice for the value itself (which 'sharding' draws as compiled).
        return jax.lax.with_sharding_constraint(_barrier(value), target)
    except Exception:
        return value


def _barrier(value: Any) -> Any:
    try:
        return jax.lax.optimization_barrier(value)
    except Exception:  # a transform without a rule for it: the copy as before
        return value


def for_host(value: Any) -> Any:
    """:func:`replicated_for_host` for any value whose program sharding JAX knows."""
    where = of_tracer(value)
    return value if where is None else replicated_for_host(value, where)


def first_axis_whole(value: Any) -> Any:
    """``value`` with its first axis gathered where the program's types split it over
    devices (explicit axes), so that it can be indexed: JAX refuses to slice a split axis
    there ("slicing on sharded dims"). Its other axes keep their layout."""
    where = of_tracer(value)
    if where is None or where.spec is None or not hasattr(jax.sharding, "reshard"):
        return value
    try:
        from jax.sharding import NamedSharding, PartitionSpec

        spec = tuple(where.sharding.spec)
        if not spec or spec[0] is None:
            return value
        return jax.sharding.reshard(value, NamedSharding(where.sharding.mesh, PartitionSpec(None, *spec[1:])))
    except Exception:
        return value


def restore_program_layout(value: Any, original: Any) -> Any:
    """``value`` (replicated for the host) laid out again as ``original`` is in the program."""
    where = of_tracer(original)
    if where is None or value is original:
        return value
    try:
        # From the callback's one device to every device first (a broadcast), then
        # slice: going straight to the sharded layout is what XLA warns about.
        everywhere = replicated_for_host(value, where)
        if where.spec is not None and hasattr(jax.sharding, "reshard"):
            return jax.sharding.reshard(everywhere, where.sharding)
        return everywhere  # automatic axes: the compiler chooses the layout from there
    except Exception:
        return value


def varying_as(value: Any, original: Any) -> Any:
    """``value`` (a host call's result, which varies over no manual axis) varying over
    the ``shard_map`` axes ``original`` varies over, so that the two have one type:
    a ``lax.cond`` whose branches give one each refuses them otherwise."""
    missing = tuple(sorted(_varying_axes(original) - _varying_axes(value)))
    if not missing:
        return value
    pvary = getattr(jax.lax, "pvary", None)  # JAX 0.6 to 0.7; later, pcast
    return pvary(value, missing) if pvary is not None else jax.lax.pcast(value, missing, to="varying")


def _varying_axes(value: Any) -> frozenset:
    """The manual axes ``value`` varies over: ``jax.typeof(x).vma`` up to JAX 0.7, its
    ``manual_axis_type.varying`` later (none where JAX has neither)."""
    aval = jax.typeof(value)
    vma = getattr(aval, "vma", None)
    if vma is None:
        vma = getattr(getattr(aval, "manual_axis_type", None), "varying", None)
    return frozenset(vma or ())


class CompiledShardings:
    """The shardings XLA chose for a breakpoint's operands, learned at compile time.

    A stop inside a sharded jit receives copies gathered onto one device; the
    layout the compiler chose for each value is known only when the program is
    partitioned. For each operand whose program sharding JAX knows, JAX's
    ``inspect_array_sharding`` is staged next to the breakpoint; its callback
    (run by the SPMD partitioner, once per compilation) records the sharding
    here, by operand index. Under pmap and shard_map (manual axes) nothing is
    staged: there a value is one device's shard.
    """

    def __init__(self) -> None:
        self.by_operand: dict[int, Any] = {}

    def stage(self, operands: list[Any], shardings: list[ProgramSharding | None]) -> None:
        inspect = jax_routes.INSPECT_ARRAY_SHARDING.original()  # also while ours stands in
        for index, (value, where) in enumerate(zip(operands, shardings)):
            if where is None:
                continue
            try:
                inspect(value, callback=functools.partial(self._record, index))
            except Exception:  # a JAX that cannot inspect here: the stop names the layout instead
                pass

    def _record(self, index: int, sharding: Any) -> None:
        self.by_operand[index] = sharding

    def get(self, index: int) -> Any:
        return self.by_operand.get(index)


# -- arrays reopened from a saved stop ----------------------------------------------
# Each one is a host copy on this machine's default device; where it was at the stop is
# kept as text, by the array's identity, for as long as the array lives. A leaf deep in a
# reopened pytree has no name a frame could key it by, so identity it is.
_saved_labels: dict[int, tuple[weakref.ref, str]] = {}


def keep_saved_label(value: Any, label: str) -> None:
    """``value`` (an array reopened from a saved stop) was at ``label`` at the stop:
    :func:`runtime_label` says so while it lives."""
    key = id(value)

    def forget(ref: weakref.ref, key: int = key) -> None:
        if _saved_labels.get(key, (None,))[0] is ref:
            del _saved_labels[key]

    _saved_labels[key] = (weakref.ref(value, forget), label)


def _saved_label(value: Any) -> str | None:
    kept = _saved_labels.get(id(value))
    return kept[1] if kept is not None and kept[0]() is value else None


def runtime_label(value: Any) -> str | None:
    """A concrete value's sharding: ``host``, ``cpu:0`` or ``P('x',) on mesh x=8``; for
    an array reopened from a saved stop, where it was at the stop."""
    import numpy as np

    saved = _saved_label(value) if _saved_labels else None
    if saved is not None:
        return saved
    if isinstance(value, (np.ndarray, np.generic)):
        return "host"
    sharding = getattr(value, "sharding", None)
    if sharding is None:
        return None
    try:
        devices = sharding.device_set
    except Exception:
        return type(sharding).__name__
    if len(devices) == 1:
        return str(next(iter(devices)))
    spec, mesh = getattr(sharding, "spec", None), mesh_label(getattr(sharding, "mesh", None))
    if spec is not None and mesh is not None:
        return f"{spec_text(spec)} on mesh {mesh}"
    return f"{len(devices)} devices"
