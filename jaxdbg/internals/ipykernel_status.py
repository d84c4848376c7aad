"""Every private ipykernel name the adapters use, and whether the installed one has it.

A test asserts that nothing the installed version needs is missing, so a move in
ipykernel fails loudly in CI instead of silently leaving a dead panel.
"""

from __future__ import annotations

import sys
from typing import Any

from jaxdbg.internals.ipykernel_kernel import current_kernel, kernel_version
from jaxdbg.internals.ipykernel_pump import supports_pump
from jaxdbg.internals.ipykernel_subshells import supports_subshells

__all__ = ["adapter_status"]


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

        base_comm: Any = BaseComm
    except Exception:
        base_comm = None
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
            "stdout._parent_header" if version is not None and version >= (6, 29) else "stdout.set_parent",
        ]
    objects = {"kernel": kernel, "shell": shell, "stdout": stdout, "BaseComm": base_comm}
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
