"""What a program hands to jaxdbg's host callbacks, counted in bytes."""

from __future__ import annotations

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
        pure, debug, own = jax.pure_callback, jax_routes.CALLBACK.original(), jax_host_calls.host_call

        def counted(fn):
            def run(*args, **kwargs):
                self.calls += 1
                self.total += sum(np.asarray(leaf).nbytes for leaf in jax.tree.leaves((args, kwargs)))
                return fn(*args, **kwargs)

            return run

        monkeypatch.setattr(jax, "pure_callback", lambda fn, *a, **k: pure(counted(fn), *a, **k))
        monkeypatch.setattr(jax_routes.CALLBACK, "_jax_own", lambda fn, *a, **k: debug(counted(fn), *a, **k))
        monkeypatch.setattr(jax_host_calls, "host_call", lambda fn, *a, **k: own(counted(fn), *a, **k))
