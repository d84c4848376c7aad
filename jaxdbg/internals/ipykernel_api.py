"""The one place that touches private ipykernel internals.

Why it exists: while a cell runs, ipykernel's main shell handles no comm (widget)
messages, so a panel shown by a paused breakpoint would be dead. Making its handlers
run anyway needs ipykernel internals that no public API offers:

- ipykernel >= 7.4: a private kernel subshell (own thread, own event loop) and a
  per-comm route that sends the frontend's messages for a comm to that subshell.
- ipykernel 6.x (Colab): no subshells; pump the main shell's queue from a helper thread
  (what jupyter-ui-poll does on 6.x), holding back ``execute_request``s and replaying
  them after the paused cell, in order.
- both: pin the paused cell's parent header on the breakpoint's thread so its prints,
  displays and ``input()`` prompts land in that cell.

Every private name used here is listed in :func:`adapter_status`, which a test checks
against the installed ipykernel, so a move in ipykernel fails loudly in CI instead of
silently leaving a dead panel. Nothing here imports jax or ipywidgets.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import queue
import sys
import threading
import weakref
from typing import Any, Callable, Iterator

__all__ = [
    "current_kernel",
    "kernel_version",
    "supports_subshells",
    "create_subshell",
    "route_comm_to_subshell",
    "watch_comm_opens",
    "answer_info_requests",
    "can_answer_info_requests",
    "current_parent",
    "cell_parent",
    "track_cells",
    "untrack_cells",
    "pin_thread_parent",
    "comm_closed",
    "display_parent_6x",
    "main_shell_busy",
    "keep_cell_busy",
    "supports_pump",
    "shell_pump",
    "process_one_shell_message",
    "adapter_status",
]


# --------------------------------------------------------------------------- kernel


def current_kernel() -> Any | None:
    """The running ipykernel kernel object, or None outside a kernel.

    Never imports IPython or ipykernel itself: if they are not loaded we cannot be in
    a kernel, and importing them would be slow and pointless.
    """
    if "ipykernel" not in sys.modules:
        return None
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
    except Exception:
        return None
    kernel = getattr(shell, "kernel", None)
    # An ipykernel kernel has a session and a shell handler table; an in-process or
    # foreign "kernel" attribute without them cannot be driven the ways used here.
    if kernel is None or not hasattr(kernel, "shell_handlers"):
        return None
    return kernel


def kernel_version() -> tuple[int, ...] | None:
    """ipykernel's version as a tuple of ints, e.g. ``(7, 4, 0)``; None when absent."""
    ipk = sys.modules.get("ipykernel")
    if ipk is None:
        try:
            import ipykernel as ipk
        except Exception:
            return None
    text = getattr(ipk, "__version__", "") or ""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or None


# --------------------------------------------------------------------------- subshells


def _comm_routing_available() -> bool:
    """True when ipykernel routes a frontend's comm message by the comm's own route.

    ipykernel 7.4 added ``BaseComm._reply_subshell_for(data, default)``, consulted by
    the shell channel thread for every ``comm_msg`` / ``comm_close``. Without it
    (7.0 - 7.3) the frontend alone picks the subshell, and we cannot rely on that.
    """
    try:
        from ipykernel.comm.comm import BaseComm
    except Exception:
        return False
    return callable(getattr(BaseComm, "_reply_subshell_for", None))


def supports_subshells(kernel: Any) -> bool:
    """Whether a private subshell can take this kernel's widget messages.

    Needs ipykernel >= 7.4 (comm routing), a kernel started with subshell support
    (``kernel._supports_kernel_subshells``; False when there is no shell channel
    thread), and the inproc control pair we create the subshell through.
    """
    version = kernel_version()
    if kernel is None or version is None or version < (7, 4):
        return False
    try:
        if not kernel._supports_kernel_subshells:
            return False
        manager = kernel.shell_channel_thread.manager
        manager.control_to_shell_channel.from_socket  # noqa: B018 - presence check
    except Exception:
        return False
    return _comm_routing_available()


_subshells: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_subshell_lock = threading.Lock()


def _send_create_request(kernel: Any) -> dict:
    # Exactly what Kernel.create_subshell_request does on the control thread.
    sock = kernel.shell_channel_thread.manager.control_to_shell_channel.from_socket
    sock.send_json({"type": "create"})
    return sock.recv_json()


