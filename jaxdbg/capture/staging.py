"""How a traced breakpoint is staged into the program: the layers around its host callback.

From the outside in:

1. a ``custom_jvp`` layer that hides the breakpoint from differentiation (the stop sees
   forward-pass values; a token passes its tangent through);
2. one ``custom_vmap`` layer per vmap level, so the host receives whole batches and can
   name the element it stops at, stop only where the predicate holds, and skip the rest;
3. a ``lax.cond`` on the predicate (conditional breakpoints), so XLA skips the whole
   breakpoint with one cheap branch when it is false; inside the batching layers, so
   under vmap it branches on the whole batch's mask (JAX would make a cond on a batched
   predicate a select that runs both branches);
4. a ``lax.cond`` on the host's answer to "does this stop open?" (a host call XLA
   keeps in every step, with no operand but the frame's scalars: jax_host_calls.py),
   so a stop that will not open (a disabled breakpoint, ``continue all``, an ignore
   count, another process's stop) sends no array to the host: a callback's cost grows
   with its operands, each one copied to the host (on a GPU or TPU, a device-to-host
   transfer) before the callback runs. A breakpoint with a condition, log template or
   watches is decided on the scalars, or answered "screen": the other locals they read
   are sent, one ``lax.cond`` each (a big pytree or array only watched whole, where the
   watch was set as the breakpoint was traced: its statistics, computed in the branch),
   and the host decides on them (screening.py; the question and the screening's sends
   are host_question.py's: the conds branch on the host's answer itself, as their
   branch index). The question waits for the scalar the stop staged before it in the
   same trace gives once closed: stops are asked in order.
   In a sharded program a value is gathered onto the host's device inside the branch
   that sends it (:meth:`host_question.Sending.for_host`), never ahead of the question;
5. the host callback itself, which hands the batch to ``site.on_host``: a host call
   brings the values to the host as NumPy (JAX's copies; a frame of very many values in
   chunks, one ``lax.cond`` each), and a ``jax.debug.callback`` after it, given a ticket
   for them, opens the stop in its place among the program's prints; with a token
   threaded through, the host call opens it and gives the token back. The values become
   JAX arrays without a copy on XLA's CPU thread pool (operand_reader.to_jax). In a
   sharded jit the host call opens the stop and says whether it ended the computation;
   if so every device raises that (:class:`_EndedStops`).

Layers 1 and 2 leave their arguments unnamed: JAX would name a frame's every leaf there.
"""

from __future__ import annotations

import copy
import functools
import itertools
import threading
from typing import Any, Callable, Protocol, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from jaxdbg.capture import host_question, operand_reader
from jaxdbg.engine import program_shardings
from jaxdbg.internals import jax_api, jax_host_calls, jax_programs
from jaxdbg.runtime import jax_routes
from jaxdbg.runtime.errors import DebuggerQuit


class StagedSite(host_question.AskedSite, Protocol):
    """What staging needs of a breakpoint site (breakpoints._Site)."""

    ordered: bool
    conditional: bool

    def on_host(self, levels: tuple, sizes: tuple[int, ...], pred: Any, operands: list, state: int) -> None:
        """Serve the stops of one host arrival; ``levels[i]`` says which batch levels
        operand ``i`` carries, ``sizes`` the size of each level, outermost first."""


def stage_breakpoint(
    site: StagedSite, pred: Any, operands: list, layouts: list, token: Any, after: Any = None
) -> tuple:
    """Stage the breakpoint into the program being traced: (the token's output, or None;
    a scalar the program has once the stop is decided and closed, without a token).

    ``pred`` is None for an unconditional breakpoint. ``layouts[i]`` is how the program
    shards ``operands[i]`` (program_shardings.ProgramSharding), or None. ``after``: the
    scalar an earlier stop of the same trace gave; the host's question waits for it, so
    this stop is decided once that one has closed (an ``enable`` typed there holds here).
    """
    sending = host_question.Sending(site, tuple(layouts))
    pred_value = jnp.asarray(True) if pred is None else jnp.any(jnp.asarray(pred).astype(bool))
    return _hidden_from_differentiation(sending, pred_value, operands, token, after)


