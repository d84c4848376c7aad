"""The question a staged stop asks the host at every step, before any value is sent.

The host answers with screening.py's int32 state: pass, open, or "screen, and send me
these groups of locals". The program then branches on it: to send the groups asked for
(each answered with the state again), and to send the values to a stop that opens
(staging.py). A ``lax.cond`` would test the state first, and each test is a kernel of
its own, which XLA compiles at every stop (2 to 5 ms each on CPU, where a 10-frame
stop's whole trace and compile is about 0.3 s). So the program branches on the state
itself, as the branch index (``jax_host_calls.branch_on``: an index past the last
branch takes the last one):

- whether to screen: branches (keep, keep, keep, screen), for PASS (0), OPEN (1),
  SCREENED_OPEN (2: the question screened the stop open) and every state past them,
  the screening ones;
- whether it opens: branches (pass, open), for PASS and every state past it, once
  screened (a screening state never reaches it).

A batched arrival (under ``vmap``) screened open carries its key, to name the element
that opened, so there the program tests whether the state screens. Where a screening
may ask for several groups, the program tests the state's bit for each: an answer per
group from the host would be a result buffer more for the question, or a host call more
for each screening arrival, at every step (1 to 3 us each), where the tests cost compile
time once.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Protocol

import jax
import numpy as np

from jaxdbg.capture import screening
from jaxdbg.engine.program_shardings import replicated_for_host
from jaxdbg.engine.values import sent_stats
from jaxdbg.internals import jax_host_calls
from jaxdbg.runtime import notices
from jaxdbg.runtime.errors import DebuggerQuit
from jaxdbg.runtime.guarded_calls import format_exception


class AskedSite(Protocol):
    """What the question needs of a breakpoint site (breakpoints._Site)."""

    screen_groups: tuple
    """The innermost frame's traced locals a screening may ask for (screening.LocalGroup)."""

    stats_forms: tuple
    """Its locals a screening may ask for as statistics (screening.StatsForm)."""

    unsent_forms: set[int]
    """The positions in :attr:`stats_forms` of those the program could not compute."""

    def ask(self, stops: int, mask: Any, levels: tuple, sizes: tuple, carried: tuple, values: tuple) -> int:
        """The host's first answer for an arrival of ``stops`` selected stops, with the
        groups at positions ``carried`` sent along (``values``, their operands in order)
        and nothing else: a screening state, which may ask for the other
        :attr:`screen_groups`."""

    def receive(self, state: int, position: int, values: tuple, levels: tuple, sizes: tuple) -> int:
        """Screen group ``position``'s values arrive; the state after them."""


class Sending:
    """A site and its operands' program layouts, which the staged sends need."""

    def __init__(self, site: AskedSite, layouts: tuple) -> None:
        self.site = site
        self.layouts = layouts
        self.sharded = any(layout is not None for layout in layouts)

    def for_host(self, operands: Any, indices: Any) -> list:
        """``operands[i]`` for each of ``indices``, replicated over its mesh where the
        program shards it (program_shardings.replicated_for_host). Called inside the
        branch that sends them: outside it, XLA would gather every sharded local at
        every step, the passed ones too."""
        layouts = self.layouts
        return [operands[i] if layouts[i] is None else replicated_for_host(operands[i], layouts[i]) for i in indices]

    def on_every_device(self, answer: Any) -> Any:
        """The host's answer (made on one device) replicated once over the mesh of a
        sharded program, where one of the operands says which: every device branches
        on it, and XLA would otherwise broadcast it again at each use (an all-reduce
        each, a collective wait of every device)."""
        where = next((w for w in self.layouts if w is not None), None)
        return answer if where is None else replicated_for_host(answer, where)


def where_it_opens(state: Any, then: Callable, otherwise: Callable, *operands: Any) -> Any:
    """``then(*operands)`` where the screened ``state`` opens, else ``otherwise(*operands)``."""
    return jax_host_calls.branch_on(state, (otherwise, then), *operands)


STATE = (((), np.dtype(np.int32)),)  # a host call's one int32 result


