"""How a traced breakpoint is staged into the program: the layers around its host callback.

From the outside in:

1. a ``lax.cond`` on the predicate (conditional breakpoints), so XLA skips the whole
   breakpoint with one cheap branch when it is false;
2. a ``custom_jvp`` layer that hides the breakpoint from differentiation (the stop sees
   forward-pass values; a token passes its tangent through);
3. one ``custom_vmap`` layer per vmap level, so the host receives whole batches and can
   name the element it stops at, stop only where the predicate holds, and skip the rest;
4. a ``lax.cond`` on the host's answers to "may this breakpoint stop?" (a
   ``jax.pure_callback`` without operands: a disabled breakpoint, or another process's)
   and, when it may, "does this stop need its values?" (one whose only operand is a
   scalar read from the values, see :func:`_step_marker`: ``continue all`` passes it), so
   a stop that will not open sends no value to the host: a callback's cost grows with
   its operands, each one copied to the host (on a GPU or TPU, a device-to-host
   transfer) before the callback runs;
5. the host callback itself (``jax.debug.callback``, or ``jax.pure_callback`` when a
   token is threaded through), which hands the batch to ``site.on_host``.
"""

from __future__ import annotations

from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from jaxdbg.runtime import jax_routes


class StagedSite(Protocol):
    """What staging needs of a breakpoint site (breakpoints._Site)."""

    ordered: bool
    conditional: bool

    def may_stop(self) -> bool:
        """Whether the breakpoint may stop at all in this call (asked without operands)."""

    def wants_values(self, stops: int) -> bool:
        """Whether the ``stops`` selected stops of one arrival need their values sent (asked
        on the host before any value is sent); False passes them, counted, there."""

    def on_host(self, levels: tuple, sizes: tuple[int, ...], pred: Any, operands: list) -> None:
        """Serve the stops of one host arrival; ``levels[i]`` says which batch levels
        operand ``i`` carries, ``sizes`` the size of each level, outermost first."""


def stage_breakpoint(site: StagedSite, pred: Any, operands: list, token: Any) -> Any:
    """Stage the breakpoint into the program being traced; the token's output (or None).

    ``pred`` is None for an unconditional breakpoint.
    """
    if pred is None:
        return _hidden_from_differentiation(site, jnp.asarray(True), operands, token)
    pred_value = jnp.any(jnp.asarray(pred).astype(bool))
    # The cond sits outside the batching and differentiation wrappers too:
    # XLA then skips the whole breakpoint with one cheap branch when false.
    if token is None:
        jax.lax.cond(pred_value, lambda: _hidden_from_differentiation(site, pred_value, operands, None), lambda: None)
        return None
    return jax.lax.cond(
        pred_value, lambda: _hidden_from_differentiation(site, pred_value, operands, token), lambda: token
    )


def _hidden_from_differentiation(site: StagedSite, pred: Any, operands: list, token: Any) -> Any:
    @jax.custom_jvp
    def stop(pred, operands, token):
        return _batching_layer(site, tuple(() for _ in operands), ())(pred, operands, token)

    @stop.defjvp
    def forward_values_only(primals, tangents):
        # The stop sees primal values; a token passes its tangent through unchanged,
        # so threading a differentiable value as the token keeps its gradient.
        out = stop(*primals)
        token_tangent = tangents[2]
        if primals[2] is None:
            return out, jax.tree.map(_zero_tangent, out)
        return out, jax.tree.map(_instantiate, token_tangent, primals[2])

    out = stop(pred, operands, token)
    return None if token is None else out


def _batching_layer(site: StagedSite, levels: tuple, sizes: tuple[int, ...]):
    """A breakpoint that knows which operands carry which of ``sizes`` batch levels;
    vmapping it adds one level outside the others."""

    @custom_vmap
    def stop(pred, operands, token):
        return _host_callback(site, levels, sizes, pred, operands, token)

    @stop.def_vmap
    def batched(axis_size, in_batched, pred, operands, token):
        pred_batched, ops_batched, token_batched = in_batched
        if not pred_batched:
            pred = jnp.broadcast_to(pred, (axis_size,) + jnp.shape(pred))
        # This level is outside all earlier ones, so it goes first.
        new_levels = tuple((b,) + lv for b, lv in zip(ops_batched, levels))
        out = _batching_layer(site, new_levels, (axis_size,) + sizes)(pred, operands, token)
        out_batched = token_batched if token is not None else False
        return out, out_batched

    return stop


def _host_callback(site: StagedSite, levels, sizes, pred, operands, token):
    """The unbatched view: one host callback.

    A conditional stop is already inside the outer ``lax.cond`` (see
    :func:`stage_breakpoint`), so an unbatched one needs no further test and ships no
    predicate: every operand materialised for the callback costs XLA time on each loop
    step. A batched one tests whether any element's predicate holds and ships the mask.
    """
    batched_condition = site.conditional and bool(sizes)
    mask = pred if batched_condition else None

    def host(mask, operands):
        site.on_host(levels, sizes, True if mask is None else mask, operands)

    answer = jax.ShapeDtypeStruct((), jnp.bool_)
    every = int(np.prod(sizes)) if sizes else 1

    def wants_values(_marker, mask):
        stops = every if mask is None else int(np.count_nonzero(mask))
        return np.bool_(site.wants_values(stops))

    def ask_at_this_step():
        # A question with a result costs more than a callback without one (about 120 us
        # on a CPU), so only an enabled breakpoint asks it at every step.
        return jax.pure_callback(wants_values, answer, _step_marker(operands), mask, vmap_method="sequential")

    # Without operands, so XLA may ask once per call rather than once per step: a
    # disabled breakpoint costs nothing per step (breakpoint_state.is_enabled).
    enabled = jax.pure_callback(lambda: np.bool_(site.may_stop()), answer)
    opens = jax.lax.cond(enabled, ask_at_this_step, lambda: jnp.bool_(False))

    if token is None:

        def call():
            jax_routes.CALLBACK.original()(host, mask, operands, ordered=site.ordered)

        jax.lax.cond(opens, call, lambda: None)
        return jnp.zeros((), jnp.float32)

    shapes = jax.tree.map(lambda t: jax.ShapeDtypeStruct(jnp.shape(t), jnp.result_type(t)), token)

    def call_with_token():
        def host_with_token(tok, mask, operands):
            host(mask, operands)
            return tok

        return jax.pure_callback(host_with_token, shapes, token, mask, operands)

    return jax.lax.cond(opens, call_with_token, lambda: token)


# How many operands the marker reads: the first ones are the innermost frame's (the loop
# body's carry and inputs), and each one read adds ops to trace and compile.
MARKER_OPERANDS = 8


def _step_marker(operands: list) -> Any:
    """One float32 scalar read from the operands (the sum of the first element of each of
    the first MARKER_OPERANDS numeric ones): the question "does this stop need its
    values?" depends on it, so XLA cannot hoist the question out of a loop whose values
    change from step to step, as it may hoist a callback without operands (asked once
    per call, its answer then held for every step). Its value is never read."""
    marker = jnp.zeros((), jnp.float32)
    read = 0
    for operand in operands:
        value = jnp.asarray(operand)
        if value.size == 0 or not (jnp.issubdtype(value.dtype, jnp.number) or value.dtype == jnp.bool_):
            continue  # PRNG keys and other extended dtypes have no element to read
        first = value.reshape(-1)[0]
        if jnp.iscomplexobj(first):
            first = jnp.real(first)
        marker = marker + first.astype(jnp.float32)
        read += 1
        if read == MARKER_OPERANDS:
            break
    return marker


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