def _hidden_from_differentiation(
    sending: host_question.Sending, pred: Any, operands: list, token: Any, after: Any
) -> tuple:
    @jax.custom_jvp
    @jax_programs.unnamed_arguments("custom_jvp fun")
    def stop(pred, operands, token, after):
        return _batching_layer(sending, tuple(() for _ in operands), ())(pred, operands, token, after)

    @stop.defjvp
    @jax_programs.unnamed_arguments("custom_jvp jvp")
    def forward_values_only(primals, tangents):
        # The stop sees primal values; a token passes its tangent through unchanged,
        # so threading a differentiable value as the token keeps its gradient.
        out = stop(*primals)
        token_tangent = tangents[2]
        if primals[2] is None:
            return out, jax.tree.map(_zero_tangent, out)
        return out, jax.tree.map(_instantiate, token_tangent, primals[2])

    # The stop reads primal values only. Given them (no tangents), JAX binds the custom_jvp call as it is,
    # rather than linearizing its rule with a zero array per operand (a Linen step with 12 stops: 0.6 s more).
    out = stop(pred, [jax_api.primal_of(o) for o in operands], token, jax_api.primal_of(after))
    return (None, out) if token is None else (out, None)


def _batching_layer(sending: host_question.Sending, levels: tuple, sizes: tuple[int, ...]):
    """A breakpoint that knows which operands carry which of ``sizes`` batch levels;
    vmapping it adds one level outside the others."""

    @custom_vmap
    @jax_programs.unnamed_arguments("custom_vmap fun")
    def stop(pred, operands, token, after):
        return _host_callback(sending, levels, sizes, pred, operands, token, after)

    @stop.def_vmap
    @jax_programs.unnamed_arguments("custom_vmap rule")
    def batched(axis_size, in_batched, pred, operands, token, after):
        pred_batched, ops_batched, token_batched, _ = in_batched
        if not pred_batched:
            pred = jnp.broadcast_to(pred, (axis_size,) + jnp.shape(pred))
        # This level is outside all earlier ones, so it goes first.
        new_levels = tuple((b,) + lv for b, lv in zip(ops_batched, levels))
        out = _batching_layer(sending, new_levels, (axis_size,) + sizes)(pred, operands, token, after)
        out_batched = token_batched if token is not None else False
        return out, out_batched

    return stop


def _host_callback(sending: host_question.Sending, levels, sizes, pred, operands, token, after):
    """The unbatched view: one host callback, which a conditional stop makes only where
    its predicate holds (under vmap: for some element of the batch)."""
    site = cast(StagedSite, sending.site)
    if not site.conditional:
        return _stop_on_host(sending, levels, sizes, pred, operands, token, after)
    # XLA skips the whole stop, host call and all, with one cheap branch. The cond sits
    # inside the batching layers, on the whole batch's mask: JAX would make a cond on a
    # batched predicate a select that runs the stop at every step; over an explicit mesh
    # axis, that batching failed on the stop's values.
    # A passed stop hands on the earlier stop's scalar, so the next stop's question still
    # waits for that one (under vmap it may carry a batch axis this stop's scalar lacks).
    if token is not None:
        passed = token
    elif after is None or sizes:
        passed = jnp.zeros((), jnp.float32)
    else:
        passed = after
    stop = lambda: _stop_on_host(sending, levels, sizes, pred, operands, token, after)
    return jax.lax.cond(_any_element(pred) if sizes else pred, stop, lambda: passed)


def _any_element(mask: Any) -> Any:
    """Whether the batch's predicate holds for any element, taken from the mask the
    stop sends. Without the barrier XLA folds the two reductions into one of the
    element-wise test the user's predicate reduces, so it reduced that test twice at
    every step (a vmapped 4-kernel scan step: 11 kernels, 10 with it, 2-5% faster)."""
    return jnp.any(jax.lax.optimization_barrier(mask))


