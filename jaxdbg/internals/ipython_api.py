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
    if mapping is None and compiler is not None:
        return _cell_label_from_history(ip, filename)
    return None


_history_labels: dict[str, tuple[int, str]] = {}  # file name -> (history length, label)


def _cell_label_from_history(ip, filename: str) -> str | None:
    """IPython 7 (Colab's) keeps no map: find the latest cell whose source is the one
    cached under ``filename`` (history stores cells without trailing newlines)."""
    import linecache

    history = getattr(getattr(ip, "history_manager", None), "input_hist_parsed", None)
    entry = linecache.cache.get(filename)
    if not isinstance(history, list) or not entry or len(entry) < 3:
        return None
    known = _history_labels.get(filename)
    if known is not None and known[0] == len(history):
        return known[1]
    source = "".join(entry[2]).rstrip("\n")
    for number in range(len(history) - 1, 0, -1):
        if str(history[number]).rstrip("\n") == source:
            _history_labels[filename] = (len(history), f"In[{number}]")
            return f"In[{number}]"
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
    compiler = getattr(ip, "compile", None)
    return {"IPython CachingCompiler._filename_map or HistoryManager.input_hist_parsed":
            hasattr(compiler, "_filename_map")
            or isinstance(getattr(ip.history_manager, "input_hist_parsed", None), list),
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
