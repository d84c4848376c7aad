"""A ``jax.distributed`` job of local processes on CPU, to try the debug host on one machine.

    job = jaxdbg.distributed.start_local_processes(PROGRAM, processes=4, launch=[1, 2, 3],
                                                   env={"JAXDBG_DEBUG_SECRET": secret})
    job.join(0)        # this process (a notebook, say) is process 0 of the job
    ...
    job.wait(60); job.output(1); job.close()     # or: with ... as job:

Each launched process runs ``PROGRAM`` (Python source, or a path to a script, run under
its own name and line numbers) after a preamble that joins the job: ``jax.distributed.initialize`` at ``address`` (127.0.0.1
and a free port by default), gloo CPU collectives, ``devices`` host devices per
process, and ``PROCESS`` set to ``jax.process_index()``. ``COORDINATOR``,
``NUM_PROCESSES`` and ``PROCESS_ID`` are in its environment; each one's stdout and
stderr go to a file read by :meth:`LocalProcesses.output`. ``JAXDBG_COMMANDS`` is not
passed on: scripted commands are for the process that launches the job.
"""

from __future__ import annotations

import errno
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import IO

from jaxdbg import config

# The directory jaxdbg is imported from comes first on the launched processes' path, so
# they run the same jaxdbg as the process that launched them.
_IMPORT_ROOT = str(Path(__file__).resolve().parents[1])

# Run first in every launched process: join the job. SIGUSR1 dumps every thread's stack
# (LocalProcesses.dump_threads), to see where a process that does not end waits.
PREAMBLE = """\
import faulthandler, os, signal, sys
faulthandler.register(signal.SIGUSR1, all_threads=True)
import jax
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=os.environ["COORDINATOR"],
                           num_processes=int(os.environ["NUM_PROCESSES"]),
                           process_id=int(os.environ["PROCESS_ID"]),
                           initialization_timeout=60,
                           heartbeat_timeout_seconds=int(os.environ.get("HEARTBEAT_TIMEOUT", "100")))
PROCESS = jax.process_index()
"""

# A launched process: the preamble, then the program (argv[1]) as __main__, with the
# preamble's names (os, sys, jax, PROCESS) already defined, as if it began with them.
_RUNNER = (
    PREAMBLE
    + """
import runpy
sys.path.insert(0, os.path.dirname(sys.argv[1]))  # the program's own folder, as for `python program.py`
runpy.run_path(sys.argv[1], run_name="__main__",
               init_globals={name: globals()[name] for name in ("faulthandler", "os", "signal", "sys", "jax", "PROCESS")})
"""
)


class StillRunning(TimeoutError):
    """Some launched processes had not ended by the deadline of :meth:`LocalProcesses.wait`."""


