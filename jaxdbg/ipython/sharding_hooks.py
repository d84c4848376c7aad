"""The extension's sharding feature: JAX's sharding functions and cell results show layouts.

While installed:

- ``jax.debug.visualize_array_sharding`` draws with :func:`visualize_sharding` (every
  rank, no matplotlib, inline HTML in a notebook);
- ``jax.debug.inspect_array_sharding`` reports through :func:`inspect_sharding`, so its
  callback runs at compile time and again on cached calls;
- a ``Sharding`` or ``Mesh`` left as a cell's result displays as its layout (IPython
  display formatters for those types).

:func:`uninstall` puts back exactly what :func:`install` replaced; ``%jaxdbg sharding
off`` calls it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from jaxdbg.capture.sharding_display import inspect_sharding, visualize_sharding
from jaxdbg.engine.values.layout_reading import sharding_view
from jaxdbg.internals import ipython_api
from jaxdbg.runtime import jax_routes

_lock = threading.Lock()
_ROUTES = {
    "visualize_array_sharding": jax_routes.VISUALIZE_ARRAY_SHARDING,
    "inspect_array_sharding": jax_routes.INSPECT_ARRAY_SHARDING,
}
_saved_formatters: list[Callable[[], None]] = []  # the undo of each display formatter added


def _visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """jaxdbg's layout (any rank, inline in notebooks) in place of JAX's drawing."""
    visualize_sharding(arr, **kwargs)


def _inspect_array_sharding(value: Any, *, callback: Callable[[Any], Any]) -> None:
    """JAX's signature; the callback also runs on cached calls, not only at compile time."""
    inspect_sharding(value, callback=callback)


def _layout_html(obj: Any) -> str | None:
    try:
        return sharding_view(obj)._repr_html_()
    except Exception:  # an abstract mesh or a sharding without a shape: keep the repr
        return None


def _layout_text(obj: Any, p: Any, cycle: bool) -> None:
    """text/plain (terminal IPython, saved notebooks): the repr, then the layout."""
    p.text(repr(obj))
    try:
        p.text("\n" + str(sharding_view(obj)))
    except Exception:
        pass


def _formatters(shell: Any) -> list[tuple[Any, type, Callable[..., Any]]]:
    import jax

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return []
    formatters = shell.display_formatter.formatters
    out: list[tuple[Any, type, Callable[..., Any]]] = []
    for mime, fn in (("text/html", _layout_html), ("text/plain", _layout_text)):
        if mime in formatters:
            out += [(formatters[mime], cls, fn) for cls in (jax.sharding.Mesh, jax.sharding.NamedSharding)]
    return out


def install(shell: Any = None) -> None:
    """Route JAX's sharding functions here and register the display formatters.

    ``shell`` is the IPython shell whose formatters to extend (default: the running one).
    """
    with _lock:
        if is_installed():
            return
        jax_routes.VISUALIZE_ARRAY_SHARDING.install(_visualize_array_sharding)
        jax_routes.INSPECT_ARRAY_SHARDING.install(_inspect_array_sharding)
        for formatter, cls, fn in _formatters(shell):
            _saved_formatters.append(ipython_api.add_type_printer(formatter, cls, fn))


def uninstall() -> None:
    """Give JAX its functions back and remove (or restore) the display formatters."""
    with _lock:
        for route in _ROUTES.values():
            route.uninstall()
        for undo in reversed(_saved_formatters):
            undo()
        _saved_formatters.clear()


def original(name: str) -> Callable[..., Any]:
    """JAX's own ``jax.debug.<name>``, also while the routed one is installed."""
    return _ROUTES[name].original()


def is_installed() -> bool:
    return any(route.installed for route in _ROUTES.values())
