"""Where a NaN (or an Inf) came from: the first primitive that produced it, its user
line, the device, and whether it ran in the backward pass.

JAX's ``jax_debug_nans`` re-runs a failing jitted call op by op, which does not
reach into ``pmap`` and sharded computations, and finds a gradient's NaN without a
Python line. checkify's ``nan_checks`` instead checks every primitive inside the
compiled program, on every device, under jit, pmap and shard_map alike, and keeps
the traceback of the primitive that first made a NaN on each device (jaxdbg's
checkify picks the user's frames out of it). An equation that JAX made by
transposing is the backward pass of the forward line that its traceback names: the
checks say so in their message, or else the traced program's equations at that line
tell it.

checkify has no Inf check; for an Inf its NaN checks are turned to Infs
(:func:`jax_nan_checks.located_checks`), and the same run finds the first primitive whose
output holds an Inf, with the same locations and devices. The checks also name a
primitive that ran in a transposed equation (the backward pass) in their message.

A program that holds a ``shard_map`` (a gradient of one holds two: the forward one
and its transpose) is checked piece by piece instead, each shard_map alone
(:func:`jax_programs.run_in_pieces`): checkify checks nothing after a shard_map. A piece
that is a transposed shard_map is the backward pass.

Under a gradient the forward pass is traced as a JVP: an equation that the line's
derivative rule added there (sqrt's ``0.5 / sqrt(x)``, Inf at 0) is told from the
line's own by where its value goes (:func:`jax_programs.derivative_equations`), and the
origin says it was the line's derivative.

This costs nothing until a NaN was found: the failing call is traced and compiled
once more, with the checks, and run on the same inputs.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

import jax
from jax.experimental import checkify as jax_checkify

from jaxdbg.capture import checkify_errors
from jaxdbg.internals import jax_nan_checks, jax_programs
from jaxdbg.runtime import jax_routes

# Primitives that only pass on a NaN made elsewhere (a sum over devices of one NaN).
_COLLECTIVES = frozenset(
    {
        "psum",
        "pmax",
        "pmin",
        "pmean",
        "all_gather",
        "all_to_all",
        "ppermute",
        "psum_scatter",
        "reduce_scatter",
        "pbroadcast",
        "psum_invariant",
    }
)
_PRIMITIVE = re.compile(r"primitive: (\w+)")


@dataclasses.dataclass(frozen=True)
class NanOrigin:
    """The first primitive that made a NaN (or an Inf), where in the user's code, and on
    which devices."""

    primitive: str
    frames: tuple[checkify_errors.SourceFrame, ...]  # the user's, innermost first
    # Positions on the mapped axis (pmap / shard_map), in order; under a sharded jit the
    # JAX ids of the devices JAX's re-run found it on (nan_watch.with_rerun_devices).
    devices: tuple[int, ...] = ()
    backward: bool = False
    value: str = "NaN"  # or "Inf"
    # In a jax.distributed job: whether the first of ``devices`` is one of this process's
    # (every process locates the same failure; only that device's process stops).
    here: bool = True
    # Made with the forward pass by the line's derivative, while a gradient linearizes
    # it (sqrt's derivative at 0); never with ``backward``.
    derivative: bool = False

    @property
    def where(self) -> checkify_errors.SourceFrame | None:
        return self.frames[0] if self.frames else None

    def describe(self) -> str:
        """``NaN made by mul in the backward pass (the gradient) of this line; also on
        device 5`` (the stop's banner names the first device itself)."""
        text = f"{self.value} made by {self.primitive}"
        if self.backward:
            text += " in the backward pass (the gradient) of this line"
        elif self.derivative:
            text += " in the derivative (the gradient) of this line"
        if len(self.devices) > 1:
            others = ", ".join(str(d) for d in self.devices[1:])
            text += f"; also on device{'s' if len(self.devices) > 2 else ''} {others}"
        return text


def _primitive_of(message: str) -> str:
    match = _PRIMITIVE.search(message)
    return match.group(1) if match else "?"


def without_jax_nan_checks() -> Any:
    """JAX's own flag off while checkify looks (it would raise before checkify can say)."""
    import contextlib

    stack = contextlib.ExitStack()
    stack.enter_context(jax.debug_nans(False))
    stack.enter_context(jax.debug_infs(False))
    return stack


def nonfinite_in(out: Any, nans: bool, infs: bool) -> str | None:
    """``"nan"`` or ``"inf"`` when a float array of ``out`` holds one (of the kinds asked
    for), as JAX's checks of a call's output would find it; else None. Every process of a
    job computes the same reductions, so it may run on arrays spread over processes."""
    import jax.numpy as jnp

    floats = [
        leaf
        for leaf in jax.tree_util.tree_leaves(out)
        if isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.inexact)
    ]
    for kind, wanted, test in (("nan", nans, jnp.isnan), ("inf", infs, jnp.isinf)):
        if wanted and any(bool(test(leaf).any()) for leaf in floats):
            return kind
    return None