def ephemeral_ports() -> tuple[int, int]:
    """The range the kernel takes ports from for ``bind(0)`` and outgoing connections."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535  # IANA's dynamic range: macOS's and Windows' default


def _bindable(port: int) -> bool:
    """Whether nothing holds ``port`` on loopback, nor on the wildcard the coordinator binds."""
    families = [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6:
        families.append((socket.AF_INET6, "::"))
    for family, host in families:
        try:
            with socket.socket(family) as s:
                s.bind((host, port))
        except OSError as error:
            if family == socket.AF_INET6 and error.errno == errno.EADDRNOTAVAIL:
                continue  # IPv6 switched off on this machine
            return False
    return True


def free_address() -> str:
    """``127.0.0.1:PORT`` with a port nobody holds now, and none is likely to take soon.

    The coordinator binds it a second or more later, in another process. A port from the
    ephemeral range could be taken by then by any outgoing connection or ``bind(0)``
    (a Jupyter kernel's, say), and the job would fail to start; so the port is drawn at
    random below that range.
    """
    low, _ = ephemeral_ports()
    if low > 11000:
        for _ in range(200):
            port = random.randrange(10000, low)
            if _bindable(port):
                return f"127.0.0.1:{port}"
    with socket.socket() as s:  # nothing free below the range: take one from it
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


class LocalProcesses:
    """The processes of a local job started here; see :func:`start_local_processes`."""

    def __init__(
        self,
        program: str | os.PathLike,
        processes: int = 2,
        *,
        launch: list[int] | None = None,
        env: dict[str, str] | None = None,
        per_process_env: dict[int, dict[str, str]] | None = None,
        address: str | None = None,
        devices: int = 2,
        python: str | None = None,
    ) -> None:
        if processes < 1:
            raise ValueError(f"a job needs at least one process, not {processes}")
        self.launched = list(range(processes)) if launch is None else list(launch)
        wrong = [i for i in self.launched if not 0 <= i < processes]
        if wrong:
            raise ValueError(f"process indices go from 0 to {processes - 1}, not {wrong}")
        self.processes = processes
        self.devices = devices
        self.address = address or free_address()
        self._dir = tempfile.TemporaryDirectory(prefix="jaxdbg-job-")
        if isinstance(program, os.PathLike):
            script = Path(program).resolve()
            if not script.is_file():
                raise FileNotFoundError(f"no program at {script}")
        else:
            script = Path(self._dir.name) / "program.py"
            script.write_text(textwrap.dedent(program))
        self._procs: list[subprocess.Popen] = []
        self._logs: list[IO[str]] = []
        for i in self.launched:
            log = open(Path(self._dir.name) / f"process{i}.txt", "w+")
            self._logs.append(log)
            self._procs.append(
                subprocess.Popen(
                    [python or sys.executable, "-c", _RUNNER, str(script)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self._dir.name,
                    env=self._environment(i, env or {}, (per_process_env or {}).get(i, {})),
                )
            )

    def _environment(self, i: int, env: dict[str, str], own: dict[str, str]) -> dict[str, str]:
        environment = config.launched_process_environment()
        environment.update(
            JAX_PLATFORMS="cpu",
            XLA_FLAGS=f"--xla_force_host_platform_device_count={self.devices}",
            PYTHONPATH=os.pathsep.join([_IMPORT_ROOT] + [p for p in [environment.get("PYTHONPATH")] if p]),
            COORDINATOR=self.address,
            NUM_PROCESSES=str(self.processes),
            PROCESS_ID=str(i),
            PYTHONUNBUFFERED="1",
        )
        environment.update(env)
        environment.update(own)
        return environment

    def _index(self, i: int) -> int:
        if i not in self.launched:
            raise ValueError(f"process {i} was not launched here (launched: {self.launched})")
        return self.launched.index(i)

    def join(self, process_id: int) -> None:
        """Make this process process ``process_id`` of the job (one not launched here).

        Call it before JAX has started its CPU backend, with ``JAX_PLATFORMS=cpu`` and
        ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` set before ``import jax``.
        """
        if process_id in self.launched:
            raise ValueError(f"process {process_id} was launched here; join as one of the others")
        import jax

        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(
            coordinator_address=self.address,
            num_processes=self.processes,
            process_id=process_id,
            initialization_timeout=60,
        )

    def output(self, i: int) -> str:
        """Everything process ``i`` (a launched one) wrote to stdout and stderr so far."""
        log = self._logs[self._index(i)]
        log.flush()
        return Path(log.name).read_text()

    def returncodes(self) -> dict[int, int | None]:
        """Each launched process's exit status, None while it runs."""
        return {i: proc.poll() for i, proc in zip(self.launched, self._procs)}

    def wait(self, timeout: float | None = None) -> dict[int, int]:
        """Wait until every launched process has ended; their exit statuses by index.

        Raises :class:`StillRunning` (naming them) when some still run after ``timeout`` s.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        for proc in self._procs:
            try:
                proc.wait(None if deadline is None else max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                running = [i for i, code in self.returncodes().items() if code is None]
                raise StillRunning(f"processes {running} of the job still run after {timeout} s") from None
        return {i: proc.returncode for i, proc in zip(self.launched, self._procs)}

    def wait_for(self, i: int, text: str, timeout: float = 60) -> None:
        """Wait until process ``i`` has written ``text``; TimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while text not in self.output(i):
            if time.monotonic() > deadline:
                raise TimeoutError(f"process {i} did not write {text!r} in {timeout} s")
            time.sleep(0.05)

    def kill(self, i: int) -> None:
        """End process ``i`` now (SIGKILL), as a process that dies."""
        proc = self._procs[self._index(i)]
        proc.kill()
        proc.wait()

    def dump_threads(self) -> None:
        """Have every running process write its threads' stacks to its output."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGUSR1)

    def close(self) -> None:
        """Kill the processes still running and delete their files."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in self._logs:
            log.close()
        self._dir.cleanup()

    def __enter__(self) -> LocalProcesses:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_local_processes(
    program: str | os.PathLike,
    processes: int = 2,
    *,
    launch: list[int] | None = None,
    env: dict[str, str] | None = None,
    per_process_env: dict[int, dict[str, str]] | None = None,
    address: str | None = None,
    devices: int = 2,
    python: str | None = None,
) -> LocalProcesses:
    """Start the processes ``launch`` (default: all) of a ``processes``-process job here.

    ``env`` goes to every launched process, ``per_process_env[i]`` to process ``i``; the
    processes not launched join from elsewhere at ``address`` (:meth:`LocalProcesses.join`).
    """
    return LocalProcesses(
        program,
        processes,
        launch=launch,
        env=env,
        per_process_env=per_process_env,
        address=address,
        devices=devices,
        python=python,
    )
