"""A stop's operands as its frames read them: each one once, a batched one as the stop's
element, a big tree's leaves at once; and a screened stop's (:class:`ScreenedStop`).
And let go of once the cell in which the stop opened ends (:func:`after_the_cell`).

The host callback receives the operands the program sent: every one, in order, or (a
screening's) only those a condition, log template or watch reads, by index.
"""

from __future__ import annotations

import functools
import gc
import threading
from typing import Any, Callable, Sequence

import jax
import numpy as np

from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.frames import Unavailable
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import sent_stats
from jaxdbg.internals import ipython_api

NOT_SENT = Unavailable("not sent to the host: no condition, log template or watch reads it")

# XLA's CPU client takes a read-only NumPy array aligned this way as a buffer of its
# own, with no copy. It copies any other array, and a big one on its thread pool, after
# device_put returns. At a stop in a program on several CPU devices the other devices
# hold that pool while they wait for the stop at a collective: such a copy would never
# run, and the first read of the value would wait forever.
_ALIGNMENT = 64


def to_jax(value: Any) -> jax.Array:
    """``value`` as a JAX array on the default device, readable while the program
    waits for the stop (see _ALIGNMENT)."""
    if isinstance(value, jax.Array):
        return value
    return to_jax_all([value])[0]


def to_jax_all(values: Sequence[Any]) -> list[jax.Array]:
    """:func:`to_jax` of each of ``values`` (NumPy arrays), in one call: a frame of
    10,000 leaves makes one call, not 10,000."""
    if not _cpu_has_several_devices():
        # No other device can hold the pool: JAX's own copy, which runs while the stop
        # opens (an aligned copy first would delay it: 400 MB, 0.1 to 2 s here).
        return jax.device_put(list(values))
    return jax.device_put([_as_buffer(v) for v in values], may_alias=True)


@functools.lru_cache(maxsize=1)
def _cpu_has_several_devices() -> bool:
    try:
        return len(jax.local_devices(backend="cpu")) > 1
    except RuntimeError:  # no CPU backend
        return False


def _as_buffer(value: Any) -> np.ndarray:
    """``value`` itself where XLA may take it as a buffer (aligned and read-only: the
    JAX array shares its memory), else such a copy of it."""
    value = np.asarray(value)
    if value.flags.c_contiguous and not value.flags.writeable and value.ctypes.data % _ALIGNMENT == 0:
        return value
    raw = np.empty(value.nbytes + _ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % _ALIGNMENT
    copy = raw[start : start + value.nbytes].view(value.dtype).reshape(value.shape)
    np.copyto(copy, value)
    copy.flags.writeable = False
    return copy


def key_impls(operands: Sequence[Any]) -> dict[int, Any]:
    """The PRNG implementation of each operand that is a typed PRNG key (``jax.random.key``),
    by index. A host callback receives such a key as its raw key data (uint32), which
    :func:`reader` wraps back into the key the program holds."""
    return {
        i: jax.random.key_impl(value)
        for i, value in enumerate(operands)
        if jax.dtypes.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key)
    }


def reader(
    index: tuple,
    levels,
    values: dict[int, Any] | Sequence[Any],
    host_ops: dict[int, Any],
    as_jax: bool = True,
    keys: dict[int, Any] | None = None,
) -> Callable[[int], Any]:
    """Operand ``i`` of batch element ``index``, read once: ``values`` holds what reached
    the host, every operand in order or (a screening's) only those its checks read by index.
    ``as_jax``: each value a JAX array, as a frame shows it (else as it came: a
    screening's NumPy arrays). ``keys``: :func:`key_impls` of the operands; those come
    back as typed keys (JAX arrays) either way."""
    count = None if isinstance(values, dict) else len(values)
    keys = keys or {}

    def sent(i: int) -> bool:
        return i in values if count is None else 0 <= i < count

    @functools.lru_cache(maxsize=None)
    def operand(i: int) -> Any:
        if not sent(i):
            return NOT_SENT
        picked = tuple(ix for ix, batched in zip(index, levels[i]) if batched)
        if not picked:
            value = values[i]
        else:
            if i not in host_ops:
                host_ops[i] = np.asarray(values[i])
            value = host_ops[i][picked]
        if i in keys:
            return jax.random.wrap_key_data(to_jax(value), impl=keys[i])
        return value if not as_jax or isinstance(value, jax.Array) else to_jax(value)

    def many(indices: Sequence[int]) -> list[Any]:
        """Operands ``indices`` at once (a pytree local's leaves): an unbatched stop's jax
        arrays as they came, with no call per leaf (10,000 leaves: ~10 ms less), and
        one slice where they follow each other."""
        if index or (keys and not keys.keys().isdisjoint(indices)):
            found = []
        elif isinstance(values, dict):
            found = [values.get(i, NOT_SENT) for i in indices]
        elif isinstance(indices, range) and indices.stop <= len(values):
            found = list(values[indices.start : indices.stop])
        else:
            found = [values[i] if sent(i) else NOT_SENT for i in indices]
        if found and (not as_jax or all(issubclass(kind, jax.Array) for kind in set(map(type, found)))):
            return found
        return [operand(i) for i in indices]

    operand.many = many  # type: ignore[attr-defined]
    return operand


