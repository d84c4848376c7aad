"""What a replay calls, and on what: a captured frame's function and its arguments.

A stop keeps each frame's code object and its locals with concrete values (the
arguments among them: under vmap one batch element's, under pmap or shard_map one
device's, inside a scan body one iteration's). The function is made again from the
code, the frame's globals and its closure values; the arguments are the locals of
the argument names. That is only right while no argument was rebound before the
stop, which the bytecode tells: a store to an argument before the instruction the
frame was at (or in a loop that reaches it) means the value at the stop is not the
value the function was called with, so the replay is refused with the name.

A stop under pmap or shard_map has its values on the host's first device; the
replay runs on the stopped device (:func:`replay_device`), its inputs put there.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import dis
import inspect
import sys
import types
from typing import Any, Callable

import jax
import numpy as np

from jaxdbg.engine.frames import Frame, Unavailable
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import linen_modules
from jaxdbg.runtime.guarded_calls import guarded

_STORES = frozenset(
    {
        "STORE_FAST",
        "STORE_DEREF",
        "DELETE_FAST",
        "DELETE_DEREF",
        "STORE_FAST_STORE_FAST",
        "STORE_FAST_LOAD_FAST",
        "STORE_FAST_MAYBE_NULL",
    }
)
_NOT_REPLAYABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class ReplayRefused(Exception):
    """Why a frame cannot be replayed; the message is said to the user as it is."""


@dataclasses.dataclass
class ReplayCall:
    """A function and the arguments to call it with again."""

    function: Callable[..., Any]
    args: list[Any]
    kwargs: dict[str, Any]
    names: list[str]  # the argument names, in the order of the signature
    given: frozenset[str] = frozenset()  # those the user passed (replay x=...)

    def call(self) -> Any:
        return self.function(*self.args, **self.kwargs)


def argument_names(code: types.CodeType) -> tuple[list[str], str | None, list[str], str | None]:
    """(positional, *args name, keyword-only, **kwargs name) of ``code``."""
    names = code.co_varnames
    positional = list(names[: code.co_argcount])
    keyword_only = list(names[code.co_argcount : code.co_argcount + code.co_kwonlyargcount])
    at = code.co_argcount + code.co_kwonlyargcount
    varargs = names[at] if code.co_flags & inspect.CO_VARARGS else None
    if varargs is not None:
        at += 1
    varkw = names[at] if code.co_flags & inspect.CO_VARKEYWORDS else None
    return positional, varargs, keyword_only, varkw


def _stored_names(instruction: dis.Instruction) -> tuple[str, ...]:
    value = instruction.argval
    if instruction.opname == "STORE_FAST_LOAD_FAST":  # (stored, loaded)
        return (value[0],) if isinstance(value, tuple) else (value,)
    return tuple(value) if isinstance(value, tuple) else (value,)


def rebound_arguments(code: types.CodeType, stopped_at: int) -> list[str]:
    """Arguments that the body may have assigned (or deleted) before reaching the
    instruction at offset ``stopped_at``: a store at an earlier offset, or a later
    store inside a loop whose backward jump reaches back to it."""
    positional, varargs, keyword_only, varkw = argument_names(code)
    arguments = set(positional + keyword_only + [n for n in (varargs, varkw) if n])
    instructions = list(dis.get_instructions(code))
    loops = [
        (target, i.offset)
        for i in instructions
        if (target := _backward_target(i)) is not None and target <= stopped_at <= i.offset
    ]
    rebound: list[str] = []
    for i in instructions:
        if i.opname not in _STORES:
            continue
        before = i.offset < stopped_at
        in_loop = any(start <= i.offset <= end for start, end in loops)
        if before or in_loop:
            for name in _stored_names(i):
                if name in arguments and name not in rebound:
                    rebound.append(name)
    return rebound


def _backward_target(instruction: dis.Instruction) -> int | None:
    """Where a jump goes, when it goes backwards (a loop's end)."""
    if instruction.opcode not in dis.hasjrel and instruction.opcode not in dis.hasjabs:
        return None
    target = instruction.argval
    return target if isinstance(target, int) and target <= instruction.offset else None


def _unavailable_in(value: Any) -> Unavailable | None:
    """The first value in ``value`` (a pytree) that did not reach the host, if any."""
    if isinstance(value, Unavailable):
        return value
    leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda v: isinstance(v, Unavailable))
    return next((leaf for leaf in leaves if isinstance(leaf, Unavailable)), None)


