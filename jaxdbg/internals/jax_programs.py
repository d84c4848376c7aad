"""Reading and running a traced program's equations, for where a NaN came from.

jaxdbg finds the line that made a NaN by its equation in ``jax.make_jaxpr``'s
program, then runs the program up to it, or piece by piece, to read its value. The
jaxpr's equations are public; building a piece of a program from them needs two of
JAX's private classes, checked by ``tests/internals/test_internals.py`` through
:func:`names_in_use`.

Also the debug info JAX makes for the functions a stop stages (:func:`unnamed_arguments`).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, cast

from jaxdbg.internals.jax_api import _private
from jaxdbg.internals.jax_checkify_errors import traceback_frames

# -- the equations of a traced program, for where a NaN came from --


def program_equations(closed_jaxpr: Any) -> list[Any]:
    """Every equation of a traced program (``jax.make_jaxpr``), those of the programs
    nested in it (jit, scan and loop bodies, shard_map, custom rules) included."""
    found: list[Any] = []
    seen: set[int] = set()

    def walk(jaxpr: Any) -> None:
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)  # a ClosedJaxpr holds its Jaxpr
        if id(jaxpr) in seen or not hasattr(jaxpr, "eqns"):
            return
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            found.append(eqn)
            for value in eqn.params.values():
                for item in value if isinstance(value, (tuple, list)) else (value,):
                    if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                        walk(item)

    walk(closed_jaxpr)
    return found


def equation_primitive(eqn: Any) -> str:
    return str(getattr(eqn.primitive, "name", eqn.primitive))


def equation_frames(eqn: Any) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of where the equation was traced, innermost first."""
    return traceback_frames(getattr(eqn.source_info, "traceback", None))


def equation_is_backward(eqn: Any) -> bool:
    """Whether JAX made the equation by transposing (the backward pass of a gradient):
    its name stack reads ``transpose(jvp(...))``."""
    return "transpose(" in str(getattr(eqn.source_info, "name_stack", ""))


# -- a traced program run up to one of its equations: a value made inside a jit --
# Equations inside these are the call's own, run once with its inputs: the program up
# to one of them is the same program with the call inlined. Loops, conds and maps run
# their bodies other than once (or per device) and are not entered.
_INLINED_CALLS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "remat", "checkpoint"})
_CALL_BODIES = ("jaxpr", "call_jaxpr")


def _call_body(eqn: Any) -> Any | None:
    """The ``(jaxpr, consts)`` that a call equation runs, when it is inlined."""
    if equation_primitive(eqn) not in _INLINED_CALLS:
        return None
    for key in _CALL_BODIES:
        body = eqn.params.get(key)
        if body is not None and hasattr(getattr(body, "jaxpr", body), "eqns"):
            return (body.jaxpr, list(body.consts)) if hasattr(body, "consts") else (body, [])
    return None


def path_to_equation(closed_jaxpr: Any, found: Callable[[Any], bool]) -> list[Any] | None:
    """The equations from the program's top to the first (in program order) that
    ``found`` accepts, entering only inlined calls; None when there is none."""

    def walk(jaxpr: Any) -> list[Any] | None:
        for eqn in jaxpr.eqns:
            if found(eqn):
                return [eqn]
            body = _call_body(eqn)
            if body is not None:
                inner = walk(body[0])
                if inner is not None:
                    return [eqn, *inner]
        return None

    return walk(closed_jaxpr.jaxpr)


def _bind(eqn: Any, values: list[Any]) -> list[Any]:
    """The equation's primitive applied to ``values``, as ``eval_jaxpr`` applies it."""
    bound = eqn.primitive.get_bind_params(eqn.params)
    if isinstance(bound, tuple):  # JAX < 0.8: (subfuns, params)
        subfuns, params = bound
    else:  # later: the params, with the subfuns among them
        subfuns, params = (), bound
    context = getattr(getattr(eqn, "ctx", None), "manager", None)
    with context if context is not None else contextlib.nullcontext():
        outs = eqn.primitive.bind(*subfuns, *values, **params)
    return list(outs) if eqn.primitive.multiple_results else [outs]


def run_up_to(closed_jaxpr: Any, path: list[Any], flat_args: list[Any]) -> list[Any]:
    """The outputs of the last equation of ``path`` when the program runs on
    ``flat_args`` (traceable: run it inside a ``jax.jit``)."""

    def read(env: dict, var: Any) -> Any:
        return var.val if type(var).__name__ == "Literal" else env[var]

    def run(jaxpr: Any, consts: list[Any], args: list[Any], depth: int) -> list[Any]:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            values = [read(env, v) for v in eqn.invars]
            if eqn is path[depth] and depth + 1 < len(path):
                body, body_consts = cast(Any, _call_body(eqn))
                return run(body, body_consts, values, depth + 1)
            outs = _bind(eqn, values)
            if eqn is path[depth]:
                return outs
            env.update(zip(eqn.outvars, outs))
        raise ValueError("the equation is not in the program")

    return run(closed_jaxpr.jaxpr, list(closed_jaxpr.consts), list(flat_args), 0)


