"""A minimal real-kernel driver for the benchmarks (the test suite has its own).

Starts an ipykernel for a given Python through jupyter_client, stamps every message
with the client's arrival time (``msg["_t"]``, ``time.perf_counter()``), answers
``input()`` prompts from a queue, and can read the kernel process's resident memory.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent


class Kernel:
    """One started kernel; use as a context manager."""

    def __init__(self, python: str = sys.executable, env: dict[str, str] | None = None) -> None:
        self.python = python
        self.env = dict(env or {})
        self._tmp = tempfile.mkdtemp(prefix="jaxdbg-bench-")
        self._lock = threading.Lock()
        # One thread at a time on the wire: a ZMQ socket is not thread-safe, and the
        # session numbers its messages (sends, and the shell and stdin readers' receives).
        self._wire = threading.Lock()
        self.messages: list[dict] = []  # iopub, shell and stdin, in arrival order
        self.answers: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> "Kernel":
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        spec = Path(self._tmp) / "kernels" / "bench"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [self.python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "jaxdbg bench",
                    "language": "python",
                    "interrupt_mode": "signal",
                }
            )
        )
        env = dict(os.environ)
        env.pop("JPY_PARENT_PID", None)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.setdefault("JAX_PLATFORMS", "cpu")
        env.update(self.env)
        ksm = KernelSpecManager(kernel_dirs=[str(Path(self._tmp) / "kernels")], ensure_native_kernel=False)
        self.km = KernelManager(kernel_name="bench", kernel_spec_manager=ksm)
        self.log = open(Path(self._tmp) / "kernel.log", "ab")
        self.km.start_kernel(env=env, cwd=str(ROOT), stdout=self.log, stderr=self.log)
        self.kc = self.km.client()
        self.kc.allow_stdin = True
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        for channel in ("iopub", "shell", "stdin"):
            t = threading.Thread(target=self._read, args=(channel,), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        self.kc.stop_channels()
        if self.km.is_alive():
            self.km.shutdown_kernel(now=True)
        self.log.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _read(self, channel: str) -> None:
        get = getattr(self.kc, f"get_{channel}_msg")
        shared = channel != "iopub"  # iopub only receives, on this thread alone
        while not self._stop.is_set():
            try:
                if shared:
                    with self._wire:  # polls without waiting, so senders never wait long
                        msg = get(timeout=0)
                else:
                    msg = get(timeout=0.05)
            except queue.Empty:
                if shared:
                    time.sleep(0.002)
                continue
            except Exception:
                if self._stop.is_set():
                    return
                continue
            msg["_t"] = time.perf_counter()
            msg["_channel"] = channel
            with self._lock:
                self.messages.append(msg)
            if channel == "stdin" and msg["msg_type"] == "input_request":
                answer = self.answers.get(timeout=120)
                with self._wire:
                    self.kc.input(answer)

    @property
    def pid(self) -> int:
        return self.km.provisioner.process.pid

    def rss_mb(self) -> float:
        """The kernel process's resident memory now, in MB (from /proc)."""
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def mark(self) -> int:
        with self._lock:
            return len(self.messages)

    def wait(
        self, start: int, predicate: Callable[[dict], bool], timeout: float = 120, what: str = "a message"
    ) -> dict:
        deadline = time.monotonic() + timeout
        seen = start
        while time.monotonic() < deadline:
            with self._lock:
                new = self.messages[seen:]
            for msg in new:
                if predicate(msg):
                    return msg
            seen += len(new)
            time.sleep(0.001)
        raise TimeoutError(f"timed out waiting for {what}")

    def execute(self, code: str) -> str:
        with self._wire:
            return self.kc.execute(code, allow_stdin=True, store_history=False)

    def reply(self, start: int, msg_id: str, timeout: float = 300) -> dict:
        return self.wait(
            start,
            lambda m: (
                m["_channel"] == "shell"
                and m["msg_type"] == "execute_reply"
                and m["parent_header"].get("msg_id") == msg_id
            ),
            timeout,
            "execute_reply",
        )

    def run(self, code: str, timeout: float = 300) -> dict:
        """Execute and wait for the reply and the idle status (all output has come)."""
        start = self.mark()
        msg_id = self.execute(code)
        reply = self.reply(start, msg_id, timeout)
        self.wait(
            start,
            lambda m: (
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_id") == msg_id
            ),
            timeout,
            "idle",
        )
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell failed: {reply['content']}\n{code}")
        return reply

    def stdout(self, msg_id: str) -> str:
        with self._lock:
            return "".join(
                m["content"]["text"]
                for m in self.messages
                if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
            )

    def send_custom(self, comm_id: str, content: Any) -> None:
        """What an anywidget's ``model.send(content)`` sends from the browser."""
        with self._wire:
            self.kc.shell_channel.send(
                self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
            )
