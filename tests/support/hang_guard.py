"""Tests for hangs: a deadline, and every thread's stack when it passes.

In this process::

    join_or_dump(threads, timeout=60)   # fails with all threads' stacks if one is stuck

A Python script in a child process (8 host devices, the checkout on PYTHONPATH)::

    with Script(code, stdin="pty") as run:    # or stdin="pipe"
        run.expect("(jaxdbg) ", timeout=60)
        run.signal(signal.SIGINT)
        run.wait(timeout=60)                   # the exit status
        run.output                             # stdout and stderr so far

Each wait that runs out asks the child for a dump of its threads (faulthandler on
SIGUSR1, registered before the script runs), kills it and fails the test with the
output and the dump.

Before a signal that must land inside a given system call (a Ctrl-C at a prompt that
reads, or during a command that sleeps)::

    wait_for_system_call(pid, "read")                       # the main thread
    wait_for_system_call(pid, "clock_nanosleep", any_thread=True)
"""

from __future__ import annotations

import faulthandler
import os
import platform
import pty
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]
_PRELUDE = "import faulthandler, signal; faulthandler.register(signal.SIGUSR1, all_threads=True)\n"


def dump_threads() -> str:
    """The stacks of every thread of this process, as faulthandler prints them."""
    with tempfile.TemporaryFile("w+") as f:
        faulthandler.dump_traceback(f, all_threads=True)
        f.seek(0)
        return f.read()


def join_or_dump(threads: list[threading.Thread], timeout: float) -> None:
    """Join ``threads`` within ``timeout`` seconds in all, or fail with a thread dump."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:
        pytest.fail(f"threads still running after {timeout}s: {stuck}\n{dump_threads()}")


def wait_or_dump(predicate: Callable[[], object], timeout: float, what: str) -> object:
    """Poll ``predicate`` until it is true, or fail with a thread dump."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    pytest.fail(f"timed out after {timeout}s waiting for {what}\n{dump_threads()}")


class Script:
    """A Python script run in a child process whose stdin is a pseudo-terminal or a pipe."""

    def __init__(self, code: str, *, stdin: str = "pipe", env: dict[str, str] | None = None) -> None:
        assert stdin in ("pipe", "pty")
        self._dir = tempfile.TemporaryDirectory(prefix="jaxdbg-script-")
        self.path = Path(self._dir.name) / "script.py"
        self.path.write_text(_PRELUDE + textwrap.dedent(code))
        child_env = dict(os.environ)
        child_env.update(
            {
                "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
                "JAX_PLATFORMS": "cpu",
                "PYTHONPATH": os.pathsep.join(
                    [str(ROOT)] + [p for p in child_env.get("PYTHONPATH", "").split(os.pathsep) if p]
                ),
                "PYTHONUNBUFFERED": "1",
                "NO_COLOR": "1",
            }
        )
        child_env.update(env or {})
        self._pty_master = None
        if stdin == "pty":
            master, slave = pty.openpty()
            self._pty_master = master
            stdin_arg = slave
        else:
            stdin_arg = subprocess.PIPE
        self.proc = subprocess.Popen(
            [sys.executable, str(self.path)],
            stdin=stdin_arg,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=child_env,
            cwd=str(ROOT),
            start_new_session=True,
        )
        if stdin == "pty":
            os.close(slave)
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="script-output")
        self._reader.start()

    def _read(self) -> None:
        while True:
            data = self.proc.stdout.read1(4096)
            if not data:
                return
            with self._lock:
                self._chunks.append(data)

    @property
    def output(self) -> str:
        with self._lock:
            return b"".join(self._chunks).decode(errors="replace")

    def send(self, text: str) -> None:
        """Type ``text`` (on the terminal) or write it to the pipe."""
        data = text.encode()
        if self._pty_master is not None:
            os.write(self._pty_master, data)
        else:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def expect(self, text: str, timeout: float, after: int = 0) -> int:
        """Wait until ``text`` appears in the output past position ``after``; its end."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.output.find(text, after)
            if found >= 0:
                return found + len(text)
            if self.proc.poll() is not None:
                self._reader.join(2)
                found = self.output.find(text, after)
                if found >= 0:
                    return found + len(text)
                self._fail(f"the script exited ({self.proc.returncode}) without printing {text!r}", dump=False)
            time.sleep(0.02)
        self._fail(f"timed out after {timeout}s waiting for {text!r}")

    def wait(self, timeout: float) -> int:
        """The exit status, or fail with a thread dump after ``timeout`` seconds."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._fail(f"the script did not exit within {timeout}s")
        self._reader.join(5)
        return code

    def _fail(self, why: str, dump: bool = True) -> None:
        if dump and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)  # faulthandler prints every thread's stack
            time.sleep(2)
        self.close()
        pytest.fail(f"{why}\n--- script output (thread dump at the end) ---\n{self.output}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self._pty_master is not None:
            try:
                os.close(self._pty_master)
            except OSError:
                pass
            self._pty_master = None
        self._reader.join(5)
        self._dir.cleanup()

    def __enter__(self) -> "Script":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# System call numbers per machine, as /proc/PID/syscall gives them.
_SYSCALLS = {
    "x86_64": {"read": "0", "clock_nanosleep": "230"},
    "aarch64": {"read": "63", "clock_nanosleep": "115"},
}


def wait_for_system_call(pid: int, name: str, *, any_thread: bool = False, timeout: float = 60) -> None:
    """Until the main thread of ``pid`` (or, with ``any_thread``, one of its threads) sits
    in system call ``name``. A signal sent a few bytecodes before the call lands in a
    window no person hits (Python printed a prompt, then calls read(2); a command printed
    that it started, then sleeps), which a loaded test machine does hit. Where /proc
    cannot tell (another system, another user's process), a person's pause instead."""
    number = _SYSCALLS.get(platform.machine(), {}).get(name)
    deadline = time.monotonic() + timeout
    while number is not None and time.monotonic() < deadline:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir()) if any_thread else [Path(f"/proc/{pid}")]
            if any((task / "syscall").read_text().split()[0] == number for task in tasks):
                return
        except (OSError, IndexError):
            break
        time.sleep(0.02)
    time.sleep(1)
