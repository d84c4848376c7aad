"""ipykernel 6.x (Colab): pump the main shell's queue while a cell is paused.

6.x has no subshells. A helper thread handles queued shell messages (what
jupyter-ui-poll does on 6.x) on an event loop of its own, holds back the
``execute_request``s that arrive meanwhile, and replays them after the paused cell,
in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import sys
import threading
import weakref
from typing import Any, Callable, Iterator

from jaxdbg.internals.ipykernel_busy import main_shell_busy, runs_cells_outside_dispatch
from jaxdbg.internals.ipykernel_kernel import kernel_version
from jaxdbg.internals.ipykernel_parents import current_parent
from jaxdbg.internals.ipykernel_queued_cells import notify_queued_cell

__all__ = ["supports_pump", "process_one_shell_message", "shell_pump"]

_lock = threading.Lock()


def supports_pump(kernel: Any) -> bool:
    """Whether the 6.x pump works here: ``do_one_iteration`` and a tornado msg_queue.

    ipykernel 7 removed the main-shell queue this relies on (7.1 dropped
    ``do_one_iteration``), so the pump is for 6.x only.
    """
    version = kernel_version()
    if kernel is None or version is None or version >= (7,):
        return False
    return (
        inspect.iscoroutinefunction(getattr(kernel, "do_one_iteration", None))
        and hasattr(kernel, "msg_queue")
        and hasattr(kernel, "schedule_dispatch")
        and "execute_request" in getattr(kernel, "shell_handlers", {})
        and getattr(kernel, "io_loop", None) is not None
    )


def process_one_shell_message(kernel: Any, loop: asyncio.AbstractEventLoop) -> bool:
    """Handle at most one queued shell message on ``loop`` (not the kernel's loop).

    ``do_one_iteration`` reads pending messages off the shell socket into the kernel's
    queue and dispatches one. It must run on an event loop other than the kernel's,
    which is blocked in the paused cell; the caller owns that loop. Only safe while
    the main thread is busy (it is then not reading the socket or the queue).
    Returns whether more messages are already queued.
    """
    with _keep_global_stream_parents():
        loop.run_until_complete(kernel.do_one_iteration())
    return bool(kernel.msg_queue.qsize())


@contextlib.contextmanager
def _keep_global_stream_parents() -> Iterator[None]:
    """ipykernel < 6.29 (Colab's 6.17) keeps one global parent per output stream, and
    handling a widget message moves it to that message (``OutStream.set_parent``): the
    paused cell's prints, from any thread, would go to the click and frontends drop
    them. While the pump handles a message the streams keep the cell's parent. Newer
    streams keep per-thread parents (``_parent_header``) and need nothing."""
    streams = [
        s
        for s in (sys.stdout, sys.stderr)
        if not hasattr(s, "_parent_header")
        and hasattr(s, "set_parent")
        and isinstance(getattr(s, "parent_header", None), dict)
    ]
    for stream in streams:
        stream.set_parent = _ignore_parent  # an instance attribute shadows the method
    try:
        yield
    finally:
        for stream in streams:
            try:
                del stream.set_parent
            except AttributeError:
                pass


def _ignore_parent(parent: Any) -> None:
    pass


class _ShellPump:
    """One helper thread per kernel that pumps shell messages while anyone waits.

    Shared and reference counted, because with several devices many breakpoint
    threads wait at once and two pumps must never read the shell socket together.
    While it runs, ``execute_request``s are held back (the paused cell is still
    running); when it stops they are re-queued on the kernel's own loop, in arrival
    order, so they run after the paused cell with their own output.

    The thread lives as long as the kernel and serves one pause after another: on
    ipykernel 6.x each thread that publishes on iopub gets a zmq socket of its own
    (an eventfd) that is closed late or never, so a thread per pause leaked one a cell.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self._lock = threading.Lock()  # guards waiters and starting a pause
        # The waiting threads, by ident. A set rather than a count: a Ctrl-C can raise
        # KeyboardInterrupt in the main thread between any two of its bytecodes, also
        # inside acquire or release (a stop waits in short rounds, acquiring and
        # releasing at each), and adding or discarding oneself twice, or not at all,
        # must neither leak a waiter (the pump would hold every later cell for ever)
        # nor drop another thread's.
        self._waiters: set[int] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pauses: "queue.SimpleQueue[threading.Event]" = queue.SimpleQueue()
        self._idle = threading.Event()  # set while no pause is being pumped or drained
        self._idle.set()
        self._held: list | None = None  # while pumping: the execute_requests held back
        self.error: BaseException | None = None

    def acquire(self) -> None:
        """The calling thread waits from now on (again: no change)."""
        with self._lock:
            # A pump that is still stopping (draining, restoring the handler) must be
            # done before a new pause reads the socket.
            if not self._waiters:
                self._idle.wait(timeout=10)
            self._waiters.add(threading.get_ident())
            if self._idle.is_set():  # nothing pumps now (or it stopped by itself): start
                self._stop = threading.Event()
                self._idle.clear()
                self._pauses.put(self._stop)
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._serve, name="jaxdbg-shell-pump", daemon=True)
                    self._thread.start()

    def release(self) -> None:
        """The calling thread waits no more (had it not acquired: no change)."""
        with self._lock:
            self._waiters.discard(threading.get_ident())
            if self._waiters:
                return
            self._stop.set()
            if self._thread is not threading.current_thread():
                # Waited for under the lock so a concurrent acquire cannot start a second
                # pause while this one drains; the pump thread never takes the lock.
                self._idle.wait(timeout=10)

    def _serve(self) -> None:
        while True:
            stop = self._pauses.get()
            try:
                self._run(stop)
            finally:
                self._idle.set()

    def _keep_going(self, stop: threading.Event) -> bool:
        # No waiter left: a release cut short by a Ctrl-C before it set ``stop``. If the
        # cell returned while we pumped, the kernel's loop reads the queue again: stop
        # at once rather than race it.
        # Read without the lock, which release holds while it waits for this thread to
        # stop; copying a set is one C call, so it never sees one half changed.
        waiters = set(self._waiters)
        if stop.is_set() or not waiters:
            return False
        return threading.main_thread().ident in waiters or main_shell_busy(self.kernel)

    def holds_here(self, item: tuple[Any, Any, Any]) -> bool:
        """Called by a replay the pump dispatched: hold it again; False if not ours.

        Replays of cells held during an earlier pause sit in the kernel's queue; when
        one of them pauses in turn, this pump reads the others too, and they must wait
        for the cell that now holds the kernel instead of running beside it.
        """
        held = self._held
        if held is None or threading.current_thread() is not self._thread:
            return False
        held.append(item)
        return True

    def _run(self, stop: threading.Event) -> None:
        kernel = self.kernel
        handlers = kernel.shell_handlers
        execute = handlers["execute_request"]
        held: list[tuple[Any, Any, Any]] = []

        def hold(stream: Any, ident: Any, msg: Any) -> None:
            held.append((stream, ident, msg))
            notify_queued_cell(kernel, msg)

        saved_ident, saved_parent = current_parent(kernel)
        loop = asyncio.new_event_loop()
        handlers["execute_request"] = hold
        self._held = held
        try:
            while self._keep_going(stop):
                try:
                    more = process_one_shell_message(kernel, loop)
                finally:
                    # 6.x keeps the parent globally; a handled comm message would
                    # otherwise capture the paused cell's output.
                    kernel.set_parent(saved_ident, saved_parent, channel="shell")
                if not more:
                    stop.wait(0.02)
            # Whatever was already read off the socket must not overtake held cells.
            while kernel.msg_queue.qsize():
                try:
                    loop.run_until_complete(kernel.process_one(wait=False))
                finally:
                    kernel.set_parent(saved_ident, saved_parent, channel="shell")
        except BaseException as exc:  # keep the kernel alive; report to the waiter
            self.error = exc
        finally:
            self._held = None
            if handlers.get("execute_request") is hold:
                handlers["execute_request"] = execute
            loop.close()
            if held:
                batch = _HeldCells(saved_parent, held)
                kernel.io_loop.add_callback(_requeue, kernel, execute, batch)


class _HeldCells:
    """execute_requests that arrived while ``holder`` (a cell's request) was paused.

    They replay after it, as the kernel would have run them. Like ipykernel's own
    queue, they are aborted once the holder or an earlier one of them failed
    (unless that request was silent or asked not to stop on error).
    """

    def __init__(self, holder: dict, items: list[tuple[Any, Any, Any]]) -> None:
        self.holder = holder
        self.items = items
        self.stopped: bool | None = None  # decided when the first one replays


def _ran_and_failed(kernel: Any, request: dict) -> bool:
    """Whether ``request``, the last cell the kernel ran, failed in a way that aborts
    the requests queued behind it (ipykernel: not silent, ``stop_on_error``)."""
    header = request.get("header") or {}
    content = request.get("content") or {}
    if header.get("msg_type") != "execute_request":
        return False  # e.g. a widget handler that hit a breakpoint
    if content.get("silent", False) or not content.get("stop_on_error", True):
        return False
    result = getattr(getattr(kernel, "shell", None), "last_execution_result", None)
    return result is not None and not result.success


def _requeue(kernel: Any, execute: Callable, batch: _HeldCells) -> None:
    """On the kernel's loop: queue held execute_requests behind the paused cell."""
    for stream, ident, msg in batch.items:
        kernel.schedule_dispatch(_replay, kernel, execute, batch, stream, ident, msg)


@runs_cells_outside_dispatch
async def _replay(kernel: Any, execute: Callable, batch: _HeldCells, stream: Any, ident: Any, msg: Any) -> None:
    # Dispatched by a pump serving a cell that paused meanwhile: wait behind that one.
    pump = _pumps.get(kernel)
    if pump is not None and pump.holds_here((stream, ident, msg)):
        return
    if batch.stopped is None:
        batch.stopped = _ran_and_failed(kernel, batch.holder)
    # What dispatch_shell does around a handler (6.29); the busy/idle pair it sent
    # when the request was held is repeated here, which frontends accept.
    kernel.set_parent(ident, msg, channel="shell")
    kernel._publish_status("busy", "shell")
    try:
        if batch.stopped or getattr(kernel, "_aborting", False):
            # The paused cell failed: queued cells are aborted, as ipykernel would.
            kernel._send_abort_reply(stream, msg, ident)
            return
        # 6.x lets SIGINT raise KeyboardInterrupt only inside this hook pair; without
        # it a replayed cell cannot be interrupted.
        kernel.pre_handler_hook()
        try:
            result = execute(stream, ident, msg)
            if inspect.isawaitable(result):
                await result
        finally:
            kernel.post_handler_hook()
        if _ran_and_failed(kernel, msg):
            batch.stopped = True
    except Exception:
        kernel.log.error("jaxdbg: replaying a held execute_request failed", exc_info=True)
    except KeyboardInterrupt:
        kernel.log.error("KeyboardInterrupt caught in kernel.")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        kernel._publish_status("idle", "shell")
        try:
            stream.flush()
        except Exception:
            pass


_pumps: "weakref.WeakKeyDictionary[Any, _ShellPump]" = weakref.WeakKeyDictionary()


def shell_pump(kernel: Any) -> _ShellPump:
    """The kernel's shared shell pump (6.x); ``acquire``/``release`` around a wait."""
    with _lock:
        pump = _pumps.get(kernel)
        if pump is None:
            pump = _pumps[kernel] = _ShellPump(kernel)
        return pump


def wait_until_idle(kernel: Any, timeout: float) -> None:
    """Until ``kernel``'s shell pump, if it pumps, has stopped and put the paused cell's
    parent back. On ipykernel 6.x one parent serves every message: an error the cell
    shows as its stop ends must not go out while the pump still handles a widget
    message, under that message's parent (the cell would show no error)."""
    pump = _pumps.get(kernel) if kernel is not None else None
    if pump is not None:
        pump._idle.wait(timeout)
