"""The format checks and formatting of a print row, as ``jax.debug.print`` makes them."""

from __future__ import annotations

import string
from typing import Any, Mapping

import numpy as np


class _UnusedArgumentsCheck(string.Formatter):
    """Raises what ``jax.debug.print`` raises for arguments the format does not use."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args, args, kwargs) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


_unused_arguments = _UnusedArgumentsCheck()


def has_placeholders(fmt: str) -> bool:
    if not fmt:
        return False
    _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
    return field_name is not None


def format_row(fmt: str, printoptions: Mapping[str, Any], placeholders: bool, args, kwargs) -> str:
    if placeholders:
        with np.printoptions(**printoptions):
            return fmt.format(*args, **kwargs)
    return " ".join((fmt, *(str(a) for a in args)))


def check_arguments(fmt: str, args: tuple, kwargs: dict) -> None:
    """Raise what ``jax.debug.print`` raises at trace time for a format and its arguments."""
    _unused_arguments.format(fmt, *args, **kwargs)
