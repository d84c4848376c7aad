"""The print log: one widget per cell run that collects ``jaxdbg.print`` rows.

:mod:`.cells` routes rows to the running cell's log, :mod:`.buffer` holds a log's rows
and decides when to send them, :mod:`.widget` is the live view and its sync, and
:mod:`.static` is what a log leaves behind (the saved notebook's HTML, its text, a file).
"""

from jaxdbg_widgets.print_log.cells import PrintLog, last_log

__all__ = ["PrintLog", "last_log"]