def _function_of(frame: Frame) -> Callable[..., Any]:
    code = frame.code
    assert code is not None
    cells = []
    for name in code.co_freevars:
        if name not in frame.locals:
            raise ReplayRefused(f"the closure variable {name!r} of {frame.function} was not captured")
        value = frame.locals[name]
        missing = _unavailable_in(value)
        if missing is not None:
            raise ReplayRefused(f"the closure variable {name!r} of {frame.function} is {missing!r}")
        cells.append(types.CellType(value))
    return types.FunctionType(code, frame.globals, code.co_name, None, tuple(cells))


def parse_given(text: str, evaluate: Callable[[str], Any]) -> dict[str, Any]:
    """``x=..., key=...`` as keyword arguments, each value evaluated by ``evaluate``
    (in the selected frame)."""
    text = text.strip()
    if not text:
        return {}
    try:
        call = ast.parse(f"_({text})", mode="eval").body
    except SyntaxError:
        raise ReplayRefused(f"replay takes name=value arguments (replay x=x * 2, key=k), not {text!r}") from None
    assert isinstance(call, ast.Call)
    if call.args or any(k.arg is None for k in call.keywords):
        raise ReplayRefused("replay takes only name=value arguments (replay x=x * 2, key=k)")
    return {
        k.arg: evaluate(ast.get_source_segment(f"_({text})", k.value) or "") for k in call.keywords if k.arg is not None
    }


def replay_call(frame: Frame, given: dict[str, Any] | None = None) -> ReplayCall:
    """The call that replays ``frame``'s function; raises ReplayRefused saying why not."""
    given = dict(given or {})
    code = frame.code
    if code is None:
        raise ReplayRefused(
            f"jaxdbg holds only the line of {frame.function} at {frame.location}, not its function and arguments"
        )
    if frame.is_module_code:
        raise ReplayRefused(
            f"{frame.function} at {frame.location} is not a function's frame "
            "(replay runs a function again; 'up' / 'down' select another frame)"
        )
    if code.co_flags & _NOT_REPLAYABLE:
        raise ReplayRefused(f"{frame.function} is a generator or coroutine; replay runs plain functions")
    positional, varargs, keyword_only, varkw = argument_names(code)
    names = positional + ([varargs] if varargs else []) + keyword_only + ([varkw] if varkw else [])
    unknown = [n for n in given if n not in names]
    if unknown:
        raise ReplayRefused(
            f"{frame.function} has no argument {unknown[0]!r} (its arguments: {', '.join(names) or 'none'})"
        )
    rebound = [n for n in rebound_arguments(code, frame.instruction) if n not in given]
    if rebound:
        which = ", ".join(repr(n) for n in rebound)
        raise ReplayRefused(
            f"{frame.function} assigns its argument{'s' if len(rebound) > 1 else ''} {which} before "
            f"line {frame.lineno}, so the value{'s' if len(rebound) > 1 else ''} at the stop "
            f"{'are' if len(rebound) > 1 else 'is'} not what it was called with; pass "
            f"{'them' if len(rebound) > 1 else 'it'}: replay {rebound[0]}=..."
        )
    values = {}
    for name in names:
        if name in given:
            values[name] = given[name]
            continue
        if name not in frame.locals:
            raise ReplayRefused(
                f"the argument {name!r} of {frame.function} is gone from the frame "
                f"(deleted before the stop); pass it: replay {name}=..."
            )
        value = frame.locals[name]
        missing = _unavailable_in(value)
        if missing is not None:
            raise ReplayRefused(f"the argument {name!r} of {frame.function} is {missing!r}; pass it: replay {name}=...")
        values[name] = value
    args = [values[n] for n in positional] + list(values[varargs] if varargs else ())
    kwargs = {n: values[n] for n in keyword_only}
    if varkw:
        kwargs.update(values[varkw])
    function = _function_of(frame)
    method = args[0].method_for_replay(code) if args and type(args[0]) is linen_modules.LinenModule else None
    if method is not None:  # a Linen Module's method runs as the Module's, on its variables at the stop
        function, args = method, args[1:]
    args, kwargs = _copies(args, kwargs)
    return ReplayCall(function, args, kwargs, names, frozenset(given))


