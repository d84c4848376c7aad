"""Calling user code from the debugger without letting it end the stop.

A local's ``__repr__``, a property, ``__array__`` or a pytree's flatten are user
code; any of them may raise anything, SystemExit included.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from jaxdbg.runtime import interrupts

T = TypeVar("T")


def format_exception(exc: BaseException) -> str:
    """``Type: message``; an exception whose ``__str__`` fails still gets its type named."""
    try:
        message = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:
        message = ""
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def guarded(call: Callable[[], T], fallback: Callable[[BaseException], T]) -> T:
    """Run user code (a ``__repr__``, a property, ``__array__``...) so that nothing it
    raises ends the stop: any exception, SystemExit and GeneratorExit included, becomes
    ``fallback(exc)``. A real interrupt still propagates: it is how a stop is ended; a
    KeyboardInterrupt that the user code raised itself is reported like any exception.
    """
    mark = interrupts.signals_seen()
    try:
        return call()
    except KeyboardInterrupt as e:
        if interrupts.interrupted_since(mark):
            raise
        return fallback(e)
    except BaseException as e:  # user code may raise anything
        return fallback(e)
