"""IPython internals: how a cell's compiled file name maps to ``In[n]``."""

from __future__ import annotations

import sys


def shell():
    """The running IPython shell, or None (never imports IPython itself)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        return ipython.get_ipython()
    except Exception:
        return None


def cell_label(filename: str) -> str | None:
    ip = shell()
    compiler = getattr(ip, "compile", None)
    # IPython >= 8 keeps {cell file name: execution count} on its compiler.
    mapping = getattr(compiler, "_filename_map", None)
    if isinstance(mapping, dict) and filename in mapping:
        return f"In[{mapping[filename]}]"
    return None


def show_short_error(shell, etype: type, message: str, line: str) -> None:
    """Show an error as one line, through the shell so frontends draw it as an error.

    ``InteractiveShell._showtraceback(etype, evalue, stb)`` is where IPython (and
    ipykernel, which sends it as an ``error`` message) emits a formatted traceback.
    """
    show = getattr(shell, "_showtraceback", None)
    if show is None:
        print(line, file=sys.stderr)
        return
    show(etype, message, [line])


def names_in_use() -> dict[str, bool]:
    ip = shell()
    if ip is None:
        return {}
    return {"IPython CachingCompiler._filename_map": hasattr(getattr(ip, "compile", None), "_filename_map"),
            "IPython InteractiveShell._showtraceback": hasattr(ip, "_showtraceback")}


def execution_count() -> int | None:
    """The number of the cell IPython is executing (``In[n]``), or None outside IPython.

    ``InteractiveShell.execution_count`` is public; it is incremented when a cell
    finishes, so while a cell runs it is that cell's number.
    """
    count = getattr(shell(), "execution_count", None)
    return count if isinstance(count, int) else None


def on_cell_finished(callback) -> None:
    """Call ``callback()`` once, after the running cell finishes (IPython's post_run_cell)."""
    ip = shell()
    events = getattr(ip, "events", None)
    if events is None:
        return

    def once(*_):
        try:
            events.unregister("post_run_cell", once)
        except ValueError:
            pass
        callback()

    events.register("post_run_cell", once)
