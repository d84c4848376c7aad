"""Keeping widget messages flowing while a breakpoint holds the cell.

:mod:`~jaxdbg_widgets.pause.channel` is the channel a stop waits on,
:mod:`~jaxdbg_widgets.pause.interrupt_watch` ends a wait when the SIGINT count moves
(also while the main thread sits in XLA), :mod:`~jaxdbg_widgets.pause.cells` follows
the paused cell and the cells queued behind it, and
:mod:`~jaxdbg_widgets.pause.preparation` starts what only the main thread can.
"""

from jaxdbg_widgets.pause.cells import QueuedCell
from jaxdbg_widgets.pause.channel import CLOSED, HIDDEN, UNRESPONSIVE, VIEWS_MESSAGE, Mechanism, PauseChannel
from jaxdbg_widgets.pause.interrupt_watch import interrupt_count
from jaxdbg_widgets.pause.preparation import install, installed, uninstall

__all__ = [
    "CLOSED",
    "HIDDEN",
    "UNRESPONSIVE",
    "VIEWS_MESSAGE",
    "Mechanism",
    "PauseChannel",
    "QueuedCell",
    "install",
    "installed",
    "interrupt_count",
    "uninstall",
]
