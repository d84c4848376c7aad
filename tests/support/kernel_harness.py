"""Drive a real ipykernel through jupyter_client the way a browser would.

A :class:`KernelHarness` starts a kernel from a temporary kernelspec for a given Python
executable, reads iopub on a background thread (messages grouped by parent msg_id),
answers stdin prompts, and sends the comm messages ipywidgets 8's frontend sends
(``update`` for value changes, ``custom`` ``{"event": "click"}`` for Button clicks) and
the ``custom`` messages an anywidget's browser code sends with ``model.send``.

Pythons: the running interpreter (``sys.executable``) always; besides, each one named
by an environment variable of :data:`MATRIX_ENV` that is set (``dev.py test`` sets them
all): ipykernel 6.29, Colab's exact pins, the newest JAX on the newest Python, and the
oldest JAX the pins allow.

Fixtures (tests/conftest.py provides the first two to every test):

- ``kernel_python`` is parametrized over the available Pythons;
- ``kernel`` is a function-scoped, started :class:`KernelHarness` (XLA with 8 host
  devices, the checkout on PYTHONPATH) that is always shut down;
- :func:`kernel_fixture` makes the kernel a module shares, in one line::

      kernel = kernel_fixture(SETUP)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from jaxdbg.runtime import collective_timeouts

ROOT = Path(__file__).resolve().parents[2]
IPYKERNEL6_ENV = "JAXDBG_IPYKERNEL6_PYTHON"
COLAB_ENV = "JAXDBG_COLAB_PYTHON"
# A venv with the built wheel installed (not the checkout): its kernels start outside the
# checkout with nothing of it on PYTHONPATH, so they import only what users install.
WHEEL_ENV = "JAXDBG_WHEEL_PYTHON"
# environment variable -> test id of the kernels the matrix adds
MATRIX_ENV = {
    IPYKERNEL6_ENV: "ipykernel6",
    COLAB_ENV: "colab-pins",
    "JAXDBG_NEWEST_JAX_PYTHON": "newest-jax",
    "JAXDBG_OLDEST_JAX_PYTHON": "oldest-jax",
    WHEEL_ENV: "installed-wheel",
}
#: What each kernel the matrix adds is there to check. A test marked
#: ``@pytest.mark.matrix("jupyter", ...)`` runs on the kernels whose concern it names;
#: bare ``matrix``, on every kernel. "jupyter": ipykernel 6 / 7 message routing, stdin,
#: IPython and ipywidgets (Colab's pins are old ones); "jax": what JAX does at a stop
#: (Colab pins a JAX of its own); "wheel": what only the installed wheel can get wrong
#: (its package data, its entry points).
MATRIX_CONCERNS = frozenset({"jupyter", "jax", "wheel"})
KERNEL_CONCERNS = {
    IPYKERNEL6_ENV: {"jupyter"},
    COLAB_ENV: {"jupyter", "jax"},
    "JAXDBG_NEWEST_JAX_PYTHON": {"jax"},
    "JAXDBG_OLDEST_JAX_PYTHON": {"jax"},
    WHEEL_ENV: {"wheel"},
}
MULTI_DEVICE_XLA_FLAGS = "--xla_force_host_platform_device_count=8"
#: How often the shell reader polls: right after a request, and at most while none comes.
SHELL_POLL_S = (0.005, 0.05)
# The kernel writes every thread's stack here on SIGUSR1 (see KernelHarness.thread_dump).
# Run at kernel start without binding a name in the user's namespace.
_THREAD_DUMPS_ON_SIGUSR1 = (
    "__import__('faulthandler').register(__import__('signal').SIGUSR1, all_threads=True, "
    "file=open(__import__('os').environ['JAXDBG_THREAD_DUMP'], 'w'))"
)


def kernel_pythons() -> list[pytest.param]:
    """pytest params for each Python to run a kernel with, labelled by ipykernel line."""
    params = [pytest.param(sys.executable, id="ipykernel-current")]
    for env_var, label in MATRIX_ENV.items():
        other = os.environ.get(env_var)
        if other:
            params.append(pytest.param(other, id=label))
    return params


#: Set to run every kernel test on every kernel of the matrix, marked ``matrix`` or not
#: (for a change to the kernel-facing plumbing itself, before it lands).
ALL_KERNELS_ENV = "JAXDBG_ALL_KERNELS"


def matrix_only_pythons() -> dict[str, set[str]]:
    """The kernels' Pythons that only tests marked ``matrix`` run on (every matrix
    Python but the running one), each with the concerns it checks."""
    own = os.path.abspath(sys.executable)
    found: dict[str, set[str]] = {}
    for var, concerns in KERNEL_CONCERNS.items():
        python = os.environ.get(var)
        if python and os.path.abspath(python) != own:
            found.setdefault(os.path.abspath(python), set()).update(concerns)
    return found


def matrix_kernel_of(item: pytest.Item, matrix_pythons: dict[str, set[str]]) -> str | None:
    """The matrix kernel's Python a collected test is parametrized with (through
    ``kernel``, a :func:`kernel_fixture` or a test's own ``kernel_pythons()``), if any."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for value in callspec.params.values():
        if isinstance(value, str) and os.path.abspath(value) in matrix_pythons:
            return os.path.abspath(value)
    return None


