"""Lets a stop in a program that runs on several CPU devices stay open.

XLA runs such a program's devices as threads that meet at each collective. A stop holds
its device in the host callback while the user reads it; the other devices wait for it
at the next collective, and XLA ends the whole process when that wait passes its
rendezvous timeouts (on jaxlib 0.10: a warning after 20 s, an abort 40 s later; on
jaxlib 0.7, about 30 s in all). jaxlib 0.8 and later read both timeouts from
``XLA_FLAGS`` once, when JAX starts its backends. So importing jaxdbg adds them, at a
day each, to ``XLA_FLAGS`` where the user has not set them, if this jaxlib knows them (an
unknown flag in ``XLA_FLAGS`` aborts JAX at start). A stop in such a program where they
could not take hold says so, once.

A ``jax.distributed`` job on CPU is different: its devices meet in Gloo, whose waits
these flags do not bound, but whose first collective among a set of devices must find
them all within 30 s (a fixed deadline). A stop in such a job says that, once.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import jax

from jaxdbg import config
from jaxdbg.internals import jax_api
from jaxdbg.runtime import notices

WARN_FLAG = "xla_cpu_collective_call_warn_stuck_timeout_seconds"
TERMINATE_FLAG = "xla_cpu_collective_call_terminate_timeout_seconds"
SECONDS = 24 * 3600

# jaxlib releases known to read both flags; between 0.8 (whose XLA added them) and this
# one, jaxlib's own binary is searched for their names first.
_KNOWN_FROM = (0, 10, 2)
_ADDED_IN = (0, 8, 0)

_lifted: bool | None = None  # None: not tried yet
_BEFORE = config.XLA_FLAGS.raw()  # as this process had them, for processes it starts


def flags_before_jaxdbg() -> str | None:
    """``XLA_FLAGS`` as they were before jaxdbg added its own (None: unset). Processes started
    from this one inherit the added flags; one running a jaxlib without them (0.7) would
    refuse to start, so give it these instead (a jaxdbg it imports adds its own)."""
    return _BEFORE


def lift() -> bool:
    """Add the two timeouts to ``XLA_FLAGS`` where missing; whether a stop may now stay open
    as long as it likes (False on a jaxlib without them, or once JAX's backends started,
    after which XLA reads ``XLA_FLAGS`` no more)."""
    global _lifted
    if _lifted is not None:
        return _lifted
    flags = config.XLA_FLAGS.get()
    missing = [name for name in (WARN_FLAG, TERMINATE_FLAG) if not re.search(rf"--{name}\b", flags)]
    if not missing:
        _lifted = True  # the user chose them
        return _lifted
    if not _jaxlib_reads_the_flags():
        _lifted = False
        return _lifted
    started = jax_api.backends_started()
    config.XLA_FLAGS.set(" ".join([flags, *(f"--{name}={SECONDS}" for name in missing)]).strip())
    _lifted = started is False
    return _lifted


def note_at_stop(devices: int, platform: str) -> None:
    """Said once, at a stop of a program on several CPU devices that the timeouts still bound."""
    if devices < 2 or platform != "cpu" or _in_a_gloo_job() or lift():
        return
    notices.warning_once(
        "cpu collective timeouts",
        "this program runs on several CPU devices, which wait for this stop's device at their next "
        "collective: XLA ends the process if they wait about a minute (30 s on jaxlib 0.7). "
        f"Continue before then, or start Python with XLA_FLAGS='--{WARN_FLAG}={SECONDS} "
        f"--{TERMINATE_FLAG}={SECONDS}' (jaxlib 0.8 or later), or import jaxdbg before JAX first runs.",
    )


def note_as_a_stop_opens() -> None:
    """Said once, as a stop opens in a ``jax.distributed`` job on CPU (this process's own,
    or another's at the debug host)."""
    if not _in_a_gloo_job():
        return
    # The job's devices meet in Gloo, not XLA's rendezvous: its waits are not bound by
    # the flags above, but the first collective among a set of devices sets up their
    # connections with a fixed deadline of 30 s (measured: a stop held 75 s at a
    # program's first run ends the job; at its second run, the job waits).
    notices.warning_once(
        "gloo first collective",
        "in a jax.distributed job on CPU the other processes wait for this stop at their next "
        "collective. At the first collective among a set of devices Gloo sets up their connections, "
        "and fails the whole job if that takes over 30 s: at a program's first run, continue "
        "within 30 s, or run the program once before you debug it.",
    )


def _in_a_gloo_job() -> bool:
    try:
        return (
            jax.process_count() > 1
            and jax.default_backend() == "cpu"
            and getattr(jax.config, "jax_cpu_collectives_implementation", None) == "gloo"
        )
    except RuntimeError:  # no backend to ask
        return False


def _jaxlib_reads_the_flags() -> bool:
    try:
        import jaxlib
        import jaxlib.version
    except ImportError:
        return False
    version = _release(jaxlib.version.__version__)
    if version >= _KNOWN_FROM:
        return True
    if version < _ADDED_IN:
        return False
    return _named_in_binaries(Path(jaxlib.__file__).parent, WARN_FLAG.encode())


def _release(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split(".")[:3]:
        digits = re.match(r"\d+", part)
        numbers.append(int(digits.group()) if digits else 0)
    return tuple(numbers)


def _named_in_binaries(folder: Path, name: bytes) -> bool:
    for library in folder.glob("*.so"):
        try:
            with library.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if data.find(name) >= 0:
                    return True
        except (OSError, ValueError):
            continue
    return False


# At import, which jaxdbg's package does first: before JAX starts its backends, if it has not yet.
lift()
