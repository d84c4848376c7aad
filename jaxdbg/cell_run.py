"""Which run of the program a stop belongs to, for ``continue all``.

``continue all`` continues past every remaining stop of a breakpoint "in this
run". A run is:

- In IPython (a notebook kernel or the IPython terminal): the cell being
  executed, keyed by IPython's execution count. Every stop of the computations
  that cell started belongs to it: the other pmap devices, the rest of a scan or
  a vmap batch, and later jitted calls made by a loop in the same cell.
- In a plain script: the statement through which the main thread entered JAX
  (or jaxdbg, for an eager breakpoint): that program frame and the line it is
  on. A loop that repeats the statement from the same line stays in the same
  run, as a loop inside a notebook cell does; leaving the frame or moving on to
  another line starts a new run.

Both rules look only at the state of the program, so they do not depend on
timing, with one exception: when dispatch is asynchronous and the main thread
has already moved on to another line by the time a stop arrives, that stop
belongs to the line the main thread is on then.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import Hashable

from jaxdbg.frames import display_filename
from jaxdbg.internals import ipython_api

_ENGINE_PACKAGES = ("jax", "jaxlib", "jaxdbg", "jaxdbg_widgets")


class Run:
    """Identifies one run. Equal runs compare equal; the key holds what it names alive."""

    def __init__(self, key: Hashable, frame: types.FrameType | None = None) -> None:
        self._key = key
        # A script run is named by a live frame object. Holding it keeps its
        # identity unique (its id cannot be reused while it is held).
        self._frame = frame

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Run):
            return NotImplemented
        return self._key == other._key and self._frame is other._frame

    def __hash__(self) -> int:
        return hash((self._key, id(self._frame)))

    @property
    def description(self) -> str:
        """How reports name the run: ``cell In[3]``, ``the call at train.py:40``."""
        kind = self._key[0]
        if kind == "cell":
            return f"cell In[{self._key[1]}]"
        if kind == "script":
            return f"the call at {display_filename(self._frame.f_code.co_filename)}:{self._key[1]}"
        return "the main thread"

    def __repr__(self) -> str:
        return f"Run({self.description})"


def current() -> Run:
    """The run that a stop arriving now, on any thread, belongs to."""
    count = ipython_api.execution_count()
    if count is not None:
        return Run(("cell", count))
    return _script_run()


def _is_engine(frame: types.FrameType) -> bool:
    module = frame.f_globals.get("__name__") or ""
    return module.split(".")[0] in _ENGINE_PACKAGES


def _script_run() -> Run:
    main = threading.main_thread()
    frame = sys._current_frames().get(main.ident) if main.ident is not None else None
    stack = []
    while frame is not None:
        stack.append(frame)
        frame = frame.f_back
    # The last frame before the first JAX / jaxdbg frame, outermost first; with no
    # such frame (the main thread is already past the call), the innermost. Frames
    # of a runner around the program (pytest, runpy) come earlier, so they are not picked.
    picked = None
    for f in reversed(stack):
        if _is_engine(f):
            break
        picked = f
    if picked is None:
        return Run(("main",))
    return Run(("script", picked.f_lineno), picked)