def _copies(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Copies of the arguments, which the replayed function may change in place (a list
    it appends to, ``opt.update(model, grads)`` on Flax NNX objects) while the stop keeps
    its own. JAX arrays, immutable, are shared, NNX objects' arrays too. An argument that
    cannot be copied (a lock, an open file, a device) is the stop's own, as a call would
    pass it."""
    try:
        leaves = jax.tree_util.tree_leaves((args, kwargs))
    except Exception:  # a user pytree whose flatten fails
        leaves = []
    shared: dict[int, Any] = {id(leaf): leaf for leaf in leaves if isinstance(leaf, jax.Array)}
    shared.update(_nnx_copies([*args, *kwargs.values()]))
    try:
        return copy.deepcopy((args, kwargs), dict(shared))
    except Exception:  # one argument cannot be copied: each of the others still is
        return [_copy(a, shared) for a in args], {k: _copy(v, shared) for k, v in kwargs.items()}


def _nnx_copies(values: list[Any]) -> dict[int, Any]:
    """The Flax NNX objects among ``values`` (a Module, an Optimizer) copied over the
    same arrays, by id: NNX's own deepcopy would copy every array of a model, and
    copying them together keeps the references they share (a Module held by another).
    Empty where NNX is not imported or cannot split them (then deepcopy copies them)."""
    nnx: Any = sys.modules.get("flax.nnx")
    is_node = getattr(getattr(nnx, "graph", None), "is_graph_node", None)
    if is_node is None:
        return {}

    def a_node(value: Any) -> bool:
        return guarded(lambda: bool(is_node(value)), lambda e: False)

    nodes = [value for value in values if a_node(value)]
    if not nodes:
        return {}

    def split_and_merge() -> tuple:
        graphdef, state = nnx.split(tuple(nodes))
        # Variables made again from the state's leaves: new objects over the same arrays.
        return tuple(nnx.merge(graphdef, jax.tree_util.tree_map(lambda leaf: leaf, state)))

    copies = guarded(split_and_merge, lambda e: ())
    return {id(node): node_copy for node, node_copy in zip(nodes, copies)}


def _copy(value: Any, shared: dict[int, Any]) -> Any:
    try:  # a memo of its own: a failed copy leaves its half-made containers in the memo
        return copy.deepcopy(value, dict(shared))
    except Exception:
        return value


def replay_device(info: StopInfo) -> Any:
    """The device a replay of this stop runs on: under pmap / shard_map the stopped
    device (the mesh's, as traced; else pmap's order, the local devices'); None
    elsewhere (the default device)."""
    if info.device is None:
        return None
    if info.placed_on is not None:
        return info.placed_on
    local = jax.local_devices()
    return local[info.device] if info.device < len(local) else None


def placed_on(call: ReplayCall, device: Any) -> ReplayCall:
    """``call`` with its array arguments put on ``device``."""

    def put(value: Any) -> Any:
        return jax.device_put(value, device) if isinstance(value, (jax.Array, np.ndarray, np.generic)) else value

    def put_all(tree: Any) -> Any:
        try:
            return jax.tree_util.tree_map(put, tree)
        except Exception:  # a user pytree whose flatten fails: left as it is
            return tree

    return dataclasses.replace(
        call, args=[put_all(a) for a in call.args], kwargs={k: put_all(v) for k, v in call.kwargs.items()}
    )
