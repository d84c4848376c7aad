"""The ``sharding EXPR`` debugger command: a value's layout over devices, for every view.

The Session evaluates ``EXPR`` in the current frame; this module turns the value into
an :class:`~jaxdbg.engine.outputs.Output` of kind ``SHARDING`` whose ``data`` is the
:class:`~jaxdbg.engine.values.sharding_layout.ShardingView` (the terminal prints it with rich, the
panel embeds its ``_repr_html_()``) and whose ``text`` is its plain rendering.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.engine.command_table import error as _error
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.values.layout_reading import layout_of, sharding_view
from jaxdbg.engine.values.sharding_layout import ShardingView


def sharding_output(value: Any, source: str = "") -> Output:
    """The SHARDING output for ``value``, or an ERROR output that says what was expected."""
    import jax

    shape = None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], jax.sharding.Sharding):
        value, shape = value
        if not (isinstance(shape, (tuple, list)) and all(isinstance(n, int) for n in shape)):
            return _error(f"the shape after the sharding must be a tuple of ints, such as (8, 8), not {shape!r}")
    what = f"{source} is" if source else "this is"
    if isinstance(value, jax.sharding.Sharding) and shape is None and not isinstance(value, jax.sharding.NamedSharding):
        return _error(
            f"{what} a {type(value).__name__}, which needs an array shape: "
            f"try 'sharding {source or 's'}, (8, 8)' or 'sharding x' for an array x"
        )
    if not isinstance(value, (jax.Array, jax.sharding.Sharding, jax.sharding.Mesh)):
        return _error(f"{what} a {type(value).__name__}, not a jax.Array, a Sharding or a Mesh")
    try:
        view = sharding_view(value, shape=shape)
    except Exception as e:
        return _error(f"could not lay out {source or 'the value'}: {type(e).__name__}: {e}")
    return Output(OutputKind.SHARDING, str(view), view)


def run(session: Any, arg: str) -> Output:
    """``sharding EXPR`` in ``session``'s current frame."""
    source = arg.strip()
    if not source:
        return _error("sharding needs an expression, e.g. 'sharding x'")
    value, error = session.value_of(source, expression_only=True)  # no repr: it may raise
    if error is not None:
        return error
    in_program = _program_label(session, source)
    if in_program is not None:
        # The stop's value is a copy on one device: drawing its layout would
        # contradict the banner and 'locals', which name the program's layout.
        # The layout XLA chose, recorded at compile time, is what to draw.
        compiled = _as_compiled(session, source, value)
        if compiled is not None:
            return compiled
        return Output(
            OutputKind.TEXT,
            f"{source} in the program: {in_program} (this stop holds "
            f"a copy on one device, so there is no layout to draw)",
        )
    return sharding_output(value, source)


def _as_compiled(session: Any, source: str, value: Any) -> Output | None:
    """The SHARDING output of the layout XLA compiled for traced local ``source``
    (a sharded jit), marked "as compiled"; None when none was recorded or it does
    not fit the value (under vmap the compiler lays out the whole batch)."""
    import dataclasses

    sharding = session.current.compiled_shardings.get(source)
    if sharding is None or not hasattr(value, "shape"):
        return None
    try:
        layout = layout_of(sharding, shape=tuple(value.shape), dtype=value.dtype)
    except Exception:
        return None
    view = ShardingView(dataclasses.replace(layout, note="as compiled"))
    return Output(OutputKind.SHARDING, str(view), view)


def _program_label(session: Any, source: str) -> str | None:
    """The program layout of a traced local named by ``source`` (sharded jit, pmap,
    shard_map), unless a scratch name shadows it."""
    if not source.isidentifier() or source in session.scratch:
        return None
    if source not in session.current.traced:
        return None
    return session.program_shardings().get(source)
