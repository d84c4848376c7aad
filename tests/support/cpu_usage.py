"""The CPU each test costs, whoever spends it: this process, the kernels, scripts, servers
and browsers it started (and theirs), reaped or still running.

Wall time misleads on a busy machine (a test waits as long for the CPU as for its
kernel); CPU seconds do not. Before and after each test (its setup, call and teardown,
so a module's kernel counts where it starts and where it is shut down) the hooks read
the CPU of this process's whole tree: its own (``getrusage``), its reaped children's
(``RUSAGE_CHILDREN``, which holds what they reaped in turn), and that of every live
descendant from ``/proc`` (what it spent and what it reaped), so a session-wide server's
kernel counts for the test that ran its cell, not for the one that stopped the server.
The difference goes into the test's JUnit XML as the property ``cpu_s``, which
``devtools/summary.py`` sums up per test and per module at the end of ``dev.py test``.

Without ``/proc`` (not Linux), live descendants are not seen: they count when reaped.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

CPU_PROPERTY = "cpu_s"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PROC = Path("/proc")
_STARTED = pytest.StashKey[float]()
_LAST = pytest.StashKey[bool]()
_CALL_ENDED = pytest.StashKey[float]()


def _live_descendants_cpu(root: int) -> float:
    """CPU seconds of every live descendant of ``root`` (each one's own and its reaped
    children's), read from /proc; 0 without it."""
    parent_of: dict[int, int] = {}
    spent: dict[int, int] = {}
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return 0.0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it ended meanwhile
            continue
        # pid (comm) state ppid ... utime stime cutime cstime: fields 4 and 14-17; the
        # command name may hold spaces and parentheses, so split after its last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        try:
            parent_of[int(entry)] = int(fields[1])
            spent[int(entry)] = sum(int(v) for v in fields[11:15])
        except (IndexError, ValueError):
            continue
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_of.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        total += spent.get(pid, 0)
        todo += children.get(pid, ())
    return total / _TICKS


def tree_cpu() -> float:
    """CPU seconds this process's tree has spent so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + _live_descendants_cpu(os.getpid())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Notes the tree's CPU as the test starts."""
    item.stash[_STARTED] = tree_cpu()
    item.stash[_LAST] = nextitem is None
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """The teardown's report (the one JUnit XML takes its properties from) carries the
    test's CPU seconds. The last test of a session ends at its call: its teardown stops
    the session's servers and browser, whose processes left to init on the way out take
    their CPU along."""
    outcome = yield
    if _STARTED not in item.stash:
        return
    if call.when == "call" and item.stash.get(_LAST, False):
        item.stash[_CALL_ENDED] = tree_cpu()
    elif call.when == "teardown":
        ended = item.stash.get(_CALL_ENDED, None)
        spent = (ended if ended is not None else tree_cpu()) - item.stash[_STARTED]
        report = outcome.get_result()  # type: ignore[attr-defined]
        report.user_properties.append((CPU_PROPERTY, f"{spent:.2f}"))
