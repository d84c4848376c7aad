"""Keep widget messages flowing while a breakpoint holds the cell.

A breakpoint blocks its cell: on CPU the JAX host callback runs on the kernel's main
thread, or, with several devices, on XLA pool threads while the main thread waits
inside XLA. Either way ipykernel's main shell is stuck, so it handles no comm (widget)
messages and a panel shown by the breakpoint would be dead.

:class:`PauseChannel` fixes that without knowing anything about the panel. The
breakpoint's thread parks in :meth:`PauseChannel.wait`; widget handlers only call
:meth:`PauseChannel.post`. What makes those handlers run while the cell is blocked
(``mechanism``, a :class:`Mechanism`):

``"subshell"``  ipykernel >= 7.4: the attached widgets' comms are routed to a private
                kernel subshell, whose own thread handles them. Inside ``with channel:``
                a comm opened on that thread is routed before the frontend hears of it,
                so a click sent the moment a widget appears is not lost. Meanwhile a
                reloaded page's ``kernel_info_request`` / ``comm_info_request`` are
                answered, so it can rebuild the paused widgets from the kernel, and
                the notebook's Tab completion and Shift+Tab help in other cells
                (``complete_request`` / ``inspect_request``) go to the subshell.
``"pump"``      ipykernel 6.x (Colab): a helper thread pumps the main shell's queue
                while someone waits; cells queued meanwhile run after the paused one
                (interruptible; aborted, as the kernel would, when it failed).
``"idle"``      the cell already returned (the callback ran late, e.g. async
                dispatch): the kernel handles widgets normally, nothing to do.
``"prompt"``    none of these is possible (no kernel, ipykernel 7.0 - 7.3, ...):
                ``wait`` returns :data:`UNRESPONSIVE`; the caller should say so and
                read a typed command with ``input()``, which works from any thread.

Typical use, on the breakpoint's thread::

    with PauseChannel() as channel:
        channel.attach(panel)                       # before or after display(panel)
        button.on_click(lambda _: channel.post("continue"))
        display(panel)
        while True:
            command = channel.wait()
            if command is CLOSED or command is UNRESPONSIVE:
                command = input(phrases.PROMPT)       # and tell the user why
            ...

Interrupts: ``wait`` raises KeyboardInterrupt once the kernel was interrupted at any
time since the channel was created (one stop), also while a command ran between waits
(counted by :mod:`jaxdbg_widgets.pause.interrupt_watch`, which sees a SIGINT even while
the main thread is inside XLA). The paused cell itself (its output, its busy status, the
cells queued behind it) is :mod:`jaxdbg_widgets.pause.cells`.

Clear Output sends the kernel nothing, so a widget whose frontend code counts its views
reports them with a custom message ``{"type": VIEWS_MESSAGE, "count": n}``; when every
attached widget reports none, ``wait`` returns :data:`HIDDEN`.

All ipykernel internals live in the ``jaxdbg.internals.ipykernel_*`` modules. This module
does not import jax (nor ipywidgets: widgets are duck-typed).
"""

from __future__ import annotations

import contextlib
import enum
import queue
import threading
import time
from typing import Any, Callable, Iterator

from jaxdbg.internals import (
    ipykernel_busy,
    ipykernel_comms,
    ipykernel_kernel,
    ipykernel_parents,
    ipykernel_paused_requests,
    ipykernel_pump,
    ipykernel_subshells,
)
from jaxdbg.runtime import interrupts
from jaxdbg_widgets.pause import interrupt_watch
from jaxdbg_widgets.pause.cells import PausedCell, QueuedCell
from jaxdbg_widgets.pause.preparation import install

__all__ = ["CLOSED", "HIDDEN", "UNRESPONSIVE", "VIEWS_MESSAGE", "Mechanism", "PauseChannel", "QueuedCell", "WaitResult"]


class Mechanism(str, enum.Enum):
    """What makes widget handlers run while the cell is blocked (see the module's docstring).

    A ``str`` enum whose ``str()`` is its value, so it reads the same in status lines."""

    SUBSHELL = "subshell"
    PUMP = "pump"
    IDLE = "idle"
    PROMPT = "prompt"

    def __str__(self) -> str:
        return self.value


