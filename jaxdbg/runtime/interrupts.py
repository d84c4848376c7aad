"""Where Ctrl-C (or a kernel interrupt) goes while a stop waits on another thread.

Python runs signal handlers on the main thread only. Under pmap or shard_map a
stop waits on an XLA thread while the main thread waits for the computation, so
by default the interrupt raised KeyboardInterrupt in the main thread and left the
stop waiting: a terminal prompt hung the process, and in a kernel the cell ended
with a long traceback from inside JAX while the stop lived on.

A wait that can end itself on an interrupt registers as a *listener* for as
long as it waits (the terminal prompt, the panel's wait). A SIGINT handler,
put in front of Python's default one, wakes the listeners and lets them end
their stops, which ends the computation with KeyboardInterrupt; the main thread
then gets that computation's error, shown as one line. With no listener, or
when the main thread itself listens, Ctrl-C does what it always did.
"""

from __future__ import annotations

import _thread
import contextlib
import ctypes
import os
import signal
import sys
import threading
import traceback
from typing import Callable

from jaxdbg.internals import ipykernel_kernel
from jaxdbg.runtime import sigint_watch

# Re-entrant: the main thread's SIGINT handler takes it, and a second Ctrl-C's handler may
# run inside the first one's, between any two of its bytecodes.
_lock = threading.RLock()
_listeners: dict[int, tuple[threading.Thread, Callable[[], None] | None]] = {}
_ids = iter(range(1, 1 << 62))
# Interrupts that listeners took, less those the handler passed to them. A listener
# may notice a SIGINT (e.g. through a wakeup fd) before the main thread runs the
# handler; the handler must then still keep it out of the main thread.
_credit = 0
_anticipated: set[int] = set()  # listeners the handler counted on to end
_signals = 0  # SIGINTs the relay has handled: tells a real interrupt from a raised one
_taken = 0  # interrupts that ended a listening wait or an interrupted command
_marked = 0  # the last SIGINT a listener took, by its signal_mark


def signals_seen() -> int:
    """A mark for :func:`interrupted_since`: how many SIGINTs the relay has handled."""
    return _signals


def interrupts_taken() -> int:
    """How many interrupts ended a listening wait or a command, counted before its
    KeyboardInterrupt is raised: the stops that one interrupt ends can tell it apart
    from the next (a job's debug host numbers its interrupts so)."""
    return _taken


def interrupted_since(mark: int) -> bool:
    """Whether a KeyboardInterrupt caught now may be a real interrupt (Ctrl-C, the
    kernel's interrupt) that arrived since ``mark``, rather than one that user code
    raised. Without the relay in front it cannot tell, so every one counts as real."""
    if _signals != mark:
        return True
    try:
        return signal.getsignal(signal.SIGINT) is not _relay
    except (ValueError, OSError):
        return True


class Listener:
    """A wait registered by :func:`listening`; call :meth:`interrupted` when an
    interrupt ends it (before raising KeyboardInterrupt)."""

    def __init__(self, wake: Callable[[], None] | None, active: bool) -> None:
        self._wake = wake
        self._active = active
        self._key: int | None = None

    def __enter__(self) -> "Listener":
        if self._active:
            with _lock:
                self._key = next(_ids)
                _listeners[self._key] = (threading.current_thread(), self._wake)
        return self

    def interrupted(self, signal_mark: int | None = None) -> None:
        """``signal_mark``: which SIGINT ended the wait, where the wait counts them (the
        count so far). Two waits of one stop may both see one SIGINT (the second one
        starting after it came): it is taken, and kept from the main thread, once."""
        global _taken, _marked
        with _lock:
            _taken += 1
            first = signal_mark is None or signal_mark > _marked
            if signal_mark is not None:
                _marked = max(_marked, signal_mark)
        self._leave(took_interrupt=first)

    def __exit__(self, *exc: object) -> None:
        self._leave(took_interrupt=False)

    def _leave(self, took_interrupt: bool) -> None:
        global _credit
        if self._key is None:
            return
        # Without the relay in place the main thread gets (or got) its own
        # KeyboardInterrupt for this SIGINT, so there is nothing to hold back later.
        relayed = signal.getsignal(signal.SIGINT) is _relay
        with _lock:
            _listeners.pop(self._key, None)
            if self._key in _anticipated:
                _anticipated.discard(self._key)
                _credit += 1  # settles what the handler counted on, taken or not
            elif took_interrupt and relayed:
                _credit += 1
            self._key = None


def cell_started() -> None:
    """A new cell: an interrupt a wait took whose SIGINT the main thread never handled
    is forgotten, so that it does not swallow this cell's first interrupt. That happens
    when the handler is put back before the main thread runs it (ipykernel ignores SIGINT
    between cells, and CPython drops a pending signal whose handler became SIG_IGN).
    Nothing carries over otherwise: the kernel's loop runs Python between cells, so a
    pending SIGINT has been handled by now. Not while a wait listens (a job's debug host
    between cells), whose interrupts are still being settled."""
    global _credit, _watch_acted, _main_got_passed_on, _passed_on
    _main_got_passed_on = False
    with _lock:
        _passed_on = 0  # one the main thread never ran its handler for
        _forget_ended_threads()
        if not _listeners:
            _credit = 0
            _watch_acted = False