# -- a program run piece by piece, each shard_map a piece of its own --
# checkify's rule for shard_map hands the error so far into the body replicated and
# gives it back with a leading axis of devices; a check after that (a second shard_map,
# as a gradient's backward pass makes, or any checked primitive) then fails to trace
# ("select cases must have the same shapes"). Run piece by piece, each piece checked
# on its own starts from a fresh error. The pieces are jax.extend.core Jaxprs of the
# program's own equations, so each keeps its traceback and name stack (the pass).
_DropVar = _private("jax._src.core", "DropVar")
_DebugInfo = _private("jax._src.core", "DebugInfo")
_JIT_CALLS = ("pjit", "jit")  # the jit call primitive's name: pjit before 0.8, jit after


def _is_jit_call(eqn: Any) -> bool:
    return equation_primitive(eqn) in _JIT_CALLS and hasattr(eqn.params.get("jaxpr"), "jaxpr")


def holds_shard_map(closed_jaxpr: Any) -> bool:
    return any(equation_primitive(eqn) == "shard_map" for eqn in program_equations(closed_jaxpr))


def _piece(eqns: list[Any]) -> tuple[Any, list[Any], list[Any]]:
    """The closed program of these equations: of the values they read and do not make,
    to every value they make; with those inputs and outputs."""
    from jax.extend import core as jex_core

    made: dict[Any, None] = {}
    needed: dict[Any, None] = {}
    for eqn in eqns:
        for var in eqn.invars:
            if isinstance(var, jex_core.Var) and var not in made:
                needed[var] = None
        for var in eqn.outvars:
            if not isinstance(var, _DropVar):
                made[var] = None
    effects = frozenset().union(*(eqn.effects for eqn in eqns))
    info = _DebugInfo(
        "jaxdbg's NaN location",
        "a piece of the program",
        tuple(f"in{i}" for i in range(len(needed))),
        tuple(f"out{i}" for i in range(len(made))),
    )
    jaxpr = jex_core.Jaxpr([], list(needed), list(made), eqns, effects, info)
    return jex_core.ClosedJaxpr(jaxpr, []), list(needed), list(made)


def run_in_pieces(
    closed_jaxpr: Any, args: list[Any], run_piece: Callable[[Any, list[Any], bool], list[Any] | None]
) -> bool:
    """Run a traced program (``jax.make_jaxpr``) on ``args`` (its flat inputs) piece by
    piece: each shard_map (also one inside a jit call, which is opened) alone, the
    equations between them together. ``run_piece(closed, inputs, backward)`` runs one
    piece (``backward``: a shard_map JAX made by transposing, or a piece of a jit call's
    body it made so, the backward pass, which checkify's checks inside cannot tell)
    and returns its outputs, or None to stop
    there. Whether it ran to the end."""
    from jax.extend import core as jex_core

    def run(jaxpr: Any, consts: list[Any], inputs: list[Any], backward: bool) -> list[Any] | None:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, inputs))
        pending: list[Any] = []

        def read(atom: Any) -> Any:
            return env[atom] if isinstance(atom, jex_core.Var) else atom.val

        def flush(in_backward_pass: bool = backward) -> bool:  # a body's name stack is its own
            if not pending:
                return True
            piece, needed, made = _piece(pending)
            pending.clear()
            outs = run_piece(piece, [read(v) for v in needed], in_backward_pass)
            if outs is None:
                return False
            env.update(zip(made, outs))
            return True

        for eqn in jaxpr.eqns:
            if _is_jit_call(eqn) and holds_shard_map(eqn.params["jaxpr"]):
                if not flush():
                    return None
                inner = eqn.params["jaxpr"]
                outs = run(
                    inner.jaxpr,
                    list(inner.consts),
                    [read(v) for v in eqn.invars],
                    backward or equation_is_backward(eqn),
                )
                if outs is None:
                    return None
                env.update((v, out) for v, out in zip(eqn.outvars, outs) if not isinstance(v, _DropVar))
            elif equation_primitive(eqn) == "shard_map":
                if not flush():
                    return None
                pending.append(eqn)
                if not flush(backward or equation_is_backward(eqn)):
                    return None
            else:
                pending.append(eqn)
        if not flush():
            return None
        return [read(v) for v in jaxpr.outvars]

    return run(closed_jaxpr.jaxpr, list(closed_jaxpr.consts), list(args), False) is not None


# -- equations a gradient's linearization made: the derivative of a line --
# Under jax.grad the forward pass is traced as a JVP, so its equations all read
# ``jvp(...)`` in their name stack: the primal ones (sqrt) and the ones the primitive's
# derivative rule added (sqrt's 0.5 / sqrt(x), a div). The name stack cannot tell them
# apart; where their values go can: a primal value reaches the function's own result
# (the loss, which grad traces and drops), a derivative's reaches only the backward
# pass. Bodies of jit calls and shard_maps are followed (their name stacks nest).


