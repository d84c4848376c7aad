"""Shell requests answered while a cell is paused (ipykernel >= 7.4).

A paused cell blocks the main shell; a page that reconnects meanwhile, or Tab
completion in another cell, would wait for the whole pause. The shell channel thread
answers those requests itself or hands them to the stop's subshell.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from jaxdbg.internals.ipykernel_kernel import kernel_version
from jaxdbg.internals.ipykernel_queued_cells import notify_queued_cell
from jaxdbg.internals.ipykernel_subshells import private_subshell

__all__ = ["INFO_REQUESTS", "SUBSHELL_REQUESTS", "can_answer_info_requests", "answer_info_requests"]

_lock = threading.Lock()

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
            content = {
                "status": "ok",
                "comms": {
                    cid: {"target_name": c.target_name}
                    for cid, c in comms.items()
                    if target is None or c.target_name == target
                },
            }
            reply_type = "comm_info_reply"
        session.send(kernel.shell_stream, reply_type, content, request, idents)
        kernel._publish_status("idle", "shell", parent=request)
        return True

    def _to_subshell(self, msg: Any) -> bool:
        """Forward the request to the stop's subshell as a frontend would address it:
        with the subshell's id in its header (a subshell takes only its own), signed
        again. We are on the shell channel thread, which owns the subshell's socket."""
        subshell_id = private_subshell(self.kernel)
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
        return (
            kernel._supports_kernel_subshells
            and callable(kernel.shell_channel_thread_main)
            and callable(kernel.shell_stream.on_recv)
            and kernel.shell_channel_thread.io_loop is not None
        )
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
    with _lock:
        desk = _desks.get(kernel)
        if desk is None:
            desk = _desks[kernel] = _InfoDesk(kernel)
        if not desk.installed:
            desk.install()
        desk.users += 1
    released = threading.Event()

    def release() -> None:
        with _lock:
            if not released.is_set():
                released.set()
                desk.users -= 1

    return release