def matrix_concerns(item: pytest.Item) -> frozenset[str]:
    """The concerns a test's ``matrix`` marks name (none: not marked; bare: all)."""
    marks = list(item.iter_markers("matrix"))
    if not marks:
        return frozenset()
    named = {concern for mark in marks for concern in mark.args}
    unknown = named - MATRIX_CONCERNS
    if unknown:
        raise pytest.UsageError(
            f"{item.nodeid}: matrix({', '.join(sorted(unknown))}): "
            f"the concerns are {', '.join(sorted(MATRIX_CONCERNS))}"
        )
    return frozenset(named) if all(mark.args for mark in marks) else MATRIX_CONCERNS


def split_by_kernel_matrix(items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, deselected): a kernel test runs on the current kernel, and on another
    kernel of the matrix only when it is marked ``matrix`` with a concern that kernel
    checks (see :data:`KERNEL_CONCERNS`)."""
    matrix_pythons = matrix_only_pythons()
    if not matrix_pythons or os.environ.get(ALL_KERNELS_ENV):
        return items, []
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        python = matrix_kernel_of(item, matrix_pythons)
        if python is not None and not matrix_concerns(item) & matrix_pythons[python]:
            dropped.append(item)
        else:
            kept.append(item)
    return kept, dropped


def runs_installed_wheel(python: str) -> bool:
    """Whether `python` is the matrix's installed-wheel interpreter."""
    wheel = os.environ.get(WHEEL_ENV)
    return bool(wheel) and os.path.abspath(wheel) == os.path.abspath(python)


