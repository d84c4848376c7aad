"""What a program hands to jaxdbg's host callbacks, counted in bytes."""

from __future__ import annotations

import jax
import numpy as np

from jaxdbg.runtime import jax_routes


class HostBytes:
    """The bytes of every operand the program hands to a host callback (jax.pure_callback
    and jax.debug.callback, as staging calls them), counted as the callbacks run."""

    def __init__(self, monkeypatch) -> None:
        self.total = 0
        pure, debug = jax.pure_callback, jax_routes.CALLBACK.original()

        def counted(fn):
            def run(*args, **kwargs):
                self.total += sum(np.asarray(leaf).nbytes for leaf in jax.tree.leaves((args, kwargs)))
                return fn(*args, **kwargs)

            return run

        monkeypatch.setattr(jax, "pure_callback", lambda fn, *a, **k: pure(counted(fn), *a, **k))
        monkeypatch.setattr(jax_routes.CALLBACK, "_jax_own", lambda fn, *a, **k: debug(counted(fn), *a, **k))
