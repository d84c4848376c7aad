"""Which cell a thread's output, displays and ``input()`` prompts belong to.

Every message a kernel sends names its parent request. A breakpoint served on an XLA
thread, or after a widget message was handled on a subshell, would otherwise inherit
the wrong parent, and frontends drop output parented to a click.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from typing import Any, Callable, Iterator

from jaxdbg.internals import ipython_api

__all__ = ["current_parent", "cell_parent", "track_cells", "untrack_cells", "pin_thread_parent", "display_parent_6x"]


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
    request handled on *any* thread). Call from the main thread; idempotent. Called
    from inside a cell (the first breakpoint traced in a kernel), it records that cell
    at once: its ``pre_run_cell`` came before the hook existed, and its stops may come
    after it returned (asynchronous dispatch), after a click on an earlier one.
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

    _cell_state["unregister"] = ipython_api.register_cell_events(
        shell, pre_run_cell=pre_run_cell, post_run_cell=post_run_cell
    )
    if threading.current_thread() is threading.main_thread():
        try:
            ident, parent = current_parent(kernel)
        except Exception:
            return True
        if ((parent or {}).get("header") or {}).get("msg_type") == "execute_request":
            with _cell_lock:
                _cell_state.update(running=True, ident=ident, parent=parent)
    return True


def untrack_cells() -> None:
    """Undo :func:`track_cells` (``%unload_ext jaxdbg``)."""
    with _cell_lock:
        unregister = _cell_state.pop("unregister", None)
        _cell_state.update(shell=None, running=False, ident=None, parent=None)
    if unregister is not None:
        unregister()


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
    this thread), and on 6.x the OutStreams' private ``_parent_header`` ContextVar and a
    display hook of this thread (:func:`_pin_displays_6x`).
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
            undo.extend(_pin_displays_6x(kernel, parent))
        for name, value in (("_shell_parent", parent), ("_shell_parent_ident", ident)):
            var = getattr(kernel, name, None)
            if var is not None and hasattr(var, "reset"):
                token = var.set(value)
                undo.append(functools.partial(var.reset, token))
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
            undo.append(functools.partial(var.reset, token))
    return undo


def _pin_displays_6x(kernel: Any, parent: dict) -> list[Callable[[], None]]:
    """ipykernel 6: name ``parent`` in each display the calling thread sends, whatever
    the shell set as the publisher's one global parent meanwhile. A transform hook does
    it (6.x keeps the publisher's hooks per thread); the undo must run on this thread."""
    pub = getattr(getattr(kernel, "shell", None), "display_pub", None)
    if pub is None or not hasattr(pub, "register_hook") or not hasattr(pub, "unregister_hook"):
        return []
    from jupyter_client.session import extract_header

    header = extract_header(parent)

    def to_the_cell(msg: dict) -> dict:
        msg["parent_header"] = header
        return msg

    pub.register_hook(to_the_cell)
    return [functools.partial(pub.unregister_hook, to_the_cell)]


@contextlib.contextmanager
def display_parent_6x(kernel: Any, parent: dict | None) -> Iterator[None]:
    """Send displays to ``parent`` (ipykernel 6; a no-op on 7, which pins per thread).

    ipykernel 6's display publisher has one global parent (``parent_header``), which
    the shell moves to each message it handles, on another thread, at any moment: the
    panel's own ``held``, sent by the frontend the moment the widget opens, can come
    between this block's start and its display. A display sent then would belong to
    that message and never reach the paused cell. So the block also registers a
    transform hook (thread-local in 6.x: this thread's displays only) that names
    ``parent`` in each message as it is sent.
    """
    shell = getattr(kernel, "shell", None)
    pub = getattr(shell, "display_pub", None)
    if not parent or pub is None or hasattr(pub, "set_thread_parent") or not hasattr(pub, "parent_header"):
        yield
        return
    from jupyter_client.session import extract_header

    header = extract_header(parent)
    previous = pub.parent_header
    pub.parent_header = header  # for what bypasses the hooks (clear_output)
    unhook = _pin_displays_6x(kernel, parent)
    try:
        yield
    finally:
        for undo in unhook:
            undo()
        if pub.parent_header is header:  # not where the shell moved it meanwhile
            pub.parent_header = previous
