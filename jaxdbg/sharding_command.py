"""The ``sharding EXPR`` debugger command: a value's layout over devices, for every view.

The Session evaluates ``EXPR`` in the current frame; this module turns the value into
an :class:`~jaxdbg.outputs.Output` of kind ``SHARDING`` whose ``data`` is the
:class:`~jaxdbg.sharding_layout.ShardingView` (the terminal prints it with rich, the
panel embeds its ``_repr_html_()``) and whose ``text`` is its plain rendering.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.outputs import Output, OutputKind


def _error(message: str) -> Output:
    return Output(OutputKind.ERROR, f"*** {message}")


def sharding_output(value: Any, source: str = "") -> Output:
    """The SHARDING output for ``value``, or an ERROR output that says what was expected."""
    import jax

    from jaxdbg.sharding_layout import sharding_view

    shape = None
    if (isinstance(value, tuple) and len(value) == 2
            and isinstance(value[0], jax.sharding.Sharding)):
        value, shape = value
    what = f"{source} is" if source else "this is"
    if (isinstance(value, jax.sharding.Sharding) and shape is None
            and not isinstance(value, jax.sharding.NamedSharding)):
        return _error(f"{what} a {type(value).__name__}, which needs an array shape: "
                      f"try 'sharding {source or 's'}, (8, 8)' or 'sharding x' for an array x")
    if not isinstance(value, (jax.Array, jax.sharding.Sharding, jax.sharding.Mesh)):
        return _error(f"{what} a {type(value).__name__}, not a jax.Array, a Sharding or a Mesh")
    try:
        view = sharding_view(value, shape=shape)
    except Exception as e:
        return _error(f"could not lay out {source or 'the value'}: {type(e).__name__}: {e}")
    return Output(OutputKind.SHARDING, str(view), view)


def run(session: Any, arg: str) -> Output:
    """``sharding EXPR`` in ``session``'s current frame."""
    if not arg.strip():
        return _error("sharding needs an expression, e.g. 'sharding x'")
    evaluated = session.evaluate(arg, expression_only=True)
    if evaluated.is_error:
        return evaluated
    return sharding_output(evaluated.data, arg.strip())
