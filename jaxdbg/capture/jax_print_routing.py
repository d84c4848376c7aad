"""``jax.debug.print`` and ``jax.debug.log`` routed to jaxdbg's print log while the
extension is loaded: calls traced then carry their location, as ``jaxdbg.print``'s do.
Forms only JAX knows go to JAX unchanged."""

from __future__ import annotations

import logging
from typing import Any, Callable

from jaxdbg.capture import prints
from jaxdbg.runtime import jax_routes

_JAX_ONLY_OPTIONS = frozenset({"skip_format_check", "_use_logging"})
#: The level of ``jax.debug.log``'s records (JAX makes them at INFO).
LOG_LEVEL = logging.INFO


def _routed(route: jax_routes.Route, level: int | None) -> Callable[..., Any]:
    """What stands in for ``route``'s function (``jax.debug.print``, or ``jax.debug.log``
    whose rows carry ``level``); forms only JAX knows go to JAX unchanged.

    A function traced while it stood in keeps calling it after :func:`unroute_jax_print`;
    ``original()`` is then JAX's own function again."""

    def routed(
        fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False, **kwargs: Any
    ) -> Any:
        original = route.original()
        options = dict(ordered=ordered, partitioned=partitioned)
        if not prints.routing_enabled() or _JAX_ONLY_OPTIONS & kwargs.keys():
            return original(fmt, *args, **options, **kwargs)
        if fmt is None:
            prints.first_of_two_calls(original, args, dict(options, **kwargs))

            def print_with_options(fmt: str, *args: Any, **kwargs: Any) -> None:
                prints.stage_print(fmt, args, kwargs, ordered, partitioned, skip=1, from_jax=True, level=level)

            return print_with_options
        prints.stage_print(fmt, args, kwargs, ordered, partitioned, skip=1, from_jax=True, level=level)
        return None

    routed.__name__ = routed.__qualname__ = f"routed_jax_{route.name}"
    routed.__doc__ = getattr(route.original(), "__doc__", None)
    return routed


_routed_jax_print = _routed(jax_routes.PRINT, None)
_routed_jax_log = _routed(jax_routes.LOG, LOG_LEVEL) if jax_routes.LOG is not None else None


def route_jax_print() -> None:
    """Make ``jax.debug.print`` (and, where JAX has it, ``jax.debug.log``) calls traced
    from now on carry their location to the log."""
    jax_routes.PRINT.install(_routed_jax_print)
    if jax_routes.LOG is not None and _routed_jax_log is not None:
        jax_routes.LOG.install(_routed_jax_log)


def unroute_jax_print() -> None:
    jax_routes.PRINT.uninstall()
    if jax_routes.LOG is not None:
        jax_routes.LOG.uninstall()