def _stop_on_host(sending: host_question.Sending, levels, sizes, pred, operands, token, after):
    """One host callback.

    A conditional stop is already inside the ``lax.cond`` on its predicate (see
    :func:`_host_callback`), so an unbatched one needs no further test and ships no
    predicate: every operand materialised for the callback costs XLA time on each loop
    step. A batched one ships the mask: the elements where the predicate holds.
    """
    site = cast(StagedSite, sending.site)  # stage_breakpoint made it of one
    batched_condition = site.conditional and bool(sizes)
    masks = [pred] if batched_condition else []

    def host(mask_and_state, values):  # holds no tracer: it outlives the trace
        mask = mask_and_state[0] if batched_condition else True
        site.on_host(levels, sizes, mask, values, int(mask_and_state[-1]))

    state = host_question.ask(sending, levels, sizes, pred if masks else None, operands, after)
    given = len(masks) + 1  # the mask and the state, ahead of the values
    # The values reach the host in host calls, as NumPy: all of them in one, or, for a
    # frame of very many (a big model's parameter tree), a chunk per lax.cond, gathered
    # under a ticket. Chunks keep XLA's compile time from growing with the square of the
    # operands of one cond (5,000 leaves: 1.2 s in one, 0.55 s in chunks of 250); each
    # chunk adds a skipped branch to a passed step. Not in a sharded jit, where the
    # ticket would be laid out again over the mesh at each chunk, at every step.
    size = max(len(operands), 1) if sending.sharded else OPENING_CHUNK
    sharded_ends = sending.sharded and jax_host_calls.EVERY_DEVICE_CALLS
    chunks = [range(i, min(i + size, len(operands))) for i in range(0, len(operands), size)]
    *first_chunks, last = chunks or [range(0)]

    def sent(earlier: Any, chunk: range) -> Any:
        """The ticket for the stop's mask, state and values so far, once ``chunk`` is sent."""
        values = sending.for_host(operands, chunk)
        if earlier is None:
            return jax_host_calls.host_call(_ARRIVED.keep, *masks, state, *values, results=host_question.STATE)[0]
        return jax_host_calls.host_call(_ARRIVED.add, earlier, *values, results=host_question.STATE)[0]

    def where_it_opens(then: Callable[[Any], Any], otherwise: Callable[[Any], Any], earlier: Any) -> Any:
        """``then(earlier)`` where the stop opens, else ``otherwise(earlier)``: one
        lax.cond, carrying the ticket of the chunks sent before, where there are any."""
        if earlier is None:
            return host_question.where_it_opens(state, lambda: then(None), lambda: otherwise(None))
        return host_question.where_it_opens(state, then, otherwise, earlier)

    ticket = None
    for chunk in first_chunks:
        passed = (lambda _: jnp.zeros((), jnp.int32)) if ticket is None else (lambda ticket: ticket)
        ticket = where_it_opens(functools.partial(sent, chunk=chunk), passed, ticket)

    def arrived(ticket: Any) -> tuple[list, list]:
        args = _ARRIVED.take(int(ticket))
        return args[:given], operand_reader.to_jax_all(args[given:])

    def open_stop(ticket):
        host(*arrived(ticket))

    # In a sharded jit the stop runs on the program's first device: one that ends the
    # computation there ends it on every device (_ENDED).
    if token is None:

        def call(earlier: Any) -> Any:
            if sharded_ends and not site.ordered:
                _ENDED.everywhere(
                    sending,
                    jax_host_calls.host_call(_ENDED.kept(open_stop), sent(earlier, last), results=host_question.STATE)[
                        0
                    ],
                )
            else:  # a debug callback after the host calls keeps the stop's place among the prints
                jax_routes.CALLBACK.original()(open_stop, sent(earlier, last), ordered=site.ordered)
            return jnp.zeros((), jnp.float32)

        # Known once the cond has run, the stop served: the next stop's question waits for it.
        return where_it_opens(call, lambda _: jnp.zeros((), jnp.float32), ticket)

    leaves, tree = jax.tree.flatten(token)

    def call_with_token(earlier: Any) -> Any:
        def host_with_token(ticket, *tokens):
            open_stop(ticket)
            return [np.array(t) for t in tokens]

        # The token goes through the host too: gathered on the way there, as the values
        # are, and given back its program layout after.
        host_token = [program_shardings.for_host(leaf) for leaf in leaves]
        results = tuple((tuple(jnp.shape(t)), np.dtype(jnp.result_type(t))) for t in host_token)
        if sharded_ends:
            out = jax_host_calls.host_call(
                _ENDED.kept_with(host_with_token, results),
                sent(earlier, last),
                *host_token,
                results=results + host_question.STATE,
            )
            _ENDED.everywhere(sending, out.pop())
        else:
            out = jax_host_calls.host_call(host_with_token, sent(earlier, last), *host_token, results=results)
        laid_out = map(program_shardings.restore_program_layout, out, leaves)
        return jax.tree.unflatten(tree, list(map(program_shardings.varying_as, laid_out, leaves)))

    return where_it_opens(call_with_token, lambda _: token, ticket)