def create_subshell(kernel: Any, timeout: float = 10.0) -> str:
    """Create (once per kernel) a private subshell from inside the kernel; its id.

    The public way is a ``create_subshell_request`` on the control channel (JEP 91),
    which only a frontend can send. Inside the kernel, that handler's body is two
    calls on a ZMQ PAIR socket owned by the control thread. ZMQ sockets are not
    thread-safe, so rather than using that socket from the breakpoint's thread we run
    the same two calls *on the control thread* (its tornado loop's ``add_callback``
    is thread-safe), where they serialize with real control requests. Only if there is
    no control thread do we call it here, under a lock.
    """
    with _subshell_lock:
        cached = _subshells.get(kernel)
        if cached is not None:
            return cached
        control_thread = getattr(kernel, "control_thread", None)
        io_loop = getattr(control_thread, "io_loop", None)
        if control_thread is not None and io_loop is not None and control_thread.is_alive():
            future: concurrent.futures.Future = concurrent.futures.Future()

            def on_control_thread() -> None:
                try:
                    future.set_result(_send_create_request(kernel))
                except BaseException as exc:  # report anything to the waiting thread
                    future.set_exception(exc)

            io_loop.add_callback(on_control_thread)
            reply = future.result(timeout=timeout)
        else:
            reply = _send_create_request(kernel)
        if reply.get("status") != "ok" or "subshell_id" not in reply:
            raise RuntimeError(f"could not create a kernel subshell: {reply!r}")
        subshell_id = str(reply["subshell_id"])
        _subshells[kernel] = subshell_id
        return subshell_id


def route_comm_to_subshell(comm: Any, subshell_id: str) -> Callable[[], None]:
    """Send the frontend's messages for ``comm`` to the subshell; returns an undo.

    ipykernel 7.4's shell channel thread asks ``comm._reply_subshell_for(data,
    default)`` where to send each ``comm_msg`` / ``comm_close``. The class version
    answers with ``comm._reply_subshell_id``, but ``BaseComm.publish_msg`` overwrites
    that attribute with the subshell of whatever thread last *sent* on the comm (None
    for the main shell), so one state update sent from the breakpoint's thread would
    route clicks back to the blocked main shell. An instance-level override is immune
    to that; it still calls the class method so per-request reply routes keep being
    consumed.
    """
    original = getattr(type(comm), "_reply_subshell_for", None)

    def route(data: Any, default: Any) -> str:
        if original is not None:
            original(comm, data, default)
        return subshell_id

    route._jaxdbg_subshell = subshell_id  # type: ignore[attr-defined]
    comm._reply_subshell_for = route

    def undo() -> None:
        if comm.__dict__.get("_reply_subshell_for") is route:
            del comm.__dict__["_reply_subshell_for"]

    return undo


_open_watchers: dict[int, Callable[[Any], None]] = {}  # thread ident -> callback
_hooked_managers: "weakref.WeakSet[Any]" = weakref.WeakSet()


