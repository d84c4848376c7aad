"""Which run of the program a stop belongs to, for ``continue all``.

``continue all`` continues past every remaining stop of a breakpoint "in this
run". A run is:

- In IPython (a notebook kernel, Colab, the IPython terminal): the cell being
  executed, keyed by IPython's execution count. Every stop of the computations
  that cell started belongs to it: the other pmap devices, the rest of a scan or
  of a vmap batch, and later calls made by a loop in the same cell.
- In a plain script: the whole script, as if it were one cell, until
  :func:`jaxdbg.engine.breakpoint_state.end_run` ends the run (a script may call it
  at the end of each step to scope ``continue all`` to one step).

Both rules are deterministic: they do not depend on which thread a stop arrives
on or on when it arrives, so they hold with asynchronous dispatch and for stops
of several devices alike. (A finer rule for scripts, "the jitted call that is
running", cannot be told apart from the next call once dispatch is
asynchronous: pmap returns before its devices stop.)
"""

from __future__ import annotations

from typing import Hashable

from jaxdbg.internals import ipython_api


class Run:
    """Identifies one run; equal runs compare equal."""

    def __init__(self, key: tuple[Hashable, ...]) -> None:
        self._key = key

    @property
    def description(self) -> str:
        """How messages name the run: ``cell In[3]`` or ``this script``."""
        return f"cell In[{self._key[1]}]" if self._key[0] == "cell" else "this script"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Run) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Run({self.description})"


def current() -> Run:
    """The run that a stop arriving now, on any thread, belongs to."""
    count = ipython_api.execution_count()
    return Run(("cell", count)) if count is not None else Run(("script",))
