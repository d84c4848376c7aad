"""Letting go of a stop's values once its cell ends."""

from __future__ import annotations

import gc
import threading

from jaxdbg.internals import ipython_api

# JAX frees a host callback's operands (and the host copies a stop made of them, 400 MB
# for a 400 MB local) only after the computation has let go of them, through a queue
# that its garbage-collector callback empties (gc.callbacks); in an idle kernel that
# is the next dispatch or collection, possibly never. So when a cell in which a stop
# opened finishes, one collection lets them go. (Outside IPython the program's next
# dispatch does it.)
_release_pending = threading.Lock()
RELEASE_AGAIN_S = 0.3


def after_the_cell() -> None:
    """Collect once when the running cell ends (at most once per cell; nothing outside IPython)."""
    if ipython_api.execution_count() is None or not _release_pending.acquire(blocking=False):
        return  # not in IPython, or this cell already has one

    def release() -> None:
        _release_pending.release()
        gc.collect()
        # The computation may let go of the operands just after the cell's end.
        later = threading.Timer(RELEASE_AGAIN_S, gc.collect, args=(0,))
        later.daemon = True
        later.start()

    ipython_api.on_cell_finished(release)