class ScreenedStop:
    """One stop of an arrival being screened, decided on the locals sent as they came
    (NumPy arrays; a pytree local is rebuilt from them when read); a frame of JAX arrays
    and the stop's info are made on first need, each once. Most screened stops need
    neither: a loop step whose condition on a scalar is false, a watch of a number."""

    __slots__ = (
        "_innermost",
        "_index",
        "_levels",
        "_sizes",
        "_received",
        "_host_ops",
        "_compiled",
        "_info_of",
        "_keys",
        "_stats",
        "_made",
    )

    def __init__(
        self,
        innermost: frames_mod.FrameTemplate,
        index: tuple,
        levels: tuple,
        sizes: tuple,
        received: dict[int, Any],
        host_ops: dict[int, Any],
        compiled: Callable[[int], Any] | None,
        info_of: Callable[[tuple, tuple, Callable[[int], Any]], StopInfo],
        keys: dict[int, Any],
        stats: dict[str, sent_stats.SentStats],
    ) -> None:
        self._innermost, self._index, self._levels, self._sizes = innermost, index, levels, sizes
        self._received, self._host_ops, self._compiled, self._info_of = received, host_ops, compiled, info_of
        self._keys = keys  # key_impls
        self._stats = stats  # the locals sent as statistics only
        self._made: dict[str, Any] = {}

    def value(self, name: str) -> Any:
        """``name``'s value with the NumPy arrays sent (or an untraced local, a global),
        with no frame built (a local sent as statistics: them); KeyError where the frame has none."""
        if name in self._stats:
            return self._stats[name]
        innermost = self._innermost
        if name in innermost.traced_locals:
            treedef, leaves = innermost.traced_locals[name]
            only = leaves[0] if jax.tree_util.treedef_is_leaf(treedef) else None
            if not self._sizes and type(only) is frames_mod.OperandSlot and only.index not in self._keys:
                return self._received.get(only.index, NOT_SENT)  # as it came
            return self._once(f"local {name}", lambda: innermost.traced_value(name, self._reader(as_jax=False)))
        if name in innermost.static_locals:
            return innermost.static_locals[name]
        if name in innermost.order:
            raise KeyError(name)  # a local not yet bound
        return innermost.globals[name]

    def frame(self) -> frames_mod.Frame:
        """The innermost frame with the values sent, as JAX arrays (as the user sees them)."""
        return self._once("jax", lambda: self._innermost.build(self._reader(as_jax=True), self._compiled))

    def info(self) -> StopInfo:
        return self._once("info", lambda: self._info_of(self._index, self._sizes, self._reader(as_jax=False)))

    def _reader(self, as_jax: bool) -> Callable[[int], Any]:
        host_ops = self._host_ops if not as_jax else {}
        return self._once(
            f"reader {as_jax}",
            lambda: reader(self._index, self._levels, self._received, host_ops, as_jax=as_jax, keys=self._keys),
        )

    def _once(self, what: str, make: Callable[[], Any]) -> Any:
        if what not in self._made:
            self._made[what] = make()
        return self._made[what]


# JAX frees a host callback's operands (and the host copies a stop made of them, 400 MB
# for a 400 MB local) only after the computation has let go of them, through a queue
# that its garbage-collector callback empties (gc.callbacks); in an idle kernel that
# is the next dispatch or collection, possibly never. So when a cell in which a stop
# opened finishes, one collection lets them go. (Outside IPython the program's next
# dispatch does it.)
_release_pending = threading.Lock()
RELEASE_AGAIN_S = 0.3


def after_the_cell() -> None:
    """Collect once when the running cell ends (at most once per cell; nothing outside IPython)."""
    if ipython_api.execution_count() is None or not _release_pending.acquire(blocking=False):
        return  # not in IPython, or this cell already has one

    def release() -> None:
        _release_pending.release()
        gc.collect()
        # The computation may let go of the operands just after the cell's end.
        later = threading.Timer(RELEASE_AGAIN_S, gc.collect, args=(0,))
        later.daemon = True
        later.start()

    ipython_api.on_cell_finished(release)