class WaitResult(enum.Enum):
    """What :meth:`PauseChannel.wait` returns when no command came (printed by name)."""

    #: every attached widget was closed, so no click can come.
    CLOSED = "CLOSED"
    #: nothing can make widget handlers run here (mechanism :attr:`Mechanism.PROMPT`).
    UNRESPONSIVE = "UNRESPONSIVE"
    #: the frontend removed every view of the attached widgets (Clear Output), though
    #: their models live on; show them again or ask at the prompt.
    HIDDEN = "HIDDEN"

    def __repr__(self) -> str:
        return self.value

    __str__ = __repr__


CLOSED = WaitResult.CLOSED
UNRESPONSIVE = WaitResult.UNRESPONSIVE
HIDDEN = WaitResult.HIDDEN


#: ``content["type"]`` of the custom message a widget's frontend code sends with
#: ``{"type": VIEWS_MESSAGE, "count": n}`` when the number of views of it that the page
#: shows changes. The kernel cannot see views otherwise: Clear Output sends nothing.
VIEWS_MESSAGE = "jaxdbg-views"

_POLL_S = 0.05  # how often a waiter looks at the interrupt counter and closed panels


def _widget_tree(widget: Any) -> list[Any]:
    """The widget and, recursively, the children of Box-like widgets."""
    seen: dict[int, Any] = {}
    stack = [widget]
    while stack:
        w = stack.pop()
        if id(w) in seen:
            continue
        seen[id(w)] = w
        children = getattr(w, "children", None)
        if isinstance(children, (list, tuple)):
            stack.extend(children)
    return list(seen.values())


def _comm_closed(widget: Any) -> bool:
    return ipykernel_comms.comm_closed(getattr(widget, "comm", None))


