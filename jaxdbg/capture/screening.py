"""A stop screened on the host with only the locals its checks read.

A breakpoint with a condition, a log template or watches must evaluate them in its
innermost frame before it knows whether the stop opens. Sending every local of every
frame for that would move a step's activations to the host at every step, opened or
not. Instead the program sends, one group of locals at a time and only when the host
asks for it, the locals those expressions name (:func:`jaxdbg.engine.breakpoint_checks.names_read`);
the host screens the stop on a frame holding just those, and only a stop that opens has
all its values sent after.

The host's answers travel as one int32 *state* (one result: each costs at every step):

- :data:`PASS` (0): nothing more is sent;
- :data:`OPEN` (1): every value is sent and the stop is screened, if at all, with them;
- ``key << KEY_SHIFT | need << 1`` (even): arrival ``key`` is being screened; bit ``1 + j``
  of ``need`` asks for group ``j`` (:func:`local_groups`), sent next, each answered with
  the state again;
- :data:`SCREENED_OPEN` (2), for an unbatched arrival, or ``key << KEY_SHIFT | 1`` (odd),
  for batched arrival ``key`` (its first stop that opens recorded here): screened, a
  stop opens; every value is sent, and that stop is served unscreened.

Keys name arrivals: concurrent ones (pmap's devices, threads) never mix their locals.

The frame's scalar locals (and a multi-device stop's device indices) are the exception:
a few bytes in all, they travel with the host's question itself (:func:`carried`), so a
condition or watch on a loop's step, loss or input is decided in one host call and no
``lax.cond``. A passed stop sends those bytes, and no array.

A watch of a whole pytree local (``watch grads``) keeps its float leaves' norms and NaN /
Inf counts, of an array its min / max / mean and NaN / Inf counts, never the values:
such a local, read by nothing else, is sent as those statistics, computed in the program
(:class:`StatsForm`; 16 bytes a leaf), not as its values, where it is big enough for that
to cost less and the watch was set when the breakpoint was traced (a form costs compile
time). Not under ``vmap``, whose stops are screened on whole batches.

The host side of it all is :class:`ScreeningSite`, which a breakpoint's site inherits.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import threading
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.capture import operand_reader, prints
from jaxdbg.engine import breakpoint_checks, breakpoint_state, watches
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import sent_stats, tree_hits
from jaxdbg.job import host_passes, quit_watch
from jaxdbg.runtime.guarded_calls import guarded

PASS = 0
OPEN = 1
SCREENED_OPEN = 2


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
# A statistics form is compiled into the program, sent or not, and XLA's compile time
# grows with its reductions (on CPU, a step compiled in 0.18 s: 0.44 s with a 16-leaf
# tree's form, 0.39 s with an array's): so a local has one only where a watch of it is
# set when its breakpoint is traced (the program traced again after `watch grads`, as a
# jitted step defined anew is), of at most MAX_STATS_LEAVES float leaves, at most
# MAX_STATS_FORMS per breakpoint (the largest first).
MAX_STATS_FORMS = 8
MAX_STATS_LEAVES = 256
# A local this big (bytes) has a statistics form. Below it, sending the values costs
# less than the form's reductions, a few kernels a leaf (measured on CPU, a 6-leaf tree
# watched at every step: 8.6 KB, 169 us a step with the form against 115 us without;
# 257 KB, 420 against 391; 513 KB, the same; 2 MB, 1.4 ms against 2.2 ms; 8 MB, 3.3 ms
# against 7.3 ms). On a GPU or TPU each value sent is also a transfer.
STATS_MIN_BYTES = 512 * 1024
# The state's bits: 1 (opens), then one per group (the scalars, the own ones, the rest,
# device indices), then one per statistics form.
STATS_BASE = MAX_OWN_GROUPS + 3  # the position of the first statistics form
KEY_SHIFT = 1 + STATS_BASE + MAX_STATS_FORMS


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
    shape = getattr(value, "shape", None)  # a tracer's or array's; asked per leaf of a big tree
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", 4)
    return int(math.prod(np.shape(value) if shape is None else shape)) * int(itemsize)


@dataclasses.dataclass(frozen=True, eq=False)
class StatsForm:
    """A local of the innermost frame as its statistics, which the program computes when
    the host asks (host_question.stats_on_device): a pytree's float leaves' (``skeleton``: the
    tree with a ShapeDtypeStruct for each array leaf), or a real float array's."""

    name: str
    operands: tuple[int, ...]  # a tree's float leaves' operands, in the order tree_hits reads them; an array's
    sizes: np.ndarray  # elements per operand
    skeleton: Any = None  # a tree's
    array: tuple[tuple[int, ...], str] | None = None  # an array's shape and dtype

    def received(self, *values: Any) -> sent_stats.SentStats:
        """The statistics as they arrive (host_question.stats_on_device's arrays)."""
        if self.array is not None:
            return sent_stats.array_received(*self.array, *values)
        return sent_stats.tree_received(self.skeleton, self.sizes, *values)


