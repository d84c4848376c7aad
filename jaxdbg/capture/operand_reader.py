"""A stop's operands as its frames read them: each one once, a batched one as the stop's
element, a big tree's leaves at once.

The host callback receives the operands the program sent: every one, in order, or (a
screening's) only those a condition, log template or watch reads, by index.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxdbg.engine.frames import Unavailable

NOT_SENT = Unavailable("not sent to the host: no condition, log template or watch reads it")


def reader(
    index: tuple, levels, values: dict[int, Any] | Sequence[Any], host_ops: dict[int, Any], as_jax: bool = True
) -> Callable[[int], Any]:
    """Operand ``i`` of batch element ``index``, read once: ``values`` holds what reached
    the host, every operand in order or (a screening's) only those its checks read by index.
    ``as_jax``: each value a JAX array, as a frame shows it (else as it came: a
    screening's NumPy arrays)."""
    count = None if isinstance(values, dict) else len(values)

    def sent(i: int) -> bool:
        return i in values if count is None else 0 <= i < count

    @functools.lru_cache(maxsize=None)
    def operand(i: int) -> Any:
        if not sent(i):
            return NOT_SENT
        picked = tuple(ix for ix, batched in zip(index, levels[i]) if batched)
        if not picked:
            value = values[i]
        else:
            if i not in host_ops:
                host_ops[i] = np.asarray(values[i])
            value = host_ops[i][picked]
        return value if not as_jax or isinstance(value, jax.Array) else jnp.asarray(value)

    def many(indices: Sequence[int]) -> list[Any]:
        """Operands ``indices`` at once (a pytree local's leaves): an unbatched stop's jax
        arrays as they came, with no call per leaf (10,000 leaves: ~10 ms less), and
        one slice where they follow each other."""
        if index:
            found = []
        elif isinstance(values, dict):
            found = [values.get(i, NOT_SENT) for i in indices]
        elif isinstance(indices, range) and indices.stop <= len(values):
            found = list(values[indices.start : indices.stop])
        else:
            found = [values[i] if sent(i) else NOT_SENT for i in indices]
        if found and (not as_jax or all(issubclass(kind, jax.Array) for kind in set(map(type, found)))):
            return found
        return [operand(i) for i in indices]

    operand.many = many  # type: ignore[attr-defined]
    return operand