def ipykernel_version_of(python: str) -> tuple[int, ...]:
    out = subprocess.run(
        [python, "-c", "import ipykernel; print(ipykernel.__version__)"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    return tuple(int(p) for p in out.split(".")[:3] if p.isdigit())


def _inside_checkout(path: str) -> bool:
    resolved = Path(path).resolve()
    return resolved == ROOT or ROOT in resolved.parents


class CellResult:
    """Everything iopub said about one request, plus its execute_reply."""

    def __init__(self, msg_id: str, messages: list[dict], reply: dict | None) -> None:
        self.msg_id = msg_id
        self.messages = messages
        self.reply = reply

    @property
    def stdout(self) -> str:
        return self.stream("stdout")

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    def stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"] for m in self.messages if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def errors(self) -> list[dict]:
        return [m["content"] for m in self.messages if m["msg_type"] == "error"]

    @property
    def status(self) -> str | None:
        return None if self.reply is None else self.reply["content"]["status"]

    def __repr__(self) -> str:
        return (
            f"CellResult(status={self.status!r}, stdout={self.stdout!r}, "
            f"stderr={self.stderr[-2000:]!r}, errors={[e.get('ename') for e in self.errors]})"
        )


# The debugger panel's widget (its anywidget id in the model state).
PANEL_WIDGET = "jaxdbg_widgets.panel.widget.PanelWidget"


class KernelHarness:
    """A started kernel for one Python executable; use as a context manager.

    By default it answers as a frontend with a widget manager (JupyterLab, Notebook 7):
    the moment a debugger panel opens it says ``held`` and ``drawn``, as the panel's
    browser code does, so a test may look at the panel later than the kernel's few
    seconds' wait for a view without the stop going to the typed prompt. With
    ``draws_panels=False`` it is a frontend without one (jupyter console, an editor's
    client), whose stops are answered at the prompt.
    """

    def __init__(
        self,
        python: str = sys.executable,
        env: dict[str, str] | None = None,
        name: str = "jaxdbg-test",
        draws_panels: bool = True,
    ) -> None:
        self.python = python
        self.draws_panels = draws_panels
        #: Panels this client said it holds and drew (by comm id): said once per panel.
        self.panels_drawn: set[str] = set()
        self.extra_env = dict(env or {})
        self.name = name
        self._tmp = tempfile.mkdtemp(prefix="jaxdbg-kernelspec-")
        self.km = None
        self.kc = None
        self._lock = threading.Lock()
        # A ZMQ socket must not be used by two threads at once, and the session numbers its
        # messages: every send (test thread, reader threads) and the shell reader's receive
        # hold this lock. Used at once, a message could be lost or garbled on the wire,
        # which a test met as a command, a click or a cell the kernel never answered.
        self._wire = threading.Lock()
        # Set by each request sent on the shell channel: its reply is due, so the shell
        # reader polls often again (see _read_shell).
        self._sent = threading.Event()
        self._by_parent: dict[str, list[dict]] = {}
        self._comms: dict[str, dict] = {}  # comm_id -> latest widget model state
        self._custom: dict[str, list[dict]] = {}  # comm_id -> custom messages from the kernel
        self._custom_buffers: dict[str, list[list[bytes]]] = {}  # the binary buffers of each
        #: Called on the reader thread with (comm_id, state) the moment a widget opens,
        #: to answer as fast as a frontend possibly could.
        self.on_comm_open: Callable[[str, dict], None] | None = None
        self._all: list[dict] = []
        self._replies: dict[str, dict] = {}
        # execute_requests sent and not yet answered, and whether an error reply came
        # after which no request has run yet (see _wait_until_the_kernel_stops_aborting).
        self._unanswered: set[str] = set()
        self._aborting_after_error = False
        self._stdin_answers: queue.Queue[str] = queue.Queue()
        self.input_requests: list[dict] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @functools.cached_property
    def ipykernel_major(self) -> int:
        """The major version of ipykernel that this kernel's Python has."""
        return ipykernel_version_of(self.python)[0]

    # -- lifetime -------------------------------------------------------------------

    def start(self, timeout: float = 120) -> "KernelHarness":
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        spec_dir = Path(self._tmp) / "kernels" / self.name
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [
                        self.python,
                        "-m",
                        "ipykernel_launcher",
                        "-f",
                        "{connection_file}",
                        f"--IPKernelApp.exec_lines={_THREAD_DUMPS_ON_SIGUSR1}",
                    ],
                    "display_name": f"jaxdbg test ({self.python})",
                    "language": "python",
                    "interrupt_mode": "signal",
                }
            )
        )
        ksm = KernelSpecManager(kernel_dirs=[str(Path(self._tmp) / "kernels")], ensure_native_kernel=False)
        env = dict(os.environ)
        env.pop("JPY_PARENT_PID", None)
        # A matrix kernel may run a jaxlib that rejects the flags jaxdbg added in this process.
        env.pop("XLA_FLAGS", None)
        if collective_timeouts.flags_before_jaxdbg() is not None:
            env["XLA_FLAGS"] = collective_timeouts.flags_before_jaxdbg()
        extra = dict(self.extra_env)
        installed = runs_installed_wheel(self.python)
        checkout = [] if installed else [str(ROOT)]
        # What the test adds (a stand-in module) stays; what this process inherited from
        # the checkout does not reach the installed wheel's kernel.
        inherited = [
            p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and not (installed and _inside_checkout(p))
        ]
        pythonpath = checkout + [p for p in extra.pop("PYTHONPATH", "").split(os.pathsep) if p] + inherited
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
        # The installed wheel's kernel starts outside the checkout, where `import jaxdbg`
        # can only find the installed package.
        kernel_cwd = self._tmp if installed else str(ROOT)
        env.setdefault("JAX_PLATFORMS", "cpu")
        env.update(extra)
        self.log_path = Path(self._tmp) / "kernel.log"
        self.dump_path = Path(self._tmp) / "threads.txt"
        env["JAXDBG_THREAD_DUMP"] = str(self.dump_path)
        # The kernel's channels are Unix sockets in this kernel's own folder, not TCP
        # ports: a free port chosen here could be taken before the kernel binds it, and
        # not only by another worker's kernel (an outgoing connection of any process on
        # the machine gets a port from the same range). A kernel once failed to start so.
        self.km = KernelManager(
            kernel_name=self.name, kernel_spec_manager=ksm, transport="ipc", ip=str(Path(self._tmp) / "kernel-ipc")
        )
        with open(self.log_path, "ab") as log:
            self.km.start_kernel(env=env, cwd=kernel_cwd, stdout=log, stderr=log)
        self.kc = self.km.client()
        self.kc.allow_stdin = True
        self.kc.start_channels()
        try:
            self.kc.wait_for_ready(timeout=timeout)
        except RuntimeError as exc:
            self.kc.stop_channels()
            if self.km.is_alive():
                self.km.shutdown_kernel(now=True)
            raise RuntimeError(f"{exc}; kernel log:\n{self.kernel_log()[-4000:]}") from exc
        for target in (self._read_iopub, self._read_shell, self._read_stdin):
            t = threading.Thread(target=target, daemon=True, name=f"harness-{target.__name__}")
            t.start()
            self._threads.append(t)
        return self

    def kernel_log(self) -> str:
        """The kernel process's own stdout/stderr so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except (AttributeError, OSError):
            return ""

    def thread_dump(self, timeout: float = 10) -> str:
        """Every thread's Python stack in the kernel now (for hang reports)."""
        import signal

        try:
            before = self.dump_path.stat().st_size
            self.km.provisioner.process.send_signal(signal.SIGUSR1)
        except Exception as exc:
            return f"(no thread dump: {exc!r})"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.2)
            try:
                if self.dump_path.stat().st_size > before:
                    time.sleep(0.5)  # let the dump finish
                    return self.dump_path.read_text(errors="replace")[before:]
            except OSError:
                pass
        return "(the kernel wrote no thread dump)"

    def shutdown(self) -> None:
        self._stop.set()
        self._sent.set()  # the shell reader stops waiting
        # Readers poll with short timeouts; let them finish before their sockets close,
        # or a poll on a closed socket raises inside the reader thread.
        for t in self._threads:
            t.join(timeout=2)
        try:
            if self.kc is not None:
                self.kc.stop_channels()
        except Exception:
            pass
        try:
            if self.km is not None and self.km.is_alive():
                self.km.shutdown_kernel(now=True)
        except Exception:
            pass
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "KernelHarness":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()

    # -- readers --------------------------------------------------------------------

    def _read_iopub(self) -> None:
        while not self._stop.is_set():
            try:
                msg = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            except Exception:
                if self._stop.is_set():
                    return
                continue
            parent = msg.get("parent_header", {}).get("msg_id", "")
            with self._lock:
                self._all.append(msg)
                self._by_parent.setdefault(parent, []).append(msg)
                content = msg.get("content", {})
                opened = None
                if msg["msg_type"] == "comm_open" and content.get("target_name") == "jupyter.widget":
                    self._comms[content["comm_id"]] = dict(content["data"].get("state", {}))
                    opened = content["comm_id"], dict(self._comms[content["comm_id"]])
                elif msg["msg_type"] == "comm_msg":
                    data = content.get("data", {})
                    cid = content.get("comm_id")
                    if cid in self._comms and data.get("method") in ("update", "echo_update"):
                        self._comms[cid].update(data.get("state", {}))
                    elif data.get("method") == "custom":
                        self._custom.setdefault(cid, []).append(data.get("content"))
                        self._custom_buffers.setdefault(cid, []).append([bytes(b) for b in msg.get("buffers") or []])
                elif msg["msg_type"] == "comm_close":
                    self._comms.pop(content.get("comm_id"), None)
            if opened is not None and self.draws_panels and opened[1].get("_anywidget_id") == PANEL_WIDGET:
                self.say_drawn(opened[0])
            hook = self.on_comm_open
            if opened is not None and hook is not None:
                hook(*opened)

    def _read_shell(self) -> None:
        """The shell socket is the senders' too, so it is polled without waiting, under the
        wire lock (senders never wait long): every 5 ms once a request was sent, backing
        off to every 50 ms while no reply comes. Polled every 5 ms throughout, an idle
        harness cost 5% of a core; a reply is seen at most 50 ms late."""
        pause = SHELL_POLL_S[0]
        while not self._stop.is_set():
            try:
                with self._wire:
                    msg = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                if self._sent.wait(pause):
                    self._sent.clear()
                    pause = SHELL_POLL_S[0]
                else:
                    pause = min(pause * 2, SHELL_POLL_S[1])
                continue
            except Exception:
                if self._stop.is_set():
                    return
                continue
            pause = SHELL_POLL_S[0]
            parent = msg.get("parent_header", {}).get("msg_id", "")
            with self._lock:
                self._replies[parent] = msg
                if msg.get("msg_type") == "execute_reply":
                    self._unanswered.discard(parent)
                    status = msg["content"].get("status")
                    if status != "aborted":
                        self._aborting_after_error = status == "error"

    @contextlib.contextmanager
    def _sending(self) -> Iterator[None]:
        """Hold the wire to send a request on the shell channel; its reply is then due."""
        with self._wire:
            yield
        self._sent.set()

    def _read_stdin(self) -> None:
        while not self._stop.is_set():
            try:
                msg = self.kc.get_stdin_msg(timeout=0.1)
            except queue.Empty:
                continue
            except Exception:
                if self._stop.is_set():
                    return
                continue
            if msg["msg_type"] == "input_request":
                with self._lock:
                    self.input_requests.append(msg)
                answer = self._next_answer(timeout=60)
                if answer is None:  # shutting down
                    return
                with self._wire:
                    self.kc.input(answer)

    def _next_answer(self, timeout: float) -> str | None:
        """The queued answer to a prompt ("" after ``timeout``), None once stopping."""
        deadline = time.monotonic() + timeout
        while not self._stop.is_set():
            try:
                return self._stdin_answers.get(timeout=0.1)
            except queue.Empty:
                if time.monotonic() > deadline:
                    return ""
        return None

    # -- requests -------------------------------------------------------------------

    def execute(self, code: str, allow_stdin: bool = True) -> str:
        """Send an execute_request without waiting; its msg_id. ``allow_stdin=False``
        is what clients without stdin (nbclient, papermill, Voila) send."""
        self._wait_until_the_kernel_stops_aborting()
        return self._send_execute(code, allow_stdin=allow_stdin)

    def _send_execute(self, code: str, allow_stdin: bool = True, silent: bool = False) -> str:
        with self._sending():
            msg_id = self.kc.execute(code, silent=silent, allow_stdin=allow_stdin, store_history=not silent)
            with self._lock:
                self._unanswered.add(msg_id)
            return msg_id

    def _wait_until_the_kernel_stops_aborting(self, timeout: float = 60) -> None:
        """After a cell fails, ipykernel aborts every execute_request that reaches it
        before its event loop turns once more (6.x schedules the end of the abort on the
        next turn). A cell sent at once after the error's reply and idle status can be
        aborted when the kernel's process was not scheduled meanwhile: seen on a loaded
        2-core machine. A user types slower than that; a test sends its next cell at once.
        So, with nothing else in flight, a silent no-op is sent until one runs: then the
        abort is over, and the cell is not aborted for the failure before it."""
        with self._lock:
            if not self._aborting_after_error or self._unanswered:
                return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            probe = self.wait_reply(self._send_execute("", silent=True), timeout=timeout)
            if probe.status != "aborted":
                return
            time.sleep(0.02)
        raise TimeoutError(f"the kernel still aborted requests {timeout}s after a cell failed")

    def answer_input(self, text: str) -> None:
        """Queue the answer to the next ``input()`` prompt."""
        self._stdin_answers.put(text)

    def wait_reply(self, msg_id: str, timeout: float = 60) -> CellResult:
        """Wait for the execute_reply and for the kernel's idle status of ``msg_id``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                reply = self._replies.get(msg_id)
                msgs = list(self._by_parent.get(msg_id, []))
            idle = any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in msgs)
            if reply is not None and idle:
                # outputs published just before idle have arrived; give stragglers a beat
                time.sleep(0.05)
                with self._lock:
                    msgs = list(self._by_parent.get(msg_id, []))
                return CellResult(msg_id, msgs, reply)
            time.sleep(0.02)
        raise TimeoutError(f"no execute_reply for {msg_id} within {timeout}s; so far {self.result(msg_id)!r}")

    def run(self, code: str, timeout: float = 60, allow_stdin: bool = True) -> CellResult:
        """Execute and wait; the result."""
        return self.wait_reply(self.execute(code, allow_stdin=allow_stdin), timeout=timeout)

    def assert_alive(self) -> None:
        """The kernel still runs a new cell, with its output."""
        after = self.run("print('alive', 6 * 7)", timeout=120)
        assert after.status == "ok" and after.stdout == "alive 42\n", after

    def result(self, msg_id: str) -> CellResult:
        """What arrived so far for ``msg_id`` (reply may be None)."""
        with self._lock:
            return CellResult(msg_id, list(self._by_parent.get(msg_id, [])), self._replies.get(msg_id))

    def messages(self) -> list[dict]:
        """Every iopub message the kernel has sent so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._all)

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.02)
        raise TimeoutError(f"timed out waiting for {what}")

    def wait_for_output(self, msg_id: str, text: str, timeout: float = 30) -> CellResult:
        return self.wait_for(
            lambda: (r := self.result(msg_id)) and text in r.stdout and r, timeout, f"{text!r} in output of {msg_id}"
        )

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    # -- widgets --------------------------------------------------------------------

    def widgets(self) -> dict[str, dict]:
        """comm_id -> latest known model state, for open widget comms."""
        with self._lock:
            return {k: dict(v) for k, v in self._comms.items()}

    def find_widget(self, model_name: str, timeout: float = 30, **state: Any) -> str:
        """comm_id of a widget model (e.g. "ButtonModel", description="Go")."""

        def look() -> str | None:
            for cid, st in self.widgets().items():
                if st.get("_model_name") == model_name and all(st.get(k) == v for k, v in state.items()):
                    return cid
            return None

        return self.wait_for(look, timeout, f"{model_name} {state}")

    def comm_msg(self, comm_id: str, data: dict, buffers: list[bytes] | None = None) -> str:
        """Send a comm_msg on the shell channel, as a frontend does; its msg_id."""
        return self.send_message("comm_msg", {"comm_id": comm_id, "data": data}, buffers=buffers)["header"]["msg_id"]

    def send_message(
        self, msg_type: str, content: dict, channel: str = "shell", buffers: list[bytes] | None = None
    ) -> dict:
        """Send a request as a frontend does, on ``channel`` (shell, control); the message."""
        with self._sending():
            msg = self.kc.session.msg(msg_type, content)
            if buffers:
                msg["buffers"] = buffers
            getattr(self.kc, f"{channel}_channel").send(msg)
        return msg

    def complete(self, code: str, cursor_pos: int) -> str:
        """A complete_request (the notebook's Tab); its msg_id."""
        with self._sending():
            return self.kc.complete(code, cursor_pos)

    def inspect(self, code: str, cursor_pos: int) -> str:
        """An inspect_request (the notebook's Shift+Tab); its msg_id."""
        with self._sending():
            return self.kc.inspect(code, cursor_pos)

    def click(self, comm_id: str) -> str:
        """A Button click: ipywidgets 8 sends a custom message {"event": "click"}."""
        return self.comm_msg(comm_id, {"method": "custom", "content": {"event": "click"}})

    def say_drawn(self, comm_id: str) -> None:
        """What the panel's browser code sends once per panel: its widget manager holds
        it, and a view of it rendered."""
        with self._lock:
            if comm_id in self.panels_drawn:
                return
            self.panels_drawn.add(comm_id)
        self.send_custom(comm_id, {"type": "held"})
        self.send_custom(comm_id, {"type": "drawn"})

    def send_custom(self, comm_id: str, content: Any) -> str:
        """What an anywidget's ``model.send(content)`` sends from the browser."""
        return self.comm_msg(comm_id, {"method": "custom", "content": content})

    def custom_messages(self, comm_id: str) -> list[Any]:
        """The custom messages the kernel sent to a widget so far (``model.on("msg:custom")``)."""
        with self._lock:
            return list(self._custom.get(comm_id, []))

    def custom_with_buffers(self, comm_id: str) -> list[tuple[Any, list[bytes]]]:
        """The custom messages the kernel sent to a widget, each with its binary buffers."""
        with self._lock:
            return list(zip(self._custom.get(comm_id, []), self._custom_buffers.get(comm_id, [])))

    def set_value(self, comm_id: str, **state: Any) -> str:
        """A value change from the frontend: an ``update`` with the changed state."""
        return self.comm_msg(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def close_comm(self, comm_id: str) -> str:
        """The frontend closing a widget model (comm_close)."""
        msg = self.send_message("comm_close", {"comm_id": comm_id, "data": {}})
        with self._lock:  # the frontend forgets the model; the kernel sends no close back
            self._comms.pop(comm_id, None)
        return msg["header"]["msg_id"]


@contextlib.contextmanager
def kernel_set_up_with(python: str, setup: str, expect: str = "devices 8") -> Iterator[KernelHarness]:
    """A started kernel (8 host devices) that ran ``setup``, whose output shows ``expect``."""
    harness = KernelHarness(python, env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS})
    try:
        harness.start()
        result = harness.run(setup, timeout=180)
        assert result.status == "ok", result
        assert expect in result.stdout, result
        yield harness
    finally:
        harness.shutdown()


