"""Where ipykernel sends a frontend's messages for a comm, and when a comm is closed.

ipykernel >= 7.4 asks each comm which subshell its messages go to; routing a widget's
comm to a private subshell (see :mod:`ipykernel_subshells`) keeps its clicks handled
while the main shell is blocked in a paused cell.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Callable

__all__ = ["comm_routing_available", "route_comm_to_subshell", "watch_comm_opens", "comm_closed"]

_lock = threading.Lock()
_log = logging.getLogger("jaxdbg")


def comm_routing_available() -> bool:
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
    with _lock:
        if manager not in _hooked_managers:

            def register_comm(comm: Any) -> Any:
                comm_id = original(comm)
                watcher = _open_watchers.get(threading.get_ident())
                if watcher is not None:
                    try:
                        watcher(comm)
                    except Exception:
                        # The widget still opens, but its clicks may wait for the whole
                        # pause: say so rather than lose them silently.
                        _log.warning("a widget opened during a stop may not answer until it ends", exc_info=True)
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


def comm_closed(comm: Any) -> bool:
    """Whether a widget's comm is closed. ipywidgets sets ``widget.comm = None`` on
    ``close()``; a close from the frontend only marks the comm (private ``_closed``)."""
    return comm is None or bool(getattr(comm, "_closed", False))
