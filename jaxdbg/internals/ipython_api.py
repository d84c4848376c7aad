"""IPython internals: how a cell's compiled file name maps to ``In[n]``, showing a
one-line error, sharing IPython's single custom-exception slot, following cells
(``shell.events``), display formatters' type printers, and compiling a cell's source
under a name its frames show as ``In[n]``."""

from __future__ import annotations

import sys
from typing import Any, Callable


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


# A handler gets (shell, etype, value, tb, tb_offset) and returns True when it showed
# the error itself; False passes the error on down the chain.
CustomExcHandler = Callable[[Any, type, BaseException, Any, Any], bool]


def add_custom_exc(
    shell: Any, exc_types: tuple[type[BaseException], ...], handler: CustomExcHandler
) -> Callable[[], None]:
    """Handle ``exc_types`` in cells, chained to the handler installed before.

    IPython has one ``set_custom_exc`` slot; taking it would silently drop another
    extension's handler. The chained handler tries ``handler`` first, then the
    previous one (for its own exception types), then IPython's usual traceback.
    Returns ``remove``: it restores the previous handler if this one is still on top,
    else leaves this one in place as a pass-through.
    """
    previous_types = tuple(getattr(shell, "custom_exceptions", ()) or ())
    previous = getattr(shell, "CustomTB", None)
    active = [True]

    def chained(self: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None):
        if active[0] and isinstance(value, exc_types) and handler(self, etype, value, tb, tb_offset):
            return None
        if previous is not None and previous_types and isinstance(value, previous_types):
            previous(etype, value, tb, tb_offset=tb_offset)
            return None
        self.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None

    shell.set_custom_exc(tuple(dict.fromkeys(previous_types + tuple(exc_types))), chained)
    installed = shell.CustomTB

    def remove() -> None:
        active[0] = False
        if getattr(shell, "CustomTB", None) is installed:
            shell.custom_exceptions = previous_types
            shell.CustomTB = previous

    return remove


def add_traceback_filter(shell: Any, handler: CustomExcHandler) -> Callable[[], None]:
    """Let ``handler`` show errors that reach ``shell.showtraceback`` outside the cell's
    code: IPython's display formatters catch what a value's ``__repr__`` raises (the
    cell's value, an array whose computation failed) and show it there, past the
    custom-exception slot. Returns ``remove``."""
    original = getattr(shell, "showtraceback", None)
    if original is None:
        return lambda: None

    def showtraceback(exc_tuple: Any = None, *args: Any, **kwargs: Any) -> Any:
        etype, value, tb = exc_tuple if exc_tuple is not None else sys.exc_info()
        if value is not None and handler(shell, etype if etype is not None else type(value), value, tb, None):
            return None
        return original(exc_tuple, *args, **kwargs)

    shell.showtraceback = showtraceback  # an instance attribute shadows the method

    def remove() -> None:
        if vars(shell).get("showtraceback") is showtraceback:
            del shell.showtraceback

    return remove


def names_in_use() -> dict[str, bool]:
    ip = shell()
    if ip is None:
        return {}
    compiler = getattr(ip, "compile", None)
    return {
        "IPython CachingCompiler._filename_map or HistoryManager.input_hist_parsed": hasattr(compiler, "_filename_map")
        or isinstance(getattr(ip.history_manager, "input_hist_parsed", None), list),
        "IPython InteractiveShell._showtraceback": hasattr(ip, "_showtraceback"),
        "IPython InteractiveShell.showtraceback": hasattr(ip, "showtraceback"),
        "IPython InteractiveShell.CustomTB / custom_exceptions": hasattr(ip, "CustomTB")
        and hasattr(ip, "custom_exceptions"),
    }


def execution_count() -> int | None:
    """The number of the cell IPython is executing (``In[n]``), or of the last cell
    run when none is; None outside IPython.

    While a cell runs, the displayhook holds its public ``ExecutionResult``, whose
    ``execution_count`` is the cell's number. ``InteractiveShell.execution_count``
    is the next cell's number once a cell has finished; while one runs it is that
    cell's number on older IPython but already the next one on recent IPython
    (which counts the cell before running it), so it is used only between cells.
    """
    ip = shell()
    count = getattr(ip, "execution_count", None)
    if not isinstance(count, int):
        return None
    result = getattr(getattr(ip, "displayhook", None), "exec_result", None)
    running = getattr(result, "execution_count", None)
    return running if isinstance(running, int) else count - 1


CellCallback = Callable[[Any], None]


def register_cell_events(
    shell: Any, *, pre_run_cell: CellCallback | None = None, post_run_cell: CellCallback | None = None
) -> Callable[[], None]:
    """Call ``pre_run_cell(info)`` before each cell and ``post_run_cell(result)`` after
    it (IPython's ``shell.events``, with the signatures of IPython >= 7); returns the
    unregister, safe to call more than once. A no-op where ``shell`` has no events.

    Every jaxdbg module that follows cells registers here, so the events and their
    undo are spelled once.
    """
    events = getattr(shell, "events", None)
    if events is None:
        return lambda: None
    registered = [
        (name, fn) for name, fn in (("pre_run_cell", pre_run_cell), ("post_run_cell", post_run_cell)) if fn is not None
    ]
    for name, fn in registered:
        events.register(name, fn)

    def unregister() -> None:
        for name, fn in registered:
            try:
                events.unregister(name, fn)
            except ValueError:  # already gone (unregistered once, or by someone else)
                pass

    return unregister


def on_cell_finished(callback) -> None:
    """Call ``callback()`` once, after the running cell finishes (IPython's post_run_cell)."""
    unregister: list[Callable[[], None]] = []

    def once(*_):
        unregister[0]()
        callback()

    unregister.append(register_cell_events(shell(), post_run_cell=once))


_NO_PRINTER = object()


def add_type_printer(formatter: Any, cls: type, printer: Callable[..., Any]) -> Callable[[], None]:
    """Show values of ``cls`` with ``printer`` in ``formatter`` (``for_type``, public);
    returns the undo, which puts back the printer ``cls`` had before, or none.

    ``for_type`` returns the previous printer but offers no way to remove one: the
    undo edits the formatter's ``type_printers`` dict (a trait of ``BaseFormatter``).
    """
    previous = formatter.type_printers.get(cls, _NO_PRINTER)
    formatter.for_type(cls, printer)

    def undo() -> None:
        if previous is _NO_PRINTER:
            formatter.type_printers.pop(cls, None)
        else:
            formatter.type_printers[cls] = previous

    return undo


def cache_cell_source(shell: Any, source: str) -> str:
    """Store ``source`` in linecache as IPython stores a cell's code (``CachingCompiler.cache``,
    IPython >= 7); the file name to compile it under, so tracebacks and jaxdbg's frames
    show its lines and label it ``In[n]``."""
    return shell.compile.cache(source)
