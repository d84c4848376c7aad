"""``jaxdbg.distributed``: one debugger for every process of a ``jax.distributed`` job.

With ``$JAXDBG_DEBUG_SECRET`` set to the same secret in every process, the stops of
every process are served at the job's debug host: process ``$JAXDBG_DEBUG_PROCESS``
(0 by default), or the process that calls :func:`serve_here`. See docs/distributed.md.
:func:`start_local_processes` starts a job of local processes, to try it on one machine.
"""

from __future__ import annotations

from jaxdbg import config
from jaxdbg.job import debug_host
from jaxdbg.job import membership as job
from jaxdbg.job.local_processes import LocalProcesses, StillRunning, start_local_processes

__all__ = ["LocalProcesses", "StillRunning", "serve_here", "start_local_processes", "status"]


def serve_here() -> None:
    """Serve every process's stops in this process (its notebook, terminal or script).

    Call it after ``jax.distributed.initialize``; raises RuntimeError outside a job of
    several processes or without ``$JAXDBG_DEBUG_SECRET``.
    """
    current = job.current()
    if current is None:
        raise RuntimeError(
            "jaxdbg.distributed.serve_here() needs a jax.distributed job of "
            "several processes (call jax.distributed.initialize first)"
        )
    if not current.signed:
        raise RuntimeError(
            f"jaxdbg.distributed.serve_here() needs ${config.DEBUG_SECRET.name}, "
            "set to the same secret in every process of the job"
        )
    debug_host.serve_here(current)


def status() -> str | None:
    """``process 0 of 4, debug host; running: 0, 1, 2, 3``, or None outside a job."""
    described = job.describe()
    return None if described is None else "; ".join(described)