def stats_forms(
    innermost: frames_mod.FrameTemplate, operands: list[Any], watched: frozenset[str]
) -> tuple[StatsForm, ...]:
    """The innermost frame's locals a watch may have sent as statistics: of those
    ``watched`` whole as the breakpoint is traced (breakpoint_checks.watched_whole), the
    largest MAX_STATS_FORMS of at least STATS_MIN_BYTES: real float arrays, and pytrees
    whose float leaves are each an operand, at most MAX_STATS_LEAVES of them."""
    found = [
        sized
        for name in innermost.order
        if name in watched and (sized := _big_form(innermost, name, operands)) is not None
    ]
    found.sort(key=lambda item: -item[0])
    return tuple(form for _, form in found[:MAX_STATS_FORMS])


def _big_form(innermost: frames_mod.FrameTemplate, name: str, operands: Any) -> tuple[int, StatsForm] | None:
    """(bytes, form) of local ``name`` when a watch of it whole may be sent as its
    statistics: a form can be made and its values are at least STATS_MIN_BYTES."""
    if name not in innermost.traced_locals:
        return None
    treedef, leaves = innermost.traced_locals[name]
    form = guarded(lambda: _stats_form(name, treedef, leaves, operands), lambda e: None)
    size = 0 if form is None else sum(_nbytes(operands[i]) for i in form.operands)
    return (size, form) if form is not None and size >= STATS_MIN_BYTES else None


def _stats_form(name: str, treedef: Any, leaves: list[Any], operands: Any) -> StatsForm | None:
    if jax.tree_util.treedef_is_leaf(treedef):
        (leaf,) = leaves
        if not isinstance(leaf, frames_mod.OperandSlot) or not _real_float(operands[leaf.index].dtype):
            return None
        shape = tuple(int(d) for d in np.shape(operands[leaf.index]))
        array = (shape, str(operands[leaf.index].dtype))
        return StatsForm(name, (leaf.index,), np.array([math.prod(shape)], dtype=np.int64), array=array)
    shaped = [
        jax.ShapeDtypeStruct(np.shape(operands[leaf.index]), operands[leaf.index].dtype)
        if isinstance(leaf, frames_mod.OperandSlot)
        else leaf
        for leaf in leaves
    ]
    skeleton = jax.tree_util.tree_unflatten(treedef, shaped)
    if len(jax.tree_util.tree_leaves(skeleton)) != len(leaves):
        return None  # its leaves are not the captured ones, one for one
    floats = tree_hits.float_leaf_positions(skeleton)
    if not floats or len(floats) > MAX_STATS_LEAVES:
        return None
    slots = [leaves[i] for i in floats]
    if not all(isinstance(slot, frames_mod.OperandSlot) for slot in slots):
        return None
    indices = tuple(slot.index for slot in slots)
    sizes = np.array([math.prod(np.shape(operands[i])) for i in indices], dtype=np.int64)
    return StatsForm(name, indices, sizes, skeleton=skeleton)


def _real_float(dtype: Any) -> bool:
    """A dtype whose statistics the program computes as an array's: a real float (with
    bfloat16 and float16). Not an integer (float32 would round its min and max past
    2**24), a bool, a complex number or a PRNG key."""
    try:
        return bool(jnp.issubdtype(dtype, jnp.floating))
    except TypeError:
        return False


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
    return (state > SCREENED_OPEN) & (state & 1 == 0)


@dataclasses.dataclass
class Screening:
    """One arrival being screened: what it asked for and what has come."""

    mask: Any  # the selected batch elements (None: every one)
    waiting: set[int]  # group positions still to arrive
    received: dict[int, Any] = dataclasses.field(default_factory=dict)  # operand index -> value
    stats: dict[str, sent_stats.SentStats] = dataclasses.field(default_factory=dict)  # local -> its statistics


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

    def receive(
        self, state: int, position: int, operands: tuple[int, ...], values: tuple, stats: tuple | None = None
    ) -> Screening | None:
        """Keep one group's values (or ``stats``: a local's name and statistics); the
        arrival once all it asked for has come (None before)."""
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
            if stats is not None:
                screening.stats[stats[0]] = stats[1]
            screening.waiting.discard(position)
            if screening.waiting:
                return None
            del self._screening[key]
            return screening

    def opened(self, state: int | None, index: tuple) -> int:
        """The state: arrival ``state``'s stop at batch ``index`` opens (recorded if batched)."""
        if index == ():
            return SCREENED_OPEN
        with self._lock:
            key = next(self._keys) if state is None else state >> KEY_SHIFT
            self._opened[key] = index
        return key << KEY_SHIFT | OPEN

    def first_opened(self, state: int) -> tuple | None:
        """The batch index recorded by :meth:`opened` for this state (taken once)."""
        with self._lock:
            return self._opened.pop(state >> KEY_SHIFT, None)