def ask(sending: Sending, levels: tuple, sizes: tuple, mask: Any, operands: list, after: Any) -> Any:
    """The host's decision for this arrival, screening.py's int32 state, taken before
    any value but the locals a condition, log template or watch reads is sent.

    The question is a host call XLA keeps in the step (jax_host_calls.py); its operands
    are the batch mask and the few bytes of the groups screening.carried picks (the
    frame's scalars). A screening arrival then has the other locals it asked for sent,
    one ``lax.cond`` per group, each answered with the state again; a passed stop skips
    them all in one ``lax.cond`` (the group's own, where there is one group)."""
    site = sending.site
    every = int(np.prod(sizes)) if sizes else 1
    groups = site.screen_groups
    carried = screening.carried(groups, operands)
    carried_values = sending.for_host(operands, [i for position in carried for i in groups[position].operands])
    masks = [] if mask is None else [mask]
    afters = [] if after is None else [after]  # read by nothing: it orders the question
    # What each position sends, made inside its branch: a group's values, or (not under
    # vmap, whose stops are screened on whole batches) a local's statistics.
    asked: list[tuple[int, Callable[[], list]]] = [
        (p, functools.partial(sending.for_host, operands, group.operands))
        for p, group in enumerate(groups)
        if p not in carried and screening.sendable(group)
    ]
    if not sizes:
        asked += [
            (screening.STATS_BASE + k, functools.partial(stats_on_device, form, [operands[i] for i in form.operands]))
            for k, form in enumerate(site.stats_forms)
        ]
    # Counts, not the lists: the callback outlives the trace, and must hold no tracer.
    masked, ordered_after = len(masks), len(afters)

    def ask_host(*args):
        stops = every if not masked else int(np.count_nonzero(args[0]))
        values = args[masked : len(args) - ordered_after]
        return (answered(lambda: site.ask(stops, args[0] if masked else None, levels, sizes, carried, values)),)

    answer = jax_host_calls.host_call(ask_host, *masks, *carried_values, *afters, results=STATE)
    state = sending.on_every_device(answer[0])
    if not asked:
        return state

    def send(state, position, made):
        def receive(state, *values):
            return (answered(lambda: site.receive(int(state), position, values, levels, sizes)),)

        return jax_host_calls.host_call(receive, state, *made(), results=STATE)[0]

    def send_what_is_read(state):
        if len(asked) == 1:  # the screening's own lax.cond asked for it
            ((position, made),) = asked
            return send(state, position, made)
        for position, made in asked:  # the program tests the state's bit for each
            sent = functools.partial(send, position=position, made=made)
            try:
                state = jax.lax.cond(screening.asks_for(state, position), sent, lambda state: state, state)
            except Exception as e:
                _unless_statistics(site, position, e)
        return state

    keep = lambda state: state
    try:
        if sizes:  # a batched arrival screened open already carries its key: told apart in the program
            return jax.lax.cond(screening.is_screening(state), send_what_is_read, keep, state)
        # PASS, OPEN and SCREENED_OPEN keep; every state past them screens.
        return jax_host_calls.branch_on(state, (keep, keep, keep, send_what_is_read), state)
    except Exception as e:
        if len(asked) > 1:
            raise
        _unless_statistics(site, asked[0][0], e)  # a local's statistics, sent alone
        return state


def _unless_statistics(site: AskedSite, position: int, error: Exception) -> None:
    """Raise ``error``, which staging the send of screening ``position`` raised, unless
    that sends a local's statistics: a form that cannot be staged here must not end the
    user's trace. The host never asks for it then, and has the values sent instead."""
    if position < screening.STATS_BASE:
        raise error
    site.unsent_forms.add(position - screening.STATS_BASE)
    notices.notice_once(
        f"statistics form failed: {type(error).__name__}",
        f"a watched local's statistics could not be computed in the program ({format_exception(error)}); "
        "its values are sent instead",
    )


def stats_on_device(form: screening.StatsForm, values: list) -> list:
    """What ``form`` (screening.StatsForm) receives of its local's ``values``, computed
    where they are: a few small arrays, whatever the values' sizes."""
    return (
        sent_stats.array_stats_in_program(values[0])
        if form.array is not None
        else sent_stats.leaf_stats_in_program(values)
    )


def answered(decide: Callable[[], int]) -> int:
    """The host's answer, ``decide()``; where jaxdbg itself fails in it, PASS (the stop
    is passed, the failure said once): an error raised here would end the user's
    computation. Quitting the debugger still ends it."""
    try:
        return decide()
    except DebuggerQuit:
        raise
    except Exception as e:
        notices.notice_once(
            f"screening failed: {type(e).__name__}",
            f"deciding a breakpoint's stop failed ({format_exception(e)}); such stops are passed",
        )
        return screening.PASS
