"""A mapping whose costly values are made when first read.

A stop's frame holds its locals in one: rebuilding a traced 10,000-leaf parameter dict
from its leaves takes milliseconds, and the panel shows that local's row (its kind and
size, which its structure says) long before anything reads the dict itself. Every read
(``[]``, ``get``, ``items``, ``dict(...)``, ``eval``) makes the value first, once.
"""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

_UNMADE = object()


class LazyValues(MutableMapping[str, Any]):
    """``values``: every name, in order; ``later[name] = (hint, make)``: ``name``'s value is
    ``make()``, called at its first read (its entry in ``values`` is ignored). ``hint``
    describes it meanwhile (:meth:`hint`)."""

    def __init__(self, values: dict[str, Any], later: dict[str, tuple[Any, Callable[[], Any]]]) -> None:
        self._values = {name: _UNMADE if name in later else value for name, value in values.items()}
        self._later = {name: later[name] for name in later if name in values}
        self._lock = threading.RLock()  # the panel's thread and the shell's may read at once

    def hint(self, name: str) -> Any:
        """What stands for ``name``'s value until it is made; None once made (or for a
        value there from the start)."""
        unmade = self._later.get(name)
        return None if unmade is None else unmade[0]

    def __getitem__(self, name: str) -> Any:
        value = self._values[name]
        if value is _UNMADE:
            with self._lock:
                if name in self._later:
                    self._values[name] = self._later[name][1]()
                    del self._later[name]
            value = self._values[name]
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        with self._lock:
            self._later.pop(name, None)
            self._values[name] = value

    def __delitem__(self, name: str) -> None:
        with self._lock:
            self._later.pop(name, None)
            del self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __repr__(self) -> str:
        return f"LazyValues({list(self._values)}, unmade: {list(self._later)})"


def hint_of(values: Any, name: str) -> Any:
    """What stands for ``name``'s unmade value in ``values`` (any mapping), or None."""
    return values.hint(name) if isinstance(values, LazyValues) else None