def _inlined(closed_jaxpr: Any) -> list[tuple[Any, str, list[Any], list[Any]]]:
    """``(eqn, name stack, inputs, outputs)`` of every equation, jit and shard_map
    bodies opened in place; a value is named by its Var or a stand-in, and a body's
    inputs and outputs by those of the equation that calls it."""
    from jax.extend import core as jex_core

    found: list[tuple[Any, str, list[Any], list[Any]]] = []

    def walk(jaxpr: Any, stack: str, rename: dict[Any, Any]) -> None:
        def name(atom: Any) -> Any:
            return rename.get(atom, atom) if isinstance(atom, jex_core.Var) else None

        for eqn in jaxpr.eqns:
            inner = eqn.params.get("jaxpr") if isinstance(eqn.params, dict) else None
            body: Any = getattr(inner, "jaxpr", inner)
            here = f"{stack}/{eqn.source_info.name_stack}"
            if (
                equation_primitive(eqn) in (*_JIT_CALLS, "shard_map")
                and hasattr(body, "eqns")
                and len(body.invars) == len(eqn.invars)
                and len(body.outvars) == len(eqn.outvars)
            ):
                inner_names = {v: name(a) for v, a in zip(body.invars, eqn.invars)}
                outer_outs = [name(v) for v in eqn.outvars]
                # A body's result is the equation's: a stand-in reads the body's value.
                for v, out in zip(body.outvars, outer_outs):
                    if isinstance(v, jex_core.Var) and v not in inner_names and out is not None:
                        inner_names[v] = out
                    elif out is not None:  # passed through or a literal: an identity step
                        source = inner_names.get(v) if isinstance(v, jex_core.Var) else None
                        found.append((eqn, here, [source], [out]))
                walk(body, here, inner_names)
                continue
            # A dropped output is a value nothing reads: a stand-in of its own.
            found.append(
                (
                    eqn,
                    here,
                    [name(a) for a in eqn.invars],
                    [object() if isinstance(v, _DropVar) else name(v) for v in eqn.outvars],
                )
            )

    walk(closed_jaxpr.jaxpr, "", {})
    return found


def derivative_equations(closed_jaxpr: Any) -> list[Any]:
    """The equations a gradient's linearization added to its forward pass (a
    primitive's derivative), found by where their values go (see above)."""
    from jax.extend import core as jex_core

    eqns = _inlined(closed_jaxpr)
    forward = [i for i, (_, stack, _, _) in enumerate(eqns) if "jvp(" in stack and "transpose(" not in stack]
    forward_set = set(forward)
    read: set[Any] = {v for _, _, ins, _ in eqns for v in ins if v is not None}
    made_by = {v: i for i, (_, _, _, outs) in enumerate(eqns) for v in outs if v is not None}
    results = {v for v in closed_jaxpr.jaxpr.outvars if isinstance(v, jex_core.Var)}
    # The function's own result: forward values nothing reads, or the program returns;
    # every forward equation whose value leads there is the forward pass proper.
    pending = [i for i in forward if any(v not in read or v in results for v in eqns[i][3])]
    if not pending:
        return []  # no result of the forward pass is left to tell by
    primal = set(pending)
    while pending:
        for v in eqns[pending.pop()][2]:
            maker = made_by.get(v)
            if maker in forward_set and maker not in primal:
                primal.add(maker)
                pending.append(maker)
    return [eqns[i][0] for i in forward if i not in primal]


# -- an internal function's arguments left unnamed --
_debug_info = _private("jax._src.api_util", "debug_info")
_DEBUG_INFO_ATTRIBUTE = "__fun_debug_info__"  # what api_util.debug_info returns as it is


def unnamed_arguments(traced_for: str) -> Callable[[Callable], Callable]:
    """A decorator: the function, which JAX traces for ``traced_for`` ("custom_jvp fun",
    ...), given debug info without argument names, so JAX does not name its arguments
    at each call.

    JAX names every leaf of the arguments (``operands[4117]``) when a custom_jvp or
    custom_vmap function is called, a few µs a leaf; a stop passes a frame's every leaf
    through four such functions (5,000 leaves: 0.1 to 0.3 s of tracing). The names are
    only read in JAX's messages about these internal functions."""

    def leave_unnamed(fun: Callable) -> Callable:
        if _debug_info is None or not hasattr(_DebugInfo, "assert_arg_names"):
            return fun  # a JAX whose debug info must name every argument
        try:
            unnamed = _debug_info(traced_for, fun, (), {})._replace(arg_names=None)
            setattr(fun, _DEBUG_INFO_ATTRIBUTE, unnamed)
        except Exception:  # named as usual
            pass
        return fun

    return leave_unnamed


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    return {
        "jax._src.core.DropVar, DebugInfo": _DropVar is not None and _DebugInfo is not None,
        "jax._src.api_util.debug_info": _debug_info is not None,
    }