#: The call phase's report of a test, kept on its item by ``tests/conftest.py`` so a
#: shared kernel's fixture can tell, at teardown, whether the test that used it failed.
CALL_REPORT = pytest.StashKey[pytest.TestReport]()


@pytest.hookimpl(hookwrapper=True)
def keep_call_report(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """``pytest_runtest_makereport`` for conftest: keeps the call report on the item."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call":
        item.stash[CALL_REPORT] = report


class SharedKernels:
    """The kernels the tests of one module share, one per :func:`kernel_fixture`, started
    on first use. A test that fails may leave its kernel paused at a stop; that kernel is
    shut down, so the module's next test starts a fresh one instead of failing behind it."""

    def __init__(self, python: str) -> None:
        self.python = python
        self._open: dict[object, contextlib.ExitStack] = {}
        self._kernels: dict[object, KernelHarness] = {}

    def get(self, key: object, setup: str, expect: str) -> KernelHarness:
        if key not in self._kernels:
            stack = contextlib.ExitStack()
            self._kernels[key] = stack.enter_context(kernel_set_up_with(self.python, setup, expect))
            self._open[key] = stack
        return self._kernels[key]

    def discard(self, key: object) -> None:
        self._kernels.pop(key, None)
        stack = self._open.pop(key, None)
        if stack is not None:
            stack.close()

    def close(self) -> None:
        for key in list(self._open):
            self.discard(key)


@pytest.fixture(scope="module", params=kernel_pythons())
def shared_kernels(request: pytest.FixtureRequest) -> Iterator[SharedKernels]:
    kernels = SharedKernels(request.param)
    try:
        yield kernels
    finally:
        kernels.close()


def kernel_fixture(setup: str, expect: str = "devices 8", scope: str = "module") -> Any:
    """A fixture: one kernel per Python of the matrix that ran ``setup`` and showed
    ``expect``, shared by the tests of a module (kernels are slow to start) unless
    ``scope="function"``. The module names it by the name it binds::

        kernel = kernel_fixture(SETUP)
        own_kernel = kernel_fixture(SETUP, scope="function")

    A shared kernel is replaced after a test that failed with it (see :class:`SharedKernels`).
    """
    if scope == "function":

        @pytest.fixture(params=kernel_pythons())
        def own_kernel(request: pytest.FixtureRequest) -> Iterator[KernelHarness]:
            with kernel_set_up_with(request.param, setup, expect) as harness:
                yield harness

        return own_kernel
    key = object()

    @pytest.fixture
    def shared_kernel(shared_kernels: SharedKernels, request: pytest.FixtureRequest) -> Iterator[KernelHarness]:
        yield shared_kernels.get(key, setup, expect)
        report = request.node.stash.get(CALL_REPORT, None)
        if report is None or report.failed:
            shared_kernels.discard(key)

    return shared_kernel


@pytest.fixture(params=kernel_pythons())
def kernel_python(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def kernel(kernel_python: str) -> Iterator[KernelHarness]:
    harness = KernelHarness(kernel_python, env={"XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS})
    try:
        harness.start()
        yield harness
    finally:
        harness.shutdown()
