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


def key_impls(operands: Sequence[Any]) -> dict[int, Any]:
    """The PRNG implementation of each operand that is a typed PRNG key (``jax.random.key``),
    by index. A host callback receives such a key as its raw key data (uint32), which
    :func:`reader` wraps back into the key the program holds."""
    return {
        i: jax.random.key_impl(value)
        for i, value in enumerate(operands)
        if jax.dtypes.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key)
    }


def reader(
    index: tuple,
    levels,
    values: dict[int, Any] | Sequence[Any],
    host_ops: dict[int, Any],
    as_jax: bool = True,
    keys: dict[int, Any] | None = None,
) -> Callable[[int], Any]:
    """Operand ``i`` of batch element ``index``, read once: ``values`` holds what reached
    the host, every operand in order or (a screening's) only those its checks read by index.
    ``as_jax``: each value a JAX array, as a frame shows it (else as it came: a
    screening's NumPy arrays). ``keys``: :func:`key_impls` of the operands; those come
    back as typed keys (JAX arrays) either way."""
    count = None if isinstance(values, dict) else len(values)
    keys = keys or {}

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
        if i in keys:
            return jax.random.wrap_key_data(jnp.asarray(value), impl=keys[i])
        return value if not as_jax or isinstance(value, jax.Array) else jnp.asarray(value)

    def many(indices: Sequence[int]) -> list[Any]:
        """Operands ``indices`` at once (a pytree local's leaves): an unbatched stop's jax
        arrays as they came, with no call per leaf (10,000 leaves: ~10 ms less), and
        one slice where they follow each other."""
        if index or (keys and not keys.keys().isdisjoint(indices)):
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