def locate(
    fun: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    *,
    pmap_options: dict[str, Any] | None = None,
    infs: bool = False,
) -> NanOrigin | None:
    """Run ``fun`` on these inputs with checkify's NaN checks (``infs``: turned to Infs):
    a jitted function as it is; with ``pmap_options``, the function a
    ``jax.pmap(fun, **pmap_options)`` maps, checked on each device (checkify inside the
    pmap, so every JAX reports the device). The origin of the first NaN (Inf), or None
    when none appears (one a primitive checkify does not check made, or one that does
    not come back on a second run)."""
    errors = jax_nan_checks.located_checks(jax_checkify.nan_checks, infs)
    checked = checkify_errors.checkify(fun, errors=errors)
    program = fun
    if pmap_options is not None:
        pmap = jax_routes.PMAP.original()
        checked, program = pmap(checked, **pmap_options), pmap(fun, **pmap_options)
    with without_jax_nan_checks():
        traced = _traced(program, args, kwargs)
        in_backward_pass = False
        if pmap_options is None and traced is not None and jax_programs.holds_shard_map(traced):
            failed = _checked_in_pieces(traced, args, kwargs, errors)
            if failed is None:
                return None
            err, in_backward_pass = failed
        else:
            err, _ = checked(*args, **kwargs)
        held_here = _positions_held_here(err)
        err = _readable_here(err)
        sites = checkify_errors.error_sites(err)
        if not sites:
            return None
        made = [s for s in sites if _primitive_of(s.message) not in _COLLECTIVES] or sites
        first = made[0]
        primitive = _primitive_of(first.message)
        devices = tuple(
            int(s.index[0])
            for s in made
            if s.index and _primitive_of(s.message) == primitive and s.where == first.where
        )
        at_line = _equations_at(traced, primitive, first.where)
        backward = (
            in_backward_pass
            or jax_nan_checks.BACKWARD_PASS in first.message
            or (bool(at_line) and all(jax_programs.equation_is_backward(e) for e in at_line))
        )
        derivative = not backward and bool(at_line) and _all_derivative(traced, at_line)
    here = held_here is None or not devices or devices[0] in held_here
    return NanOrigin(primitive, first.frames, devices, backward, "Inf" if infs else "NaN", here, derivative)


def _traced(fun: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """The program ``fun`` runs on these inputs (``jax.make_jaxpr``), or None. One that
    holds a shard_map is checked piece by piece (checkify checks nothing after a
    shard_map: see :func:`jax_programs.run_in_pieces`); its equations tell the pass."""
    try:
        return jax.make_jaxpr(fun)(*args, **kwargs)
    except Exception:  # a function make_jaxpr cannot trace (static arguments): checked whole
        return None


def _checked_in_pieces(program: Any, args: tuple, kwargs: dict, errors: frozenset) -> tuple[Any, bool] | None:
    """The checks' error of the first piece of the program (each shard_map alone, the
    equations between them together) in which one failed, and whether that piece is
    a shard_map of the backward pass; None when none failed."""
    from jax.extend import core as jex_core

    jit = jax_routes.JIT.original()
    failed: list[tuple[Any, bool]] = []

    def run_piece(piece: Any, inputs: list[Any], backward: bool) -> list[Any] | None:
        err, outs = checkify_errors.checkify(jit(jex_core.jaxpr_as_fun(piece)), errors=errors)(*inputs)
        if checkify_errors.error_sites(_readable_here(err)):
            failed.append((err, backward))
            return None
        return list(outs)

    jax_programs.run_in_pieces(program, jax.tree_util.tree_leaves((args, kwargs)), run_piece)
    return failed[0] if failed else None


def _spread_leaves(err: Any) -> list[Any]:
    """The error's arrays that lie partly on other processes' devices (a jax.distributed
    job's program mapped over every process's devices)."""
    return [
        leaf for leaf in jax.tree_util.tree_leaves(err) if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable
    ]


def _positions_held_here(err: Any) -> frozenset[int] | None:
    """The positions on the mapped axis whose checks ran on this process's devices;
    None when every one did."""
    spread = [leaf for leaf in _spread_leaves(err) if leaf.ndim]
    if not spread:
        return None
    size = spread[0].shape[0]
    return frozenset(i for shard in spread[0].addressable_shards for i in range(*shard.index[0].indices(size)))


def _readable_here(err: Any) -> Any:
    """The error with every device's checks readable in this process. In a job each
    process gathers the arrays spread over the processes; they all reach this (each
    raised the same error for the same call), in the same order, as a collective needs."""
    if not _spread_leaves(err):
        return err
    from jax.experimental import multihost_utils

    leaves, tree = jax.tree_util.tree_flatten(err)
    gathered = [
        multihost_utils.process_allgather(leaf, tiled=True)
        if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable
        else leaf
        for leaf in leaves
    ]
    return jax.tree_util.tree_unflatten(tree, gathered)


def made_at(primitive: str, where: checkify_errors.SourceFrame) -> Callable[[Any], bool]:
    """Whether an equation is one of ``primitive`` traced at the user's line ``where``."""

    def found(eqn: Any) -> bool:
        return jax_programs.equation_primitive(eqn) == primitive and any(
            f == where.filename and line == where.lineno for f, line, _ in jax_programs.equation_frames(eqn)
        )

    return found


def _equations_at(program: Any, primitive: str, where: checkify_errors.SourceFrame | None) -> list[Any]:
    """The equations of ``primitive`` traced at ``where``."""
    if program is None or where is None:
        return []
    return [eqn for eqn in jax_programs.program_equations(program) if made_at(primitive, where)(eqn)]


def _all_derivative(program: Any, equations: list[Any]) -> bool:
    """Whether these are all equations a gradient's linearization added (a primitive's
    derivative, computed with the forward pass)."""
    made = {id(eqn) for eqn in jax_programs.derivative_equations(program)}
    return all(id(eqn) in made for eqn in equations)
