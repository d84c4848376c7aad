"""A real ``jax.distributed`` job on this machine: N local processes on CPU.

    with Job(PROGRAM, processes=2, env={...}, per_process_env={0: {...}}) as job:
        job.wait(timeout=120)        # every exit status, or fails with the outputs
        job.output(0)                # stdout and stderr of process 0

Each process runs the program as a script with ``PROCESS_ID``, ``NUM_PROCESSES`` and
``COORDINATOR`` (127.0.0.1 and a free port) in its environment, gloo collectives and
2 host devices (``start_job()`` below does the initialize). The checkout comes first
on PYTHONPATH. A process still running at the deadline is killed (after its threads
were dumped with faulthandler) and the test fails with every output.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "support" / "programs"  # programs the jobs of several tests run

# The preamble of every program: join the job, 2 CPU devices per process.
PREAMBLE = '''
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
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    def __init__(self, program: str, processes: int = 2, env: dict[str, str] | None = None,
                 per_process_env: dict[int, dict[str, str]] | None = None,
                 python: str | None = None, address: str | None = None,
                 launch: list[int] | None = None) -> None:
        """``launch``: the process indices started here (default: all; the others join
        from elsewhere, e.g. a kernel, at ``address``)."""
        self.dir = tempfile.TemporaryDirectory()
        self.script = Path(self.dir.name) / "program.py"
        self.script.write_text(PREAMBLE + textwrap.dedent(program))
        address = address or f"127.0.0.1:{free_port()}"
        self.procs: list[subprocess.Popen] = []
        self.logs = []
        for i in (range(processes) if launch is None else launch):
            environment = dict(os.environ)
            environment.pop("JAXDBG_COMMANDS", None)
            environment.update(
                JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2",
                PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
                COORDINATOR=address, NUM_PROCESSES=str(processes), PROCESS_ID=str(i),
                PYTHONUNBUFFERED="1", JAXDBG_BACKEND="cli")
            environment.update(env or {})
            environment.update((per_process_env or {}).get(i, {}))
            log = open(Path(self.dir.name) / f"out{i}.txt", "w+")
            self.logs.append(log)
            self.procs.append(subprocess.Popen(
                [python or sys.executable, str(self.script)], stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=self.dir.name))

    def output(self, i: int) -> str:
        """The output of the ``i``-th process started here."""
        self.logs[i].flush()
        return Path(self.logs[i].name).read_text()

    def outputs(self) -> str:
        return "\n".join(f"----- process {i} -----\n{self.output(i)}" for i in range(len(self.procs)))

    def kill(self, i: int) -> None:
        self.procs[i].kill()
        self.procs[i].wait()

    def wait_for(self, i: int, text: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output(i):
            if time.monotonic() > deadline:
                self._fail(f"process {i} never printed {text!r}")
            time.sleep(0.05)

    def wait(self, timeout: float = 120) -> list[int]:
        deadline = time.monotonic() + timeout
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._fail("a process of the job is still running at the deadline")
        return [p.returncode for p in self.procs]

    def _fail(self, why: str):
        import pytest

        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        text = self.outputs()
        self.close()
        pytest.fail(f"{why}\n{text}")

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()

    def __enter__(self) -> "Job":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        self.dir.cleanup()
