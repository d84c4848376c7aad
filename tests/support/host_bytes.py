"""What a program hands to jaxdbg's host callbacks, counted in bytes."""

from __future__ import annotations

import threading

import jax
import numpy as np

from jaxdbg.internals import jax_host_calls
from jaxdbg.runtime import jax_routes


class HostBytes:
    """The bytes of every operand the program hands to a host callback (jax.pure_callback,
    jax.debug.callback and jax_host_calls.host_call, as staging calls them), counted as
    the callbacks run."""

    def __init__(self, monkeypatch) -> None:
        self.total = 0
        self.calls = 0  # host calls made
        # The devices of a pmap or shard_map call back at once, each on a thread of its own;
        # `self.total += size(...)` reads the total before it computes the size, and
        # another thread's count written meanwhile was lost (a test failed on it).
        self._lock = threading.Lock()
        pure, debug, own = jax.pure_callback, jax_routes.CALLBACK.original(), jax_host_calls.host_call
        monkeypatch.setattr(jax, "pure_callback", lambda fn, *a, **k: pure(self.counted(fn), *a, **k))
        monkeypatch.setattr(jax_routes.CALLBACK, "_jax_own", lambda fn, *a, **k: debug(self.counted(fn), *a, **k))
        monkeypatch.setattr(jax_host_calls, "host_call", lambda fn, *a, **k: own(self.counted(fn), *a, **k))

    def counted(self, fn):
        """``fn``, counting the bytes of what it is called with."""

        def run(*args, **kwargs):
            size = sum(np.asarray(leaf).nbytes for leaf in jax.tree.leaves((args, kwargs)))
            with self._lock:
                self.calls += 1
                self.total += size
            return fn(*args, **kwargs)

        return run