def watch_comm_opens(kernel: Any, callback: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``callback(comm)`` for each comm opened on the calling thread from now on,
    after it is registered and *before* its ``comm_open`` reaches the frontend.

    Routing a widget's comm only after the widget was built leaves a window in which
    the frontend already knows the widget: a click sent then goes to the blocked main
    shell and is lost for the whole pause. ``comm.base_comm.BaseComm.open`` registers
    the comm with the comm manager (``register_comm``, public API of ``comm``) before
    it publishes; an instance-level wrapper there sees it first. Returns an undo to
    call on the same thread.
    """
    manager = getattr(kernel, "comm_manager", None)
    original = getattr(manager, "register_comm", None)
    if manager is None or original is None:
        return lambda: None
    with _subshell_lock:
        if manager not in _hooked_managers:
            def register_comm(comm: Any) -> Any:
                comm_id = original(comm)
                watcher = _open_watchers.get(threading.get_ident())
                if watcher is not None:
                    try:
                        watcher(comm)
                    except Exception:
                        pass
                return comm_id

            manager.register_comm = register_comm
            _hooked_managers.add(manager)
    key = threading.get_ident()
    previous = _open_watchers.get(key)
    _open_watchers[key] = callback

    def undo() -> None:
        if _open_watchers.get(key) is callback:
            if previous is None:
                del _open_watchers[key]
            else:
                _open_watchers[key] = previous

    return undo


# Requests a page sends when it (re)connects. ipykernel 7 queues them for the main
# shell, which a paused cell blocks, so a reloaded page could not rebuild the panel.
INFO_REQUESTS = ("kernel_info_request", "comm_info_request")
# Requests of the notebook's other cells (Tab completion, Shift+Tab help) that need no
# cell to finish: while a stop holds the main shell they go to the stop's subshell,
# whose thread answers them with the kernel's own handlers (JEP 91 subshells run any
# shell request), instead of waiting in the main shell's queue until the stop ends.
SUBSHELL_REQUESTS = ("complete_request", "inspect_request")


class _InfoDesk:
    """Answers INFO_REQUESTS on the shell channel thread while a stop is paused, and
    hands SUBSHELL_REQUESTS to the stop's subshell.

    ipykernel >= 7.4 reads the shell socket on its own thread
    (``kernel.shell_channel_thread``) and forwards each message with
    ``kernel.shell_channel_thread_main``, registered through pyzmq's public
    ``ZMQStream.on_recv``. We register a wrapper the same way: while anyone holds
    the desk it answers these two read-only requests itself (with the content the
    kernel's own handlers produce) and forwards everything else unchanged.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.users = 0
        self.installed = False

    def install(self) -> None:
        kernel = self.kernel
        stream = kernel.shell_stream
        forward = kernel.shell_channel_thread_main
        loop = kernel.shell_channel_thread.io_loop

        async def on_shell_message(msg: Any) -> None:
            if self.users > 0:
                try:
                    if self._answer(msg):
                        return
                except Exception:
                    kernel.log.error("jaxdbg: answering a shell request failed", exc_info=True)
            await forward(msg)

        loop.add_callback(stream.on_recv, on_shell_message, copy=False)
        self.installed = True

    def _answer(self, msg: Any) -> bool:
        kernel = self.kernel
        session = kernel.session
        idents, frames = session.feed_identities(msg, copy=False)
        peeked = session.deserialize(frames, content=False, copy=False)
        header = peeked["header"]
        if header.get("subshell_id"):
            return False  # the frontend chose a subshell itself
        if header.get("msg_type") in SUBSHELL_REQUESTS:
            return self._to_subshell(msg)
        if header.get("msg_type") == "execute_request":
            # It queues behind the paused cell; tell the stop (its header is all it
            # needs: reading the content would record the signature, and the kernel
            # would then drop the message as a replay), then let it queue.
            notify_queued_cell(kernel, {"header": header, "parent_header": peeked.get("parent_header", {})})
            return False
        if header.get("msg_type") not in INFO_REQUESTS:
            return False
        request = session.deserialize(frames, content=True, copy=False)
        kernel._publish_status("busy", "shell", parent=request)
        if header["msg_type"] == "kernel_info_request":
            reply_type, content = "kernel_info_reply", {"status": "ok", **kernel.kernel_info}
        else:
            target = (request.get("content") or {}).get("target_name")
            comms = dict(kernel.comm_manager.comms)  # a copy: others add comms meanwhile
            content = {"status": "ok", "comms": {
                cid: {"target_name": c.target_name} for cid, c in comms.items()
                if target is None or c.target_name == target}}
            reply_type = "comm_info_reply"
        session.send(kernel.shell_stream, reply_type, content, request, idents)
        kernel._publish_status("idle", "shell", parent=request)
        return True

    def _to_subshell(self, msg: Any) -> bool:
        """Forward the request to the stop's subshell as a frontend would address it:
        with the subshell's id in its header (a subshell takes only its own), signed
        again. We are on the shell channel thread, which owns the subshell's socket."""
        subshell_id = _subshells.get(self.kernel)
        if subshell_id is None:
            return False
        session = self.kernel.session
        idents, frames = session.feed_identities(msg, copy=False)
        request = session.deserialize(frames, content=True, copy=False)
        request["header"]["subshell_id"] = subshell_id
        manager = self.kernel.shell_channel_thread.manager
        socket = manager.get_shell_channel_to_subshell_socket(subshell_id)
        socket.send_multipart(session.serialize(request, ident=idents))
        return True


_desks: "weakref.WeakKeyDictionary[Any, _InfoDesk]" = weakref.WeakKeyDictionary()


def can_answer_info_requests(kernel: Any) -> bool:
    """Whether :func:`answer_info_requests` works with this kernel (ipykernel >= 7.4)."""
    version = kernel_version()
    if kernel is None or version is None or version < (7, 4):
        return False
    try:
        return (kernel._supports_kernel_subshells
                and callable(kernel.shell_channel_thread_main)
                and callable(kernel.shell_stream.on_recv)
                and kernel.shell_channel_thread.io_loop is not None)
    except Exception:
        return False


def answer_info_requests(kernel: Any) -> Callable[[], None]:
    """While held, ``kernel_info_request`` and ``comm_info_request`` are answered even
    though the main shell is blocked, and ``complete_request`` / ``inspect_request``
    are answered by the stop's subshell; returns the release (call it once).

    A page reloaded during a pause sends these first; with the replies, ipywidgets
    rebuilds every live widget from the kernel (``request_state`` goes through each
    comm's own route, i.e. to the stop's subshell), so the paused panel comes back.
    No-op where unsupported; ipykernel 6's shell pump answers them anyway.
    """
    if not can_answer_info_requests(kernel):
        return lambda: None
    with _subshell_lock:
        desk = _desks.get(kernel)
        if desk is None:
            desk = _desks[kernel] = _InfoDesk(kernel)
        if not desk.installed:
            desk.install()
        desk.users += 1
    released = threading.Event()

    def release() -> None:
        with _subshell_lock:
            if not released.is_set():
                released.set()
                desk.users -= 1

    return release


# --------------------------------------------------------------------------- queued cells

_queued_cell_watchers: "weakref.WeakKeyDictionary[Any, list[Callable[[dict], None]]]" = \
    weakref.WeakKeyDictionary()


def watch_queued_cells(kernel: Any, callback: Callable[[dict], None]) -> Callable[[], None]:
    """Call ``callback(request)`` for each ``execute_request`` that arrives while a
    cell is paused (it waits behind the paused cell: 7.4's info desk and 6.x's pump
    see it first). Called on the thread that read it; returns the undo."""
    with _subshell_lock:
        _queued_cell_watchers.setdefault(kernel, []).append(callback)

    def undo() -> None:
        with _subshell_lock:
            watchers = _queued_cell_watchers.get(kernel, [])
            if callback in watchers:
                watchers.remove(callback)
    return undo


def notify_queued_cell(kernel: Any, request: dict) -> None:
    with _subshell_lock:
        watchers = list(_queued_cell_watchers.get(kernel, []))
    for callback in watchers:
        try:
            callback(request)
        except Exception:
            kernel.log.error("jaxdbg: a queued-cell watcher failed", exc_info=True)


# --------------------------------------------------------------------------- parents


def current_parent(kernel: Any) -> tuple[Any, dict]:
    """(ident, parent message) of the shell request the calling thread belongs to.

    7.x keeps both in ContextVars (``_shell_parent_ident``, read through
    ``_get_shell_context_var`` which falls back to the last request's context on
    threads that never set them); 6.x keeps them globally (``_parent_ident["shell"]``).
    The ident routes ``input()`` prompts on the stdin channel.
    """
    parent = kernel.get_parent("shell")
    var = getattr(kernel, "_shell_parent_ident", None)
    getter = getattr(kernel, "_get_shell_context_var", None)
    if var is not None and getter is not None:
        ident = getter(var)
    else:
        ident = kernel._parent_ident["shell"]
    return ident, parent


_cell_lock = threading.Lock()
_cell_state: dict[str, Any] = {"shell": None, "running": False, "ident": None, "parent": None}


def track_cells(shell: Any | None = None) -> bool:
    """Record each cell's request when it starts (IPython ``pre_run_cell``, public).

    A breakpoint hit on an XLA thread after a widget message was handled on a subshell
    would otherwise see that comm message as its parent (7.x falls back to the last
    request handled on *any* thread). Call from the main thread; idempotent. Takes
    effect from the next cell on.
    """
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if shell is None or kernel is None:
        return False
    with _cell_lock:
        if _cell_state["shell"] is shell:
            return True
        _cell_state["shell"] = shell

    def pre_run_cell(info: Any = None) -> None:
        try:
            ident, parent = current_parent(kernel)
        except Exception:
            return
        with _cell_lock:
            _cell_state.update(running=True, ident=ident, parent=parent)

    def post_run_cell(result: Any = None) -> None:
        with _cell_lock:
            _cell_state.update(running=False)

    shell.events.register("pre_run_cell", pre_run_cell)
    shell.events.register("post_run_cell", post_run_cell)
    _cell_state["callbacks"] = (pre_run_cell, post_run_cell)
    return True


def untrack_cells() -> None:
    """Undo :func:`track_cells` (``%unload_ext jaxdbg``)."""
    with _cell_lock:
        shell, callbacks = _cell_state["shell"], _cell_state.pop("callbacks", None)
        _cell_state.update(shell=None, running=False, ident=None, parent=None)
    if shell is None or callbacks is None:
        return
    for event, callback in zip(("pre_run_cell", "post_run_cell"), callbacks):
        try:
            shell.events.unregister(event, callback)
        except ValueError:
            pass


def cell_parent(kernel: Any) -> tuple[Any, dict]:
    """(ident, parent) of the cell the breakpoint belongs to, from any thread.

    Off the main thread: the running cell, or, when none runs (the callback came after
    its cell returned: asynchronous dispatch), the last cell that ran. Never the last
    request of any kind, which is a widget click once a panel was used; frontends drop
    a display parented to a click, while JupyterLab keeps showing late output in the
    cell that produced it.
    """
    if threading.current_thread() is not threading.main_thread():
        with _cell_lock:
            if _cell_state["parent"]:
                return _cell_state["ident"], _cell_state["parent"]
    return current_parent(kernel)


def pin_thread_parent(kernel: Any, ident: Any, parent: dict) -> Callable[[], None]:
    """Make the calling thread's output, displays and prompts belong to ``parent``.

    Returns an undo to call on the same thread. Uses, in order of preference:
    ``shell.set_thread_parent`` (7.x: displayhook, display publisher, stdout, stderr),
    the kernel's own ContextVars (7.x: used by ``input()`` and by comms opened from
    this thread), and on 6.x the OutStreams' private ``_parent_header`` ContextVar.
    Anything missing is skipped: output then follows ipykernel's default routing.
    """
    undo: list[Callable[[], None]] = []
    shell = getattr(kernel, "shell", None)
    set_thread = getattr(shell, "set_thread_parent", None)
    reset_thread = getattr(shell, "reset_thread_parent", None)
    try:
        if set_thread is not None and reset_thread is not None:
            tokens = set_thread(parent)
            undo.append(lambda: reset_thread(tokens))
        else:
            undo.extend(_pin_streams_6x(parent))
        for name, value in (("_shell_parent", parent), ("_shell_parent_ident", ident)):
            var = getattr(kernel, name, None)
            if var is not None and hasattr(var, "reset"):
                token = var.set(value)
                undo.append(lambda var=var, token=token: var.reset(token))
    except Exception:
        pass

    def undo_all() -> None:
        for fn in reversed(undo):
            try:
                fn()
            except Exception:
                pass

    return undo_all


def _pin_streams_6x(parent: dict) -> list[Callable[[], None]]:
    from jupyter_client.session import extract_header

    header = extract_header(parent)
    undo: list[Callable[[], None]] = []
    for stream in (sys.stdout, sys.stderr):
        var = getattr(stream, "_parent_header", None)
        if var is not None and hasattr(var, "reset"):
            token = var.set(header)
            undo.append(lambda var=var, token=token: var.reset(token))
    return undo


def comm_closed(comm: Any) -> bool:
    """Whether a widget's comm is closed. ipywidgets sets ``widget.comm = None`` on
    ``close()``; a close from the frontend only marks the comm (private ``_closed``)."""
    return comm is None or bool(getattr(comm, "_closed", False))


@contextlib.contextmanager
def display_parent_6x(kernel: Any, parent: dict | None) -> Iterator[None]:
    """Send displays to ``parent`` (ipykernel 6; a no-op on 7, which pins per thread).

    ipykernel 6's display publisher has one global parent (``parent_header``), which
    the shell pump moves to each widget message it handles; displays sent then would
    belong to a click and never reach the paused cell.
    """
    shell = getattr(kernel, "shell", None)
    pub = getattr(shell, "display_pub", None)
    if not parent or pub is None or hasattr(pub, "set_thread_parent") \
            or not hasattr(pub, "parent_header"):
        yield
        return
    from jupyter_client.session import extract_header

    previous = pub.parent_header
    pub.parent_header = extract_header(parent)
    try:
        yield
    finally:
        pub.parent_header = previous


def main_shell_busy(kernel: Any) -> bool:
    """Whether the main thread is inside a shell request (typically running a cell).

    Seen from another thread: a callback may run after its cell returned (older JAX
    dispatched asynchronously); then the main shell handles widgets itself and must
    not be pumped concurrently. The main thread's Python stack tells: ipykernel's
    ``dispatch_shell`` (both 6.x and 7.x) is on it exactly while a request is handled
    synchronously. ``sys._current_frames`` is CPython's documented debugging hook.
    """
    main = threading.main_thread()
    frame = sys._current_frames().get(main.ident)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "dispatch_shell" and "ipykernel" in code.co_filename:
            return True
        # A cell held back by the 6.x pump runs in _replay, outside dispatch_shell.
        if code is _replay.__code__:
            return True
        frame = frame.f_back
    return False


# --------------------------------------------------------------------------- 6.x pump


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
    streams = [s for s in (sys.stdout, sys.stderr)
               if not hasattr(s, "_parent_header") and hasattr(s, "set_parent")
               and isinstance(getattr(s, "parent_header", None), dict)]
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
        self._lock = threading.Lock()  # guards users and starting a pause
        self._users = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pauses: "queue.SimpleQueue[threading.Event]" = queue.SimpleQueue()
        self._idle = threading.Event()  # set while no pause is being pumped or drained
        self._idle.set()
        self._waiter_is_main = False
        self._held: list | None = None  # while pumping: the execute_requests held back
        self.error: BaseException | None = None

    def acquire(self, waiter_is_main: bool) -> None:
        with self._lock:
            # A pump that is still stopping (draining, restoring the handler) must be
            # done before a new pause reads the socket.
            if self._users == 0:
                self._idle.wait(timeout=10)
            self._users += 1
            self._waiter_is_main = self._waiter_is_main or waiter_is_main
            if self._idle.is_set():  # nothing pumps now (or it stopped by itself): start
                self._stop = threading.Event()
                self._idle.clear()
                self._pauses.put(self._stop)
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(
                        target=self._serve, name="jaxdbg-shell-pump", daemon=True)
                    self._thread.start()

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users > 0:
                return
            self._users = 0
            self._waiter_is_main = False
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
        # If the cell returned while we pumped, the kernel's loop reads the queue
        # again: stop at once rather than race it.
        return not stop.is_set() and (self._waiter_is_main or main_shell_busy(self.kernel))

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


async def _replay(kernel: Any, execute: Callable, batch: _HeldCells,
                  stream: Any, ident: Any, msg: Any) -> None:
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
    with _subshell_lock:
        pump = _pumps.get(kernel)
        if pump is None:
            pump = _pumps[kernel] = _ShellPump(kernel)
        return pump


# --------------------------------------------------------------------------- busy while a cell runs


class _KeepCellBusy:
    """Keeps the kernel's reported state busy while a cell runs and requests of other
    kinds are handled meanwhile.

    The kernel handles them beside the running cell, each with its own busy / idle
    status pair: the panel's messages while the cell is paused (on a subshell, 7.4;
    through the shell pump, 6.x), and control requests at any time (JupyterLab asks for
    a subshell for widget comms on the control channel the moment a widget opens, such
    as the live print log's). Frontends show the last status they saw: JupyterLab's
    status bar said Idle while the cell was still running. ``kernel._publish_status``
    is wrapped (an instance attribute over the method) so that every idle for another
    request is followed by a busy for the running cell's request. The idles themselves
    stay: frontends wait for them to end the message's own handling.
    """

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.lock = threading.Lock()
        self.cells: list[dict] = []  # the held cells' requests, newest last

    def hold(self, parent: dict) -> Callable[[], None]:
        kernel = self.kernel
        with self.lock:
            self.cells.append(parent)
            if len(self.cells) == 1:
                publish = type(kernel)._publish_status.__get__(kernel)

                def publish_status(status: str, channel: str, parent: Any = None) -> None:
                    publish(status, channel, parent)
                    if status == "idle":
                        self._busy_again(publish, channel, parent)

                kernel._publish_status = publish_status
        released = False

        def release() -> None:
            nonlocal released
            with self.lock:
                if released:
                    return
                released = True
                self.cells.remove(parent)
                if not self.cells:
                    try:
                        del kernel._publish_status
                    except AttributeError:
                        pass
        return release

    def _busy_again(self, publish: Callable, channel: str, parent: Any) -> None:
        with self.lock:
            running = self.cells[-1] if self.cells else None
        # A stop whose cell has returned (a callback run later) leaves the kernel idle.
        if running is None or not main_shell_busy(self.kernel):
            return
        if parent is None:  # 6.x, and 7.x's control channel: the message being handled
            try:
                parent = self.kernel.get_parent(channel)
            except Exception:
                parent = None
        msg_id = lambda m: ((m or {}).get("header") or {}).get("msg_id")
        if msg_id(parent) == msg_id(running):
            return  # the cell's own idle: it has ended
        try:
            publish("busy", channel, running)
        except Exception:
            self.kernel.log.error("jaxdbg: publishing busy for the running cell failed", exc_info=True)


_busy_keepers: "weakref.WeakKeyDictionary[Any, _KeepCellBusy]" = weakref.WeakKeyDictionary()


def keep_cell_busy(kernel: Any, parent: dict) -> Callable[[], None]:
    """Report ``parent`` (a running cell's execute_request: paused at a stop, or
    writing to the live print log) busy after every other request handled meanwhile;
    returns the undo. Holds nest. A no-op where the kernel has no ``_publish_status``
    or ``parent`` has no header."""
    if not callable(getattr(type(kernel), "_publish_status", None)) or not (parent or {}).get("header"):
        return lambda: None
    with _subshell_lock:
        keeper = _busy_keepers.get(kernel)
        if keeper is None:
            keeper = _busy_keepers[kernel] = _KeepCellBusy(kernel)
    return keeper.hold(parent)


# --------------------------------------------------------------------------- status


def adapter_status(kernel: Any | None = None) -> dict[str, Any]:
    """Which private names this adapter needs, and whether each was found.

    ``required`` lists the names the installed ipykernel's version must have; a test
    asserts they are all present, so a move in ipykernel fails loudly.
    """
    if kernel is None:
        kernel = current_kernel()
    version = kernel_version()
    found: dict[str, bool] = {}

    def has(path: str, obj: Any) -> None:
        cur = obj
        try:
            for part in path.split(".")[1:]:
                cur = getattr(cur, part)
            found[path] = True
        except Exception:
            found[path] = False

    try:
        from ipykernel.comm.comm import BaseComm
    except Exception:
        BaseComm = None
    stdout = sys.stdout
    shell = getattr(kernel, "shell", None)
    if version is not None and version >= (7,):
        required = [
            "kernel._supports_kernel_subshells",
            "kernel.shell_channel_thread.manager.control_to_shell_channel.from_socket",
            "kernel.control_thread.io_loop",
            "kernel._shell_parent",
            "kernel._shell_parent_ident",
            "kernel._get_shell_context_var",
            "shell.set_thread_parent",
            "shell.reset_thread_parent",
            "stdout.set_thread_parent",
            "BaseComm._reply_subshell_for",
            "kernel.shell_channel_thread_main",
            "kernel.shell_stream.on_recv",
            "kernel.shell_channel_thread.io_loop",
            "kernel._publish_status",
            "kernel.kernel_info",
            "kernel.comm_manager.comms",
            "kernel.comm_manager.register_comm",
        ]
    else:
        required = [
            "kernel.do_one_iteration",
            "kernel.process_one",
            "kernel.msg_queue",
            "kernel.schedule_dispatch",
            "kernel.shell_handlers",
            "kernel.io_loop",
            "kernel._parent_ident",
            "kernel._publish_status",
            "kernel._send_abort_reply",
            "kernel.pre_handler_hook",
            "kernel.post_handler_hook",
            "shell.last_execution_result",
            "kernel.comm_manager.register_comm",
            # per-thread stream parents came in 6.29; before, one global parent
            # (OutStream.set_parent) that the pump keeps on the paused cell
            "stdout._parent_header" if version >= (6, 29) else "stdout.set_parent",
        ]
    objects = {"kernel": kernel, "shell": shell, "stdout": stdout, "BaseComm": BaseComm}
    for path in required:
        has(path, objects[path.split(".")[0]])
    return {
        "ipykernel": version,
        "in_kernel": kernel is not None,
        "required": required,
        "found": found,
        "missing": [name for name, ok in found.items() if not ok],
        "subshells": bool(kernel is not None and supports_subshells(kernel)),
        "pump": bool(kernel is not None and supports_pump(kernel)),
    }
