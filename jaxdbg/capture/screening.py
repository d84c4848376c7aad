"""A stop screened on the host with only the locals its checks read.

A breakpoint with a condition, a log template or watches must evaluate them in its
innermost frame before it knows whether the stop opens. Sending every local of every
frame for that would move a step's activations to the host at every step, opened or
not. Instead the program sends, one group of locals at a time and only when the host
asks for it, the locals those expressions name (:func:`jaxdbg.engine.breakpoint_checks.names_read`);
the host screens the stop on a frame holding just those, and only a stop that opens has
all its values sent after.

The host's answers travel through the program as one int32 *state* (one result
buffer: a callback's cost grows with each):

- :data:`PASS` (0): nothing more is sent;
- :data:`OPEN` (1): every value is sent and the stop is screened, if at all, with them;
- ``key << KEY_SHIFT | need << 1`` (even): arrival ``key`` is being screened; bit ``1 + j``
  of ``need`` asks for group ``j`` (:func:`local_groups`), sent next, each answered with
  the state again;
- ``key << KEY_SHIFT | 1`` (odd): arrival ``key`` was screened and one of its stops opens
  (the first one, recorded here): every value is sent, and that stop is served
  unscreened.

Keys name arrivals so that concurrent arrivals (pmap's devices, several threads) never
mix their locals.

The frame's scalar locals (and a multi-device stop's device indices) are the exception:
a few bytes in all, they travel with the host's question itself (:func:`carried`), so a
condition or watch on a loop's step, loss or input is decided in one host call and no
``lax.cond``. A passed stop sends those bytes, and no array.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from typing import Any, Callable

import jax
import numpy as np

from jaxdbg.capture import operand_reader
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.stop_info import StopInfo

PASS = 0
OPEN = 1


# A local this big (bytes) is sent on its own when a check reads it, and only then; the
# smaller ones travel together (each send is a lax.cond and a callback the program is
# compiled with, and a condition reading one scalar rarely minds a few more).
OWN_GROUP_BYTES = 16 * 1024
# At most this many locals are sent on their own (the largest first); the rest travel together.
MAX_OWN_GROUPS = 8
# A local this small (bytes; a scalar) is one of the scalars, which travel together ahead
# of the rest; at most MAX_SCALARS of them, in the frame's order.
SCALAR_BYTES = 8
MAX_SCALARS = 8
# Groups, in order, ride with the host's question while their bytes as staged (batched
# under vmap) stay within this: a passed stop's whole cost in bytes.
QUESTION_BYTES = 64
# A group of more operands (a pytree's leaves) is never sent alone: XLA's compile time
# for a lax.cond grows with the square of its operands, and a sent group passes two
# (measured on CPU: 5,000 leaves through one cond, 1.2 s; nested in another, 2.5 s). A
# check that reads such a local has the stop open and screened with every value.
MAX_SENT_OPERANDS = 1024
# The state's bits: 1 (opens), then one per group (the scalars, the own ones, the rest,
# device indices).
KEY_SHIFT = 1 + MAX_OWN_GROUPS + 3


@dataclasses.dataclass(frozen=True)
class LocalGroup:
    """Operands of the innermost frame that are sent together, and the locals they make."""

    names: frozenset[str]  # the locals; empty for a multi-device stop's device-axis indices
    operands: tuple[int, ...]


def local_groups(
    innermost: frames_mod.FrameTemplate, operands: list[Any], device_operands: list[int]
) -> tuple[LocalGroup, ...]:
    """What the innermost frame's screening may ask for: its scalar locals together,
    its big traced locals one by one, the others together, and the device-axis indices
    (always asked for)."""
    sized = []
    for name in innermost.order:
        if name in innermost.traced_locals:
            _, leaves = innermost.traced_locals[name]
            indices = tuple(leaf.index for leaf in leaves if isinstance(leaf, frames_mod.OperandSlot))
            if indices:
                sized.append((sum(_nbytes(operands[i]) for i in indices), name, indices))
    scalars = [(name, indices) for size, name, indices in sized if size <= SCALAR_BYTES][:MAX_SCALARS]
    big = sorted((s for s in sized if s[0] >= OWN_GROUP_BYTES), key=lambda s: -s[0])[:MAX_OWN_GROUPS]
    own = {name for _, name, _ in big} | {name for name, _ in scalars}
    groups = [_together(scalars)] if scalars else []
    groups += [LocalGroup(frozenset({name}), indices) for _, name, indices in big]
    rest = [(name, indices) for _, name, indices in sized if name not in own]
    if rest:
        groups.append(_together(rest))
    if device_operands:
        groups.append(LocalGroup(frozenset(), tuple(device_operands)))
    return tuple(groups)


def _together(named: list[tuple[str, tuple[int, ...]]]) -> LocalGroup:
    return LocalGroup(frozenset(name for name, _ in named), tuple(dict.fromkeys(i for _, ix in named for i in ix)))


def carried(groups: tuple[LocalGroup, ...], operands: list[Any]) -> tuple[int, ...]:
    """The positions of the groups sent with the host's question: in order, each whose
    ``operands`` (as staged) still fit in :data:`QUESTION_BYTES` with those before."""
    positions, total = [], 0
    for position, group in enumerate(groups):
        size = sum(_nbytes(operands[i]) for i in group.operands)
        if total + size <= QUESTION_BYTES:
            positions.append(position)
            total += size
    return tuple(positions)


def _nbytes(value: Any) -> int:
    shape, dtype = np.shape(value), getattr(value, "dtype", None)
    itemsize = getattr(dtype, "itemsize", 4)
    return int(np.prod(shape, dtype=np.int64)) * int(itemsize)


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
    ) -> None:
        self._innermost, self._index, self._levels, self._sizes = innermost, index, levels, sizes
        self._received, self._host_ops, self._compiled, self._info_of = received, host_ops, compiled, info_of
        self._keys = keys  # operand_reader.key_impls
        self._made: dict[str, Any] = {}

    def value(self, name: str) -> Any:
        """``name``'s value with the NumPy arrays sent (or an untraced local, a global),
        with no frame built; KeyError where the frame has none."""
        innermost = self._innermost
        if name in innermost.traced_locals:
            treedef, leaves = innermost.traced_locals[name]
            only = leaves[0] if jax.tree_util.treedef_is_leaf(treedef) else None
            if not self._sizes and type(only) is frames_mod.OperandSlot and only.index not in self._keys:
                return self._received.get(only.index, operand_reader.NOT_SENT)  # as it came
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
            lambda: operand_reader.reader(
                self._index, self._levels, self._received, host_ops, as_jax=as_jax, keys=self._keys
            ),
        )

    def _once(self, what: str, make: Callable[[], Any]) -> Any:
        if what not in self._made:
            self._made[what] = make()
        return self._made[what]


def wanted(groups: tuple[LocalGroup, ...], names: frozenset[str] | None) -> list[int]:
    """The positions of the groups to send for checks reading ``names`` (None: every one)."""
    return [j for j, g in enumerate(groups) if names is None or not g.names or bool(g.names & names)]


def sendable(group: LocalGroup) -> bool:
    """Whether a screening may have ``group`` sent alone (see :data:`MAX_SENT_OPERANDS`)."""
    return len(group.operands) <= MAX_SENT_OPERANDS


def to_send(groups: tuple[LocalGroup, ...], names: frozenset[str] | None, carried: tuple) -> frozenset[int] | None:
    """The groups to send for checks reading ``names``, but those ``carried`` with the
    question; None when one of them is too big to be sent alone (the stop opens instead)."""
    waiting = frozenset(wanted(groups, names)).difference(carried)
    return None if any(not sendable(groups[position]) for position in waiting) else waiting


def asks_for(state: Any, position: int) -> Any:
    """Whether a screening ``state`` (an int32 array in the program) asks for group ``position``."""
    return (state >> (1 + position)) & 1 == 1


def is_screening(state: Any) -> Any:
    """Whether ``state`` (an int32 array in the program) is an arrival being screened."""
    return (state > OPEN) & (state & 1 == 0)


@dataclasses.dataclass
class Screening:
    """One arrival being screened: what it asked for and what has come."""

    mask: Any  # the selected batch elements (None: every one)
    waiting: set[int]  # group positions still to arrive
    received: dict[int, Any] = dataclasses.field(default_factory=dict)  # operand index -> value


class Arrivals:
    """The arrivals of one breakpoint being screened, and those screened open, by key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys = itertools.cycle(range(1, 1 << (31 - KEY_SHIFT)))  # the state fits an int32
        self._screening: dict[int, Screening] = {}
        self._opened: dict[int, tuple] = {}  # key -> the batch index of the first stop that opens

    def start(self, screening: Screening) -> int:
        """A new arrival waiting for ``screening.waiting``; returns its state, asking for
        them. It is kept until they have come."""
        with self._lock:
            key = next(self._keys)
            self._screening[key] = screening
        return key << KEY_SHIFT | sum(1 << (1 + j) for j in screening.waiting)

    def receive(self, state: int, position: int, operands: tuple[int, ...], values: tuple) -> Screening | None:
        """Keep one group's values; the arrival once all it asked for has come (None before)."""
        key = state >> KEY_SHIFT
        with self._lock:
            screening = self._screening.get(key)
            if screening is None:
                # A state seen again, as when one answer served several steps (a question
                # XLA could hoist out of a loop; the host call it is now keeps it in each
                # step): each step is screened as an arrival of its own.
                asked = {j for j in range(KEY_SHIFT - 1) if state >> (1 + j) & 1}
                screening = self._screening[key] = Screening(None, asked)
            screening.received.update(zip(operands, values))
            screening.waiting.discard(position)
            if screening.waiting:
                return None
            del self._screening[key]
            return screening

    def opened(self, state: int | None, index: tuple) -> int:
        """Record that arrival ``state``'s stop at batch ``index`` opens (None: an arrival
        screened on what came with the question, given its key now); the state saying so."""
        with self._lock:
            key = next(self._keys) if state is None else state >> KEY_SHIFT
            self._opened[key] = index
        return key << KEY_SHIFT | OPEN

    def first_opened(self, state: int) -> tuple | None:
        """The batch index recorded by :meth:`opened` for this state (taken once)."""
        with self._lock:
            return self._opened.pop(state >> KEY_SHIFT, None)
