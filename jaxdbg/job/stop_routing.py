"""Where a stop of a ``jax.distributed`` job is served: plugged into serving on import.

A process that is not the job's debug host hands each stop to the host
(:mod:`remote_stops`); at the host a round is keyed by the breakpoint's number, the same
on every process, so it spans the devices of every process. A job whose processes
share no secret serves each stop where it is, after one notice. A quit at the host
ends the computation on every process (:mod:`quit_watch`).
"""

from __future__ import annotations

from jaxdbg.engine import stop_serving
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Resume
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.job import membership, quit_watch, remote_stops


def route_stop(
    frames: list[Frame],
    info: StopInfo,
    location: tuple[str, int, str] | None,
    devices: int | None,
    every_device: bool,
    site: object,
) -> tuple[Resume | None, object]:
    """How the stop ended when another process served it (else None), and its round's key."""
    job = membership.current()
    if job is None:
        return None, site
    info.process = job.label()
    if not job.signed:
        membership.remote_serving_off_notice(job)
    elif not job.is_host():
        resume = remote_stops.serve_at_host(job, Session(frames, info), location, devices, every_device)
        if resume is not None:
            return resume, site
    else:
        site = stop_serving.job_site(info.breakpoint_id, site)
    return None, site


def tell_the_job_it_quit() -> None:
    """At a job's debug host: a quit ends the computation on every process, also on
    those waiting in a collective without a stop of their own."""
    job = membership.current()
    if job is not None and job.signed and job.is_host():
        quit_watch.announce(job)


stop_serving.route_stops_with(route_stop, tell_the_job_it_quit)
