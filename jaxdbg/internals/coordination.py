"""JAX's coordination service, as a small key-value store: the transport between the
processes of a ``jax.distributed`` job.

``jax.distributed.initialize`` starts the service (in process 0) and a client in every
process; the client is private (``jax._src.distributed.global_state.client``), so it is
reached only here. Its methods are the same from jax 0.7 to 0.12 (checked by
``tests/internals/test_coordination.py``); ``get_live_nodes`` returns a list of process
ids on 0.7 and a dict keyed by them later, which :meth:`Store.live_processes` hides.
"""

from __future__ import annotations

from typing import Any

# The client methods jaxdbg calls; the tests assert the client has each.
CLIENT_METHODS = (
    "key_value_set",
    "blocking_key_value_get",
    "key_value_try_get",
    "key_value_dir_get",
    "key_value_delete",
    "get_live_nodes",
)


def _global_state() -> Any:
    try:
        from jax._src import distributed
    except ImportError:
        return None
    return getattr(distributed, "global_state", None)


class Timeout(Exception):
    """A blocking get found no value before its deadline."""


class Store:
    """The job's key-value store, through the coordination service's client."""

    def __init__(self, client: Any, process_index: int, process_count: int, coordinator: str = "") -> None:
        self.client = client
        self.process_index = process_index
        self.process_count = process_count
        self.coordinator = coordinator  # the service's address, the same in every process

    def set(self, key: str, value: str) -> None:
        """Write ``key`` (replacing a value already there)."""
        self.client.key_value_set(key, value, allow_overwrite=True)

    def get(self, key: str, timeout_s: float) -> str:
        """The value at ``key``, waiting at most ``timeout_s``; raises Timeout."""
        try:
            return str(self.client.blocking_key_value_get(key, max(1, int(timeout_s * 1000))))
        except Exception as e:  # JaxRuntimeError / XlaRuntimeError: DEADLINE_EXCEEDED
            if "DEADLINE_EXCEEDED" in str(e):
                raise Timeout(key) from None
            raise

    def try_get(self, key: str) -> str | None:
        """The value at ``key`` now, or None."""
        try:
            return str(self.client.key_value_try_get(key))
        except Exception as e:
            if "NOT_FOUND" in str(e):
                return None
            raise

    def dir_get(self, prefix: str) -> list[tuple[str, str]]:
        """Every ``(key, value)`` under the directory ``prefix`` (ending in ``/``)."""
        return [(str(k), str(v)) for k, v in self.client.key_value_dir_get(prefix)]

    def delete(self, key: str) -> None:
        """Remove ``key`` (and, for a directory, every key under it)."""
        self.client.key_value_delete(key)

    def live_processes(self) -> "frozenset[int] | None":
        """The processes the service still hears from; None where this JAX cannot say.

        A barrier: the service answers once every live process has asked."""
        ask = getattr(self.client, "get_live_nodes", None)
        if ask is None:
            return None
        live = ask(list(range(self.process_count)))
        return frozenset(int(p) for p in (live.keys() if isinstance(live, dict) else live))


def store() -> Store | None:
    """The store of this process's ``jax.distributed`` job; None when the process did not
    call ``jax.distributed.initialize`` (or the job has one process)."""
    state = _global_state()
    client = getattr(state, "client", None)
    if client is None:
        return None
    count = getattr(state, "num_processes", None) or 1
    index = getattr(state, "process_id", None) or 0
    if int(count) < 2:
        return None
    return Store(client, int(index), int(count), str(getattr(state, "coordinator_address", "")))


def names_in_use() -> dict[str, bool]:
    """The private names above and whether this JAX has them (for the tests)."""
    state = _global_state()
    return {
        "jax._src.distributed.global_state": state is not None,
        "global_state.client": state is not None and hasattr(state, "client"),
        "global_state.process_id": state is not None and hasattr(state, "process_id"),
        "global_state.num_processes": state is not None and hasattr(state, "num_processes"),
        "global_state.coordinator_address": state is not None and hasattr(state, "coordinator_address"),
    }