def _forget_ended_threads() -> None:
    """Drop the waits of threads that ended without leaving them (an exception raised
    into a thread as it entered one): they would take every interrupt from the main
    thread and wake nobody. The caller holds the lock. What the relay counted on such a
    wait is settled as its leaving would have (:meth:`Listener._leave`)."""
    global _credit
    for key, (thread, _) in list(_listeners.items()):
        if not thread.is_alive():
            del _listeners[key]
            if key in _anticipated:
                _anticipated.discard(key)
                _credit += 1


def listening(wake: Callable[[], None] | None = None, *, active: bool = True) -> Listener:
    """Register the calling thread's wait: while inside, a SIGINT calls ``wake`` (from
    the main thread's signal handler) instead of raising KeyboardInterrupt in the main
    thread. ``wake`` must be quick and must not raise; None suits a wait that notices
    interrupts by itself. ``active=False`` gives a handle that registers nothing."""
    return Listener(wake, active)


#: How long an interrupted command may take to end before the interrupt goes to the
#: main thread anyway (a command inside one long C call gets its KeyboardInterrupt
#: only when that call returns).
STUCK_GRACE_S = 1.0
#: Said through :mod:`jaxdbg.runtime.notices` (which adds the ``jaxdbg:`` prefix).
STUCK_NOTICE = (
    "the interrupted command is inside a call that cannot be interrupted; "
    "the stop has ended, and the command ends, printing nothing more, when that "
    "call returns."
)


class _CommandRun:
    """A debugger command (user code) running on a thread other than the main one.

    Python delivers SIGINT to the main thread only, which under pmap waits inside
    XLA for this very thread: the interrupt ended the cell there while the command,
    and its stop, went on. Registered as a listener, the command gets the interrupt
    as a KeyboardInterrupt of its own, raised at its next bytecode, which ends it and
    its stop; the main thread then gets the stopped computation's error. A command
    that does not end within :data:`STUCK_GRACE_S` is given up: ``on_stuck`` says so
    (once) and the main thread gets the interrupt after all.
    """

    def __init__(self, thread: threading.Thread, on_stuck: Callable[[], None] | None) -> None:
        self._ident = thread.ident
        self._on_stuck = on_stuck
        self._lock = threading.RLock()  # _wake runs in the SIGINT handler, which may nest
        self._running = False
        self._woken = False
        self._listener = Listener(self._wake, active=True)

    def _wake(self) -> None:
        with self._lock:
            if not self._running or self._woken:
                return
            self._woken = True  # one interrupt per command is enough
            global _taken
            with _lock:
                _taken += 1
            _raise_in_thread(self._ident, KeyboardInterrupt)
        timer = threading.Timer(STUCK_GRACE_S, self._give_up)
        timer.daemon = True
        timer.start()

    def _give_up(self) -> None:
        with self._lock:
            if not self._running:
                return  # it ended in time
            self._running = False
        self._listener.__exit__(None, None, None)  # no longer a wait that ends by itself
        if self._on_stuck is not None:
            try:
                self._on_stuck()
            except Exception:  # the cell still ends below; the view's failure is said, not lost
                traceback.print_exc(file=sys.__stderr__)
        global _passed_on
        with _lock:
            _passed_on += 1  # for the main thread, not for the waits the SIGINT watch wakes
        _thread.interrupt_main()  # through the relay, which now raises in the main thread

    def __enter__(self) -> "_CommandRun":
        self._running = True
        self._listener.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running = False
        self._listener.__exit__(*exc)
        # The listener's wake is this run's bound method: a cycle that would keep the
        # stop's session (and its values) alive until a full garbage collection.
        self._listener._wake = self._on_stuck = None


def _raise_in_thread(ident: int | None, exc_type: type[BaseException]) -> None:
    """Raise ``exc_type`` in thread ``ident`` at its next bytecode (CPython's
    ``PyThreadState_SetAsyncExc``; a thread inside a C call gets it when that returns)."""
    if ident is None:
        return
    try:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type))
    except (AttributeError, OSError):  # not CPython
        pass


_handled = 0  # interrupts a command took for itself, ending only what it ran


def interrupt_handled() -> None:
    """A command took this interrupt and ended only what it ran (a replay of a frame),
    so the stop goes on: a view that counts interrupts to end its stop counts this one out."""
    global _handled
    with _lock:
        _handled += 1


def handled_interrupts() -> int:
    """How many interrupts commands took for themselves (see :func:`interrupt_handled`)."""
    return _handled


def raise_in_thread(ident: int | None, exc_type: type[BaseException]) -> None:
    """Raise ``exc_type`` in thread ``ident`` at its next bytecode (a replay's thread)."""
    _raise_in_thread(ident, exc_type)


