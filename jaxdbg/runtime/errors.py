"""Exceptions that jaxdbg raises into the debugged program."""


class DebuggerQuit(Exception):
    """Raised into the debugged computation when the user quits the debugger.

    Eagerly it propagates as itself. From inside ``jax.jit`` XLA wraps it in a
    ``JaxRuntimeError``; :mod:`jaxdbg.runtime.quit_reporting` shows that as one line.

    It is an ``Exception``, as pdb's ``BdbQuit`` is: a program's own
    ``except Exception:`` catches it. Deriving from BaseException would not let it
    past such a handler inside jit anyway, where XLA turns every callback failure
    into a ``JaxRuntimeError`` (an Exception); an interrupt (KeyboardInterrupt)
    is the way to end a computation that catches everything.
    """

    def __init__(self, message: str = "debugger session ended by 'quit'") -> None:
        super().__init__(message)


class DebugHostGone(DebuggerQuit):
    """Raised into a computation whose stop cannot be served: the job's debug host left
    or died, or the job's coordination service ended. Its message says which, in one
    line (:mod:`jaxdbg.runtime.quit_reporting` shows it instead of the quit's)."""
