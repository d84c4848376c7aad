"""A private kernel subshell (ipykernel >= 7.4): its own thread and event loop, which
handle the panel's comm messages while the main shell is blocked in a paused cell."""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from typing import Any

from jaxdbg.internals.ipykernel_comms import comm_routing_available
from jaxdbg.internals.ipykernel_kernel import kernel_version

__all__ = ["supports_subshells", "create_subshell", "private_subshell"]


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
    return comm_routing_available()


_subshell_ids: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


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
    with _lock:
        cached = _subshell_ids.get(kernel)
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
        _subshell_ids[kernel] = subshell_id
        return subshell_id


def private_subshell(kernel: Any) -> str | None:
    """The id of the subshell :func:`create_subshell` made for ``kernel``, if any."""
    return _subshell_ids.get(kernel)