def running_command(on_stuck: Callable[[], None] | None = None) -> contextlib.AbstractContextManager:
    """Around a debugger command (or a read of a kernel's ``input()``): off the main
    thread (a pmap or shard_map stop), an interrupt meanwhile raises KeyboardInterrupt
    in the command; on the main thread
    Python's own handling already does. ``on_stuck`` runs (on another thread) when
    the interrupted command could not be ended at once and is given up."""
    thread = threading.current_thread()
    if thread is threading.main_thread() or os.name != "posix":
        return contextlib.nullcontext()
    return _CommandRun(thread, on_stuck)


def _relay(signum: int, frame) -> None:
    global _passed_on, _main_got_passed_on
    if _settled_by_the_watch():
        return
    with _lock:
        passed_on, _passed_on = _passed_on > 0, 0
    if _wake_listeners():
        _main_got_passed_on = passed_on
        signal.default_int_handler(signum, frame)


def main_got_a_passed_on_interrupt() -> bool:
    """Whether the KeyboardInterrupt the main thread got last (in this cell) was one a
    stop passed on when its interrupted command could not be ended. Where the main
    thread sat inside XLA, it raises only once the stop has ended, at whatever line of
    JAX follows: it still belongs to that stop, so it is shown as one line."""
    return _main_got_passed_on


def _relay_between_cells(signum: int, frame) -> None:
    """An idle kernel's SIGINT: it wakes the listeners and, as the kernel's own
    SIG_IGN does, never raises (there is no cell to end)."""
    if not _settled_by_the_watch():
        _wake_listeners()


# SIGINTs read by the SIGINT watch (sigint_watch.WATCH.count) that the handler or the
# watch's thread has acted on, and whether the thread acted on one the handler has not
# run for yet. The handler then finds nothing left to do: the signals it runs for were
# all settled while the main thread sat in a C call (it runs once for several
# signals that came meanwhile).
_acted_through = 0
_watch_acted = False
_passed_on = 0  # interrupts given-up commands passed to the main thread, not yet raised there
_main_got_passed_on = False


def _settled_by_the_watch() -> bool:
    """From the handler: whether the watch's thread already acted on every SIGINT that
    came so far (the handler has nothing to do); else the handler acts on them."""
    global _acted_through, _watch_acted
    count = sigint_watch.WATCH.take_pending()
    with _lock:
        settled = _watch_acted and count <= _acted_through
        _watch_acted = False
        _acted_through = max(_acted_through, count)
    return settled


def _on_sigint_read(count: int) -> None:
    """On the watch's thread, as a SIGINT's byte is read: wake the waiting stops now if
    only waits off the main thread listen, since the handler may not run until the
    main thread leaves XLA, which waits for those very stops. Otherwise, and when the
    handler already ran for it, the handler does what it always did."""
    global _acted_through, _watch_acted
    try:
        if signal.getsignal(signal.SIGINT) not in (_relay, _relay_between_cells):
            return  # the program's own handler, or the kernel's, decides
    except (ValueError, OSError):
        return
    main = threading.main_thread()
    with _lock:
        if count <= _acted_through or _passed_on:
            return
        _forget_ended_threads()
        if not _listeners or any(thread is main for thread, _ in _listeners.values()):
            return
        _acted_through = count
        _watch_acted = True
    _wake_listeners()


def _wake_listeners() -> bool:
    """Wake the waits that end themselves on an interrupt; whether the main thread
    should get the interrupt too."""
    global _credit, _signals
    _signals += 1
    main = threading.main_thread()
    with _lock:
        _forget_ended_threads()
        listeners = list(_listeners.items())
        main_listens = any(thread is main for _, (thread, _) in listeners)
        if not listeners and _credit > 0:
            _credit -= 1  # a listener already took this interrupt
            return False
        for key, (thread, _) in listeners:
            if thread is not main:
                _anticipated.add(key)
                _credit -= 1
    for _, (_, wake) in listeners:
        if wake is not None:
            try:
                wake()
            except Exception:
                pass
    return not listeners or main_listens


sigint_watch.WATCH.subscribe(_on_sigint_read)


def hear_between_cells() -> bool:
    """From a cell of an ipykernel kernel: a kernel interrupt while the kernel is idle
    (a debug host serving another process's stop after its cells ended) reaches the
    listening waits too, instead of being ignored. Whether it does."""
    if threading.current_thread() is not threading.main_thread() or os.name != "posix":
        return False
    kernel = ipykernel_kernel.current_kernel()
    if kernel is None:
        return False
    return ipykernel_kernel.hear_interrupts_between_cells(kernel, _relay_between_cells)


def install() -> None:
    """Put the relay in front of Python's default SIGINT handler.

    Only from the main thread and only over the default handler, so a program's
    own handler is left alone. IPython kernels put the default handler back for
    each cell, so the extension calls this again before each cell. Idempotent.
    """
    if threading.current_thread() is not threading.main_thread() or os.name != "posix":
        return
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _relay)
    except (ValueError, OSError):  # not allowed here (e.g. an embedded interpreter)
        return
    sigint_watch.WATCH.install()