class PauseChannel:
    """One breakpoint stop: widget handlers ``post`` commands, the breakpoint ``wait``s.

    Create it on the breakpoint's thread, or in the cell on the main thread before the
    jitted call; ``wait`` may be called from any thread, repeatedly (one command per
    call). Use it as a context manager, or call :meth:`close` when the stop ends, to
    give the attached widgets back to the main shell.
    """

    CLOSED = CLOSED
    HIDDEN = HIDDEN
    UNRESPONSIVE = UNRESPONSIVE

    def __init__(self, kernel: Any = None) -> None:
        self._kernel = ipykernel_kernel.current_kernel() if kernel is None else kernel
        self._queue: queue.Queue[Any] = queue.Queue()
        self._roots: list[Any] = []
        self._hidden: dict[int, bool] = {}  # id(root) -> its frontend reported no view
        self._listeners: list[tuple[Any, Callable[..., None]]] = []
        # id(comm) -> (comm, undo); holding the comm keeps its id from being reused.
        self._routed: dict[int, tuple[Any, Callable[[], None]]] = {}
        self._unwatch: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._subshell_id: str | None = None
        self._subshell_failed = False
        self._closed = False
        self.detail = ""
        if threading.current_thread() is threading.main_thread():
            install()
        # Once per stop: an interrupt that arrives while a command runs (not only
        # while waiting) must still end the stop.
        self._interrupt_base = interrupt_watch.WATCH.count
        self._handled_base = interrupts.handled_interrupts()  # those a command took (a replay's)
        # Found now, while the paused cell's request is the kernel's current one; it
        # says busy again for that cell after each request handled while paused.
        self._cell = PausedCell(self._kernel)
        self.mechanism = self._choose(threading.current_thread())
        self._release_info: Callable[[], None] | None = None
        if self.mechanism is Mechanism.SUBSHELL:
            try:
                self._subshell_id = ipykernel_subshells.create_subshell(self._kernel)
            except Exception as exc:
                self._subshell_failed = True
                self.mechanism = self._choose(threading.current_thread())
                self.detail = f"could not create a kernel subshell: {exc}"
            else:
                # A page reloaded meanwhile must be able to find the paused panel.
                try:
                    self._release_info = ipykernel_paused_requests.answer_info_requests(self._kernel)
                except Exception:
                    self._release_info = None

    # -- mechanism -----------------------------------------------------------------

    def _choose(self, waiter: threading.Thread) -> Mechanism:
        kernel = self._kernel
        if kernel is None:
            self.detail = "not running in an IPython kernel"
            return Mechanism.PROMPT
        if self._subshell_id is not None:
            return Mechanism.SUBSHELL
        if not self._subshell_failed and ipykernel_subshells.supports_subshells(kernel):
            return Mechanism.SUBSHELL
        on_main = waiter is threading.main_thread()
        if not on_main and not self._main_shell_held():
            return Mechanism.IDLE
        if ipykernel_pump.supports_pump(kernel):
            return Mechanism.PUMP
        self.detail = f"ipykernel {ipykernel_kernel.kernel_version()} offers no way to handle widgets here"
        return Mechanism.PROMPT

    def _main_shell_held(self) -> bool:
        """Whether the main shell is inside a request that may keep it from its loop.

        A message for this stop's own widgets does not: the idle kernel is handling a
        click (a late callback's wait often starts just then), and its loop reads the
        shell socket again right after. Pumping beside it would read that socket from
        two threads. On 6.x, the only kernels that get here, the shell's parent is the
        one request the main shell is handling.
        """
        kernel = self._kernel
        if not ipykernel_busy.main_shell_busy(kernel):
            return False
        try:
            _ident, request = ipykernel_parents.current_parent(kernel)
        except Exception:
            return True
        header, content = request.get("header") or {}, request.get("content") or {}
        if header.get("msg_type") != "comm_msg":
            return True
        with self._lock:
            roots = list(self._roots)
        own = {getattr(getattr(w, "comm", None), "comm_id", None) for root in roots for w in _widget_tree(root)}
        return content.get("comm_id") not in own - {None}

    # -- widgets --------------------------------------------------------------------

    def attach(self, widget: Any) -> None:
        """Make the frontend's messages for ``widget`` (and its children) reachable.

        Call again after adding children to an attached Box. Cheap and idempotent.
        """
        with self._lock:
            if not any(root is widget for root in self._roots):
                self._roots.append(widget)
                on_msg = getattr(widget, "on_msg", None)
                if callable(on_msg):

                    def on_views(_w: Any, content: Any, _buffers: Any = None, key: int = id(widget)) -> None:
                        self._on_views(key, content)

                    on_msg(on_views)
                    self._listeners.append((widget, on_views))
            if self._subshell_id is None or self._closed:
                return
            for w in _widget_tree(widget):
                comm = getattr(w, "comm", None)
                if comm is not None:
                    self._route_locked(comm)

    def _route_locked(self, comm: Any) -> None:
        assert self._subshell_id is not None  # callers route only while the subshell exists
        if id(comm) not in self._routed:
            self._routed[id(comm)] = (comm, ipykernel_comms.route_comm_to_subshell(comm, self._subshell_id))

    def _route_opened(self, comm: Any) -> None:
        """A comm was just opened on the stop's thread: route it before the frontend
        can send anything for it (a click must not reach the blocked main shell)."""
        with self._lock:
            if self._subshell_id is not None and not self._closed:
                self._route_locked(comm)

    def _watch_opens(self) -> Callable[[], None] | None:
        """Route comms opened on this thread from now on; returns an undo or None."""
        if self._subshell_id is None or self._closed:
            return None
        return ipykernel_comms.watch_comm_opens(self._kernel, self._route_opened)

    def _on_views(self, key: int, content: Any) -> None:
        """A widget's frontend said how many views of it remain (any other custom
        message is the widget's own business)."""
        if not isinstance(content, dict) or content.get("type") != VIEWS_MESSAGE:
            return
        count = content.get("count")
        if not isinstance(count, int) or isinstance(count, bool):
            return
        with self._lock:
            self._hidden[key] = count <= 0
            gone = bool(self._roots) and all(self._hidden.get(id(r), False) for r in self._roots)
        if gone:
            self._queue.put(HIDDEN)

    def report_queued_cells(self) -> None:
        """From now on ``wait`` also returns a :class:`QueuedCell` for each cell run
        while this stop is paused (for a caller that shows the stop there)."""
        self._cell.report_queued(self._queue.put)

    def interrupted(self) -> bool:
        """True once the kernel was interrupted since this stop began, by an interrupt
        that no command took for itself (Ctrl-C ending a replay leaves the stop open)."""
        seen = interrupt_watch.WATCH.count - self._interrupt_base
        return seen > interrupts.handled_interrupts() - self._handled_base

    def post(self, command: Any) -> None:
        """Hand a command to the waiting breakpoint; call from widget handlers.

        Only enqueues, so it is safe on any thread and never blocks a handler.
        """
        if command is None:
            raise ValueError("None is reserved for a wait() that timed out")
        self._queue.put(command)

    def panel_closed(self) -> bool:
        """True when widgets were attached and every one of them is closed."""
        with self._lock:
            roots = list(self._roots)
        return bool(roots) and all(_comm_closed(w) for w in roots)

    # -- waiting --------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> Any:
        """Block until a handler posts a command; return it.

        Returns :data:`CLOSED` when every attached widget was closed, :data:`HIDDEN`
        when the frontend reported that none of them is shown any more,
        :data:`UNRESPONSIVE` when no mechanism can deliver clicks here (mechanism
        "prompt"), and None when ``timeout`` seconds passed. Raises KeyboardInterrupt
        when the kernel is interrupted, whichever thread waits (see :func:`install`).
        """
        waiter = threading.current_thread()
        on_main = waiter is threading.main_thread()
        self.mechanism = self._choose(waiter)
        listener = interrupt_watch.listener(on_main)
        if self.interrupted():  # it came between two waits: taken here as the wait would
            with listener:
                listener.interrupted(interrupt_watch.interrupt_count())
            raise KeyboardInterrupt
        if self.mechanism is Mechanism.PROMPT:
            try:
                return self._queue.get_nowait()
            except queue.Empty:
                return UNRESPONSIVE
        pinned = self._cell.pin()
        pump = ipykernel_pump.shell_pump(self._kernel) if self.mechanism is Mechanism.PUMP else None
        deadline = None if timeout is None else time.monotonic() + timeout
        listener.__enter__()
        try:
            if pump is not None:  # inside the try: a Ctrl-C that ends the acquire still releases
                pump.acquire()
            while True:
                try:
                    # Interruptible on the main thread: SIGINT raises right here.
                    command = self._queue.get(timeout=_POLL_S)
                except queue.Empty:
                    command = None
                if self.interrupted():
                    listener.interrupted(interrupt_watch.interrupt_count())
                    raise KeyboardInterrupt  # the stop ends; its commands with it
                if command is not None:
                    return command
                if self.panel_closed():
                    return CLOSED
                if pump is not None and pump.error is not None:
                    self.detail = f"shell pump failed: {pump.error!r}"
                    self.mechanism = Mechanism.PROMPT
                    return UNRESPONSIVE
                if deadline is not None and time.monotonic() >= deadline:
                    return None
        finally:
            listener.__exit__(None, None, None)
            if pump is not None:
                pump.release()
            if pinned is not None:
                self._cell.unpin()

    # -- lifetime -------------------------------------------------------------------

    def close(self) -> None:
        """End the stop: give the widgets' comms back to the main shell."""
        with self._lock:
            routed, self._routed = self._routed, {}
            self._closed = True
            unwatch, self._unwatch = self._unwatch, None
            release_info, self._release_info = self._release_info, None
            listeners, self._listeners = self._listeners, []
        for widget, listener in listeners:
            try:
                widget.on_msg(listener, remove=True)
            except Exception:
                pass
        if unwatch is not None:
            unwatch()
        if release_info is not None:
            release_info()
        self._cell.end()
        for _comm, undo in routed.values():
            undo()
        self._cell.unpin()

    @contextlib.contextmanager
    def pinned(self) -> Iterator["PauseChannel"]:
        """Keep this thread's prints, displays and prompts in the paused cell.

        ``wait`` pins only while it waits. After a click was handled elsewhere,
        ipykernel sends output from threads that never set a parent (XLA's) to the
        last request it handled, i.e. that click, which the frontend drops. Wrap the
        whole stop in this (``with channel:`` does it too) on the breakpoint's thread.
        """
        undo = self._cell.pin()
        unwatch = self._watch_opens()
        try:
            yield self
        finally:
            if unwatch is not None:
                unwatch()
            if undo is not None:
                self._cell.unpin()

    def __enter__(self) -> "PauseChannel":
        self._cell.pin()
        if self._unwatch is None:
            self._unwatch = self._watch_opens()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PauseChannel(mechanism={str(self.mechanism)!r})"
