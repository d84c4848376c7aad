"""Show sharding layouts now (``visualize_sharding``) or from inside jit (``inspect_sharding``).

In a notebook kernel a layout is displayed inline (HTML, with a text fallback); anywhere
else it is printed with rich. Inside jit the sharding only exists once XLA has
partitioned the program, so :func:`inspect_sharding` learns it from JAX's
``inspect_array_sharding`` (called at compile time) and re-shows it from a
``jax.debug.callback`` on every later run, which JAX's own function does not.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import jax

from jaxdbg.capture.display import show
from jaxdbg.engine.values.layout_reading import layout_of, sharding_view
from jaxdbg.engine.values.sharding_layout import ShardingView
from jaxdbg.runtime import jax_routes


def visualize_sharding(x: Any, *, shape: Sequence[int] | None = None, **_jax_options: Any) -> None:
    """Display how ``x`` is laid out over devices: inline in a notebook, rich in a terminal.

    ``x`` is a ``jax.Array``, a ``Sharding`` (pass ``shape=``) or a ``Mesh``. Inside jit
    (a traced value) this shows the compiled sharding, as :func:`inspect_sharding` does.
    Keyword options of ``jax.debug.visualize_array_sharding`` (``use_color``,
    ``scale``, ...) are accepted and ignored, so calls routed from JAX keep working.
    """
    if isinstance(x, jax.core.Tracer):
        inspect_sharding(x)
        return None
    show(sharding_view(x, shape=shape))
    return None


class _Reported:
    """What one ``inspect_sharding`` call site learned at compile time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sharding: Any = None
        self.just_compiled = False


def _report(sharding: Any, shape: tuple[int, ...], dtype: Any, callback: Callable[[Any], Any] | None) -> None:
    if callback is not None:
        callback(sharding)
        return
    try:
        view: ShardingView | str = ShardingView(layout_of(sharding, shape=shape, dtype=dtype))
    except Exception as e:  # never break the user's computation over a drawing
        view = f"jaxdbg.inspect_sharding: could not lay out {sharding!r}: {e}"
    show(view)


def inspect_sharding(x: Any, callback: Callable[[Any], Any] | None = None) -> Any:
    """Show the sharding XLA chose for ``x`` inside jit; returns ``x`` unchanged.

    It shows when the function is compiled and again on each later (cached) call.
    ``callback(sharding)`` replaces the display when given (it receives a
    ``jax.sharding.Sharding``, like JAX's ``inspect_array_sharding`` callback).
    Outside jit it reports ``x.sharding`` at once.
    """
    if not isinstance(x, jax.core.Tracer):
        if isinstance(x, jax.Array):
            _report(x.sharding, tuple(x.shape), x.dtype, callback)
        return x
    shape = tuple(int(n) for n in x.shape)
    dtype = x.dtype
    reported = _Reported()

    def at_compile(sharding: Any) -> None:
        with reported.lock:
            reported.sharding = sharding
            reported.just_compiled = True
        _report(sharding, shape, dtype, callback)

    def at_run() -> None:
        with reported.lock:
            if reported.just_compiled:  # the compile-time report covers this first run
                reported.just_compiled = False
                return
            sharding = reported.sharding
        if sharding is not None:
            _report(sharding, shape, dtype, callback)

    # JAX's own function, even while ours stands in for it
    jax_routes.INSPECT_ARRAY_SHARDING.original()(x, callback=at_compile)
    jax_routes.CALLBACK.original()(at_run)
    return x
