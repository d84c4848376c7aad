"""A real ``jax.distributed`` job on this machine: N local processes on CPU.

    with Job(PROGRAM, processes=2, env={...}, per_process_env={0: {...}}) as job:
        job.wait(timeout=120)        # every exit status, or fails with the outputs
        job.output(0)                # stdout and stderr of process 0

``jaxdbg.job.local_processes.LocalProcesses`` with the tests' failure reporting: a process still
running at a deadline has its threads dumped, is killed, and the test fails with every
output. Each process runs the program after ``PREAMBLE`` (it joins the job, 2 CPU
devices per process) with the checkout first on PYTHONPATH and the terminal backend.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NoReturn

import pytest

from jaxdbg.job.local_processes import PREAMBLE, LocalProcesses, StillRunning, free_address

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "support" / "programs"  # programs the jobs of several tests run

__all__ = ["PREAMBLE", "PROGRAMS", "Job", "free_port"]


def free_port() -> int:
    return int(free_address().rsplit(":", 1)[1])


class Job(LocalProcesses):
    def __init__(
        self,
        program: str,
        processes: int = 2,
        env: dict[str, str] | None = None,
        per_process_env: dict[int, dict[str, str]] | None = None,
        python: str | None = None,
        address: str | None = None,
        launch: list[int] | None = None,
    ) -> None:
        """``launch``: the process indices started here (default: all; the others join
        from elsewhere, e.g. a kernel, at ``address``)."""
        super().__init__(
            program,
            processes,
            launch=launch,
            env={"JAXDBG_BACKEND": "cli", **(env or {})},
            per_process_env=per_process_env,
            address=address,
            python=python,
        )

    def output(self, i: int) -> str:
        """The output of the ``i``-th process started here."""
        return super().output(self.launched[i])

    def outputs(self) -> str:
        return "\n".join(f"----- process {i} -----\n{super(Job, self).output(i)}" for i in self.launched)

    def kill(self, i: int) -> None:
        super().kill(self.launched[i])

    def wait_for(self, i: int, text: str, timeout: float = 120) -> None:
        """Until the ``i``-th process started here has written ``text`` (as :meth:`output`
        counts them), else fail with every output."""
        deadline = time.monotonic() + timeout
        while text not in self.output(i):
            if time.monotonic() > deadline:
                self._fail(f"process {self.launched[i]} did not write {text!r} in {timeout} s")
            time.sleep(0.05)

    def wait(self, timeout: float = 120) -> list[int]:  # type: ignore[override]
        try:
            return list(super().wait(timeout).values())
        except StillRunning as error:
            self._fail(str(error))

    def _fail(self, why: str) -> NoReturn:
        self.dump_threads()
        time.sleep(1)
        text = self.outputs()
        self.close()
        pytest.fail(f"{why}\n{text}")
