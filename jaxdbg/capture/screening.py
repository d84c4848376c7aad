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
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from typing import Any, Callable

import jax
import numpy as np

from jaxdbg.engine import frames as frames_mod

PASS = 0
OPEN = 1


# A local this big (bytes) is sent on its own when a check reads it, and only then; the
# smaller ones travel together (each send is a lax.cond and a callback the program is
# compiled with, and a condition reading one scalar rarely minds a few more).
OWN_GROUP_BYTES = 16 * 1024
# At most this many locals are sent on their own (the largest first); the rest travel together.
MAX_OWN_GROUPS = 8
# The state's bits: 1 (opens), then one per group (the own ones, the rest, device indices).
KEY_SHIFT = 1 + MAX_OWN_GROUPS + 2


@dataclasses.dataclass(frozen=True)
class LocalGroup:
    """Operands of the innermost frame that are sent together, and the locals they make."""

    names: frozenset[str]  # the locals; empty for a multi-device stop's device-axis indices
    operands: tuple[int, ...]


def local_groups(
    innermost: frames_mod.FrameTemplate, operands: list[Any], device_operands: list[int]
) -> tuple[LocalGroup, ...]:
    """What the innermost frame's screening may ask for: its big traced locals one by
    one, the others together, and the device-axis indices (always asked for)."""
    sized = []
    for name in innermost.order:
        if name in innermost.traced_locals:
            _, leaves = innermost.traced_locals[name]
            indices = tuple(leaf.index for leaf in leaves if isinstance(leaf, frames_mod.OperandSlot))
            if indices:
                sized.append((sum(_nbytes(operands[i]) for i in indices), name, indices))
    big = sorted((s for s in sized if s[0] >= OWN_GROUP_BYTES), key=lambda s: -s[0])[:MAX_OWN_GROUPS]
    own = {name for _, name, _ in big}
    groups = [LocalGroup(frozenset({name}), indices) for _, name, indices in big]
    rest = [(name, indices) for _, name, indices in sized if name not in own]
    if rest:
        together = tuple(dict.fromkeys(i for _, indices in rest for i in indices))
        groups.append(LocalGroup(frozenset(name for name, _ in rest), together))
    if device_operands:
        groups.append(LocalGroup(frozenset(), tuple(device_operands)))
    return tuple(groups)


def _nbytes(value: Any) -> int:
    shape, dtype = np.shape(value), getattr(value, "dtype", None)
    itemsize = getattr(dtype, "itemsize", 4)
    return int(np.prod(shape, dtype=np.int64)) * int(itemsize)


def values_sent(innermost: frames_mod.FrameTemplate, received: dict[int, Any]) -> Callable[[str], Any]:
    """A name's value in the innermost frame as a screening holds it, with no frame
    built: an array local sent (NumPy), an untraced local, a global; KeyError for a
    local not sent or a pytree (the frame built from them answers for those)."""

    def lookup(name: str) -> Any:
        if name in innermost.traced_locals:
            treedef, leaves = innermost.traced_locals[name]
            if not (jax.tree_util.treedef_is_leaf(treedef) and isinstance(leaves[0], frames_mod.OperandSlot)):
                raise KeyError(name)
            return received[leaves[0].index]
        if name in innermost.static_locals:
            return innermost.static_locals[name]
        if name in innermost.order:
            raise KeyError(name)
        return innermost.globals[name]

    return lookup


def wanted(groups: tuple[LocalGroup, ...], names: frozenset[str] | None) -> list[int]:
    """The positions of the groups to send for checks reading ``names`` (None: every one)."""
    return [j for j, g in enumerate(groups) if names is None or not g.names or bool(g.names & names)]


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
        """A new arrival; returns its state, asking for ``screening.waiting``. It is kept
        until what it waits for has come (one that waits for nothing is screened at once)."""
        with self._lock:
            key = next(self._keys)
            if screening.waiting:
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

    def opened(self, state: int, index: tuple) -> int:
        """Record that arrival ``state``'s stop at batch ``index`` opens; the state saying so."""
        key = state >> KEY_SHIFT
        with self._lock:
            self._opened[key] = index
        return key << KEY_SHIFT | OPEN

    def first_opened(self, state: int) -> tuple | None:
        """The batch index recorded by :meth:`opened` for this state (taken once)."""
        with self._lock:
            return self._opened.pop(state >> KEY_SHIFT, None)