#: The most operands one lax.cond takes to the host for a stop that opens (see _host_callback).
OPENING_CHUNK = 256


class _Arrivals:
    """An opening stop's values (JAX's copies, as NumPy arrays) between the host call that
    receives them and the debug callback that opens the stop, by ticket."""

    _LIMIT = 256  # a program that failed between the two calls leaves its ticket behind

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tickets = itertools.count()
        self._held: dict[int, list] = {}

    def keep(self, *args: Any) -> tuple[int]:
        with self._lock:
            ticket = next(self._tickets) % 2**31
            self._held[ticket] = list(args)
            while len(self._held) > self._LIMIT:
                del self._held[next(iter(self._held))]
        return (ticket,)

    def add(self, ticket: Any, *values: Any) -> tuple[int]:
        """More values for ``ticket`` (an opening stop's next chunk)."""
        with self._lock:
            self._held[int(ticket)].extend(values)
        return (int(ticket),)

    def take(self, ticket: int) -> list:
        with self._lock:
            return self._held.pop(ticket)


_ARRIVED = _Arrivals()


class _EndedStops:
    """What ended a sharded jit's stop (a quit, an interrupt, an error), kept by ticket
    (the last _LIMIT) for every device of the program to raise.

    The stop runs on the program's first device only. Raised there alone, it would end
    that device's program while the others went on to their next collective and waited
    for it for ever (a data-parallel train step's gradient sum): the process hangs. So
    the stop's call returns the ticket instead, the ticket is laid out on every device,
    and each device raises the same error in a call of its own, before any collective.
    """

    _LIMIT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self._held: dict[int, BaseException] = {}

    def _keep(self, error: BaseException) -> int:
        with self._lock:
            ticket = next(self._tickets) % 2**31 or next(self._tickets)
            self._held[ticket] = error
            while len(self._held) > self._LIMIT:
                del self._held[next(iter(self._held))]
        return ticket

    def kept(self, serve: Callable[[Any], None]) -> Callable[[Any], list]:
        """``serve(ticket)`` as a host call: 0, or the ticket of the error it raised."""

        def served(ticket: Any) -> list:
            serve(ticket)
            return []

        return self.kept_with(served, ())

    def kept_with(self, serve: Callable[..., list], results: Any) -> Callable[..., list]:
        """``serve(*args)``'s results and 0, or zeros and the ticket of the error it raised."""

        def call(*args: Any) -> list:
            try:
                return [*serve(*args), 0]
            except BaseException as error:
                return [*(np.zeros(shape, dtype) for shape, dtype in results), self._keep(error)]

        return call

    def everywhere(self, sending: host_question.Sending, ended: Any) -> None:
        """In the program: every device raises the error of ticket ``ended`` (none for 0)."""
        ended = sending.on_every_device(ended)
        jax.lax.cond(
            ended != 0,
            lambda ended: jax_host_calls.call_on_every_device(self._raise, ended),
            lambda ended: None,
            ended,
        )

    def _raise(self, device: int, ended: Any) -> None:
        with self._lock:
            error = self._held.get(int(ended))
        if error is None:
            raise DebuggerQuit("the stop ended the computation")
        if device == 0:
            raise error
        try:  # each device's own copy: the threads' tracebacks must not mix
            again = copy.copy(error)
        except Exception:
            again = error
        raise again.with_traceback(None)


_ENDED = _EndedStops()


def _zero_tangent(x):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.zeros_like(x)
    return np.zeros(x.shape, dtype=jax.dtypes.float0)


def _instantiate(tangent, primal):
    """A symbolic-zero tangent as an array of zeros (custom_jvp rules must return arrays)."""
    if tangent is None or isinstance(tangent, jax.custom_derivatives.SymbolicZero):
        return _zero_tangent(primal)
    return tangent
