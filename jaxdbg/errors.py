"""Exceptions that jaxdbg raises into the debugged program."""


class DebuggerQuit(Exception):
    """Raised into the debugged computation when the user quits the debugger.

    Eagerly it propagates as itself. From inside ``jax.jit`` XLA wraps it in a
    ``JaxRuntimeError``; :mod:`jaxdbg.quit_reporting` shows that as one line.
    """

    def __init__(self, message: str = "debugger session ended by 'quit'") -> None:
        super().__init__(message)