class ScreeningSite:
    """The host side of a breakpoint site's screening (breakpoints._Site inherits it):
    the question asked at every step, the locals it has sent for, and the decision."""

    # The site's own fields (breakpoints._Site), which the screening reads.
    breakpoint_id: int | None
    templates: list[frames_mod.FrameTemplate]
    compiled: Any  # program_shardings.CompiledShardings | None
    keys: dict[int, Any]
    screen_groups: tuple[LocalGroup, ...]
    stats_forms: tuple[StatsForm, ...]
    unsent_forms: set[int]  # positions in stats_forms: staging could not compute them
    arrivals: Arrivals
    _waiting: dict[tuple, tuple]

    def stops_here(self) -> bool:
        raise NotImplementedError  # the site's

    def _stop_info(self, index: tuple, sizes: tuple, operand: Callable[[int], Any]) -> StopInfo:
        raise NotImplementedError  # the site's

    def sent_whole(self, operand: Callable[[int], Any], name: str) -> int | None:
        """The bytes of innermost local ``name`` (values read by ``operand``) when this
        program sends it whole to a watch of it at every stop, where one traced with the
        watch set would send only its statistics (:func:`stats_forms`); else None."""
        template = self.templates[0]
        if not self.screen_groups or name not in template.traced_locals:
            return None  # eager, or not a traced local of the innermost frame
        if any(form.name == name for form in self.stats_forms):
            return None  # sent as statistics already (or tried, and could not be)
        _, leaves = template.traced_locals[name]
        values = {slot.index: operand(slot.index) for slot in leaves if isinstance(slot, frames_mod.OperandSlot)}
        sized = _big_form(template, name, values)  # as stats_forms decides at trace time
        return None if sized is None else sized[0]

    def ask(self, stops: int, mask: Any, levels: tuple, sizes: tuple, carried: tuple = (), values: tuple = ()) -> int:
        """The host's first answer for one arrival of ``stops`` selected stops (``mask``:
        which, when batched under a condition), asked at every step with only the groups
        at positions ``carried`` of :attr:`screen_groups` sent (``values``: their
        operands, in order): a screening state, which may ask for others."""
        quit_watch.entered()  # an execution is under way: a quit at a job's host may end it here
        if stops == 0 or not self.stops_here():
            return PASS  # no element's condition holds, or another process's stop
        number = self.breakpoint_id
        if host_passes.passes(number, stops):
            return PASS  # a job's debug host passes every stop of it for now
        if number is None or not breakpoint_checks.active(number):
            if not breakpoint_state.is_enabled(number) or breakpoint_state.passes_whole_arrival(number, stops):
                return PASS
            return OPEN
        if not breakpoint_state.is_enabled(number) and not watches.LIVE.has_watches(number):
            return PASS  # disabled: only watches would take values
        if not self.screen_groups:
            return OPEN  # nothing traced in the frame: screened on arrival
        # A condition, log template or watch (a disabled breakpoint's too) reads the
        # innermost frame: only the locals they name are sent, then screened.
        waiting, carried_operands, scalar_watches = self._waiting_for(number, carried, bool(sizes))
        if waiting is None:
            return OPEN  # they read a local too big to send alone: screened on arrival
        if scalar_watches and breakpoint_state.is_enabled(number):
            return self._watched_scalars_only(number, scalar_watches, values, carried_operands, levels)
        received = dict(zip(carried_operands, values))
        if waiting:
            return self.arrivals.start(Screening(mask, set(waiting), received))
        return self._screen(None, mask, received, {}, levels, sizes)  # on what came with the question

    def _watched_scalars_only(self, number: int, watched: tuple, values: tuple, operands: tuple, levels: tuple) -> int:
        """A stop whose only checks are watches of scalars that came with the question (a
        loop's loss or step): decided as breakpoint_checks.screen does, with no frame made."""
        opens, hit = breakpoint_state.arrival(number)
        if opens:
            return self.arrivals.opened(None, ())
        numbers = {name: values[position] for name, position in watched}
        if not watches.LIVE.record_numbers(number, hit, numbers.__getitem__):  # not a NumPy number
            stop = self._screened_stop((), levels, (), dict(zip(operands, values)), {}, {})
            breakpoint_checks.record_watches(number, hit, stop.frame, stop.value)
        return PASS

    def _waiting_for(self, number: int, carried: tuple, batched: bool) -> tuple[frozenset | None, tuple, tuple]:
        """The positions to send for breakpoint ``number``'s checks: the groups
        (:func:`to_send`) and the statistics forms of the locals only watched whole (not
        under vmap); the operands ``carried`` with the question; and :meth:`_scalar_watches`.
        Kept while the checks are the same: this is asked at every step."""
        names = breakpoint_checks.names_read(number)  # a new object whenever the checks change
        known = self._waiting.get((carried, batched))
        if known is None or known[0] is not names:
            whole = breakpoint_checks.watched_whole(number)
            in_question = frozenset().union(*(self.screen_groups[p].names for p in carried))
            summarized = {
                STATS_BASE + k: form.name
                for k, form in enumerate(self.stats_forms)
                if not batched
                and names is not None
                and form.name in whole
                and form.name not in in_question
                and k not in self.unsent_forms
            }
            value_names = names if names is None else names.difference(summarized.values())
            waiting = to_send(self.screen_groups, value_names, carried)
            if waiting is not None:
                waiting = waiting.union(summarized)
            operands = tuple(i for p in carried for i in self.screen_groups[p].operands)
            scalars = () if batched or waiting else self._scalar_watches(number, operands)
            known = self._waiting[carried, batched] = (names, waiting, operands, scalars)
        return known[1], known[2], known[3]

    def _scalar_watches(self, number: int, operands: tuple) -> tuple[tuple[str, int], ...]:
        """``(name, position in operands)`` of each of breakpoint ``number``'s watches,
        where they are its only checks and each names a local of one of ``operands``; else ()."""
        found = []
        for name in breakpoint_checks.only_watched_names(number) or ():
            treedef, leaves = self.templates[0].traced_locals.get(name, (None, ()))
            slot = leaves[0] if len(leaves) == 1 and jax.tree_util.treedef_is_leaf(treedef) else None
            if type(slot) is not frames_mod.OperandSlot or slot.index not in operands or slot.index in self.keys:
                return ()
            found.append((name, operands.index(slot.index)))
        return tuple(found)

    def receive(self, state: int, position: int, values: tuple, levels: tuple, sizes: tuple) -> int:
        """A group of locals, or a local's statistics, asked for by a screening arrives;
        the state after it (screened once the last one has come)."""
        if position >= STATS_BASE:
            form = self.stats_forms[position - STATS_BASE]
            done = self.arrivals.receive(state, position, (), (), (form.name, form.received(*values)))
        else:
            done = self.arrivals.receive(state, position, self.screen_groups[position].operands, values)
        if done is None:
            return state
        return self._screen(state, done.mask, done.received, done.stats, levels, sizes)

    def _screen(
        self,
        state: int | None,
        mask: Any,
        received: dict[int, Any],
        stats: dict[str, sent_stats.SentStats],
        levels: tuple,
        sizes: tuple,
    ) -> int:
        """Decide the arrival's selected stops in order with the locals sent; the first
        that opens ends the screening (the rest are screened with every value, as it is
        served). The locals came as NumPy arrays: a condition or watch NumPy answers is
        decided on them; a frame, a JAX one, or the stop's info is made only for what
        needs it (a template, a call in an expression)."""
        number = self.breakpoint_id
        assert number is not None
        host_ops: dict[int, Any] = {}
        for index in _selected(mask, sizes):
            stop = self._screened_stop(index, levels, sizes, received, host_ops, stats)
            if breakpoint_checks.screen(number, stop.frame, stop.info, prints.write_log_line, stop.value):
                return self.arrivals.opened(state, index)
        return PASS

    def _screened_stop(self, index: tuple, levels: tuple, sizes: tuple, received: dict, host_ops: dict, stats: dict):
        compiled = self.compiled.get if self.compiled is not None else None
        return operand_reader.ScreenedStop(
            self.templates[0], index, levels, sizes, received, host_ops, compiled, self._stop_info, self.keys, stats
        )


def _selected(mask: Any, sizes: tuple) -> list[tuple]:
    """The batch indices a screening decides, in order (``mask``: None for every one)."""
    if not sizes:  # unbatched, the common case: a step of a loop screened at every step
        return [()] if mask is None or bool(np.asarray(mask)) else []
    selected = np.asarray(True if mask is None else mask, dtype=bool)
    selected = np.broadcast_to(selected, sizes) if selected.ndim == 0 else selected.reshape(sizes)
    return [index for index in np.ndindex(*sizes) if selected[index]]
