"""Whether the main shell is busy with a cell, and keeping a running cell reported busy."""

from __future__ import annotations

import sys
import threading
import weakref
from types import CodeType
from typing import Any, Callable

__all__ = ["main_shell_busy", "runs_cells_outside_dispatch", "keep_cell_busy"]

_lock = threading.Lock()

# Code that runs a cell outside ipykernel's dispatch_shell (the 6.x pump's replay of a
# held cell); its module registers it here so this one needs not import it.
_cell_runners: set[CodeType] = set()


def runs_cells_outside_dispatch(fn: Callable) -> Callable:
    """Mark ``fn`` as running cells: :func:`main_shell_busy` counts its frames as busy."""
    _cell_runners.add(fn.__code__)
    return fn


def main_shell_busy(kernel: Any) -> bool:
    """Whether the main thread is inside a shell request (typically running a cell).

    Seen from another thread: a callback may run after its cell returned (older JAX
    dispatched asynchronously); then the main shell handles widgets itself and must
    not be pumped concurrently. The main thread's Python stack tells: ipykernel's
    ``dispatch_shell`` (both 6.x and 7.x) is on it exactly while a request is handled
    synchronously. ``sys._current_frames`` is CPython's documented debugging hook.
    """
    ident = threading.main_thread().ident
    if ident is None:  # not started: never the case for the main thread
        return False
    frame = sys._current_frames().get(ident)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "dispatch_shell" and "ipykernel" in code.co_filename:
            return True
        # A cell held back by the 6.x pump runs outside dispatch_shell.
        if code in _cell_runners:
            return True
        frame = frame.f_back
    return False


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
    with _lock:
        keeper = _busy_keepers.get(kernel)
        if keeper is None:
            keeper = _busy_keepers[kernel] = _KeepCellBusy(kernel)
    return keeper.hold(parent)
