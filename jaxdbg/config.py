"""What jaxdbg reads from its environment, and the process-wide switches ``%jaxdbg``
reports, sets and resets: each declared once here, with its default and meaning.

Every module reads them through this table, and ``%jaxdbg`` (and ``docs/magic.md``)
lists them from it. This module imports nothing of jaxdbg, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import threading


@dataclasses.dataclass(frozen=True)
class EnvironmentVariable:
    """One environment variable jaxdbg reads (read each time: a program may change it)."""

    name: str
    meaning: str
    default: str = ""

    def get(self) -> str:
        return os.environ.get(self.name, self.default)

    def is_set(self) -> bool:
        """Set to something other than blanks."""
        return bool(self.get().strip())

    def raw(self) -> str | None:
        """The value as it stands in the environment, None when absent."""
        return os.environ.get(self.name)

    def set(self, value: str | None) -> None:
        """Set the variable (None removes it), for this process and its children."""
        if value is None:
            os.environ.pop(self.name, None)
        else:
            os.environ[self.name] = value


BACKEND = EnvironmentVariable(
    "JAXDBG_BACKEND", "the debugger backend that serves stops, by name (unset: the best one that can run here)"
)
COMMANDS = EnvironmentVariable(
    "JAXDBG_COMMANDS", "debugger commands that answer stops without a prompt, separated by ';' (\"p x; c\")"
)
CI = EnvironmentVariable(
    "CI", "set by CI services: a stop whose scripted commands ran out continues instead of waiting"
)

DEBUG_SECRET = EnvironmentVariable(
    "JAXDBG_DEBUG_SECRET",
    "a jax.distributed job's shared secret, the same in every process: it signs the debugger's "
    "messages between processes (unset: each process serves its own stops)",
)
DEBUG_PROCESS = EnvironmentVariable(
    "JAXDBG_DEBUG_PROCESS",
    "the process of a jax.distributed job that serves every process's stops (the debug host)",
    default="0",
)

LIBRARY_FRAMES = EnvironmentVariable(
    "JAXDBG_LIBRARY_FRAMES",
    "on: installed libraries' frames (Flax, Equinox, optax, anything in site-packages) are listed one by one "
    "in 'where' and the panel, and up / down stop at them (unset: each run of them is one row, stepped over)",
)
BREAKPOINTS = EnvironmentVariable(
    "JAXDBG_BREAKPOINTS",
    "off: every jaxdbg breakpoint (and jax.debug.breakpoint() routed to jaxdbg) is left out of the programs traced "
    "from then on, which run as if it were not there (unset or on: breakpoints stop)",
)
# Not jaxdbg's own, so not in ENVIRONMENT's table: XLA's flags, to which importing jaxdbg
# adds its CPU collective timeouts (runtime/collective_timeouts.py).
XLA_FLAGS = EnvironmentVariable("XLA_FLAGS", "XLA's flags, read once when JAX starts its backends")

#: What turns a setting on (an environment variable's value, a command's argument).
ON_WORDS = frozenset({"on", "1", "true", "yes", "show"})

#: What turns a setting that is on by default off.
OFF_WORDS = frozenset({"off", "0", "false", "no"})

ENVIRONMENT = (BACKEND, COMMANDS, CI, DEBUG_SECRET, DEBUG_PROCESS, LIBRARY_FRAMES, BREAKPOINTS)


def breakpoints_on() -> bool:
    """Whether a breakpoint traced now is staged into its program ($JAXDBG_BREAKPOINTS)."""
    return BREAKPOINTS.get().strip().lower() not in OFF_WORDS


def launched_process_environment() -> dict[str, str]:
    """This process's environment for a process it launches, less ``$JAXDBG_COMMANDS``:
    scripted commands answer the stops of the process they were given to."""
    environment = dict(os.environ)
    environment.pop(COMMANDS.name, None)
    return environment


@dataclasses.dataclass(frozen=True)
class JaxFlag:
    """A JAX configuration flag that ``%jaxdbg`` shows (and sets, when it has a switch)."""

    name: str  # jax.config name
    meaning: str
    switch: str | None = None  # ``%jaxdbg SWITCH on|off``; None: shown only

    def get(self) -> bool:
        import jax

        return bool(getattr(jax.config, self.name))

    def set(self, value: bool) -> None:
        import jax

        jax.config.update(self.name, value)


JAX_FLAGS = (
    JaxFlag("jax_debug_nans", "a NaN in a jitted call raises (and opens the post-mortem)", "nans"),
    JaxFlag("jax_debug_infs", "an Inf in a jitted call raises (and opens the debugger where it was made)", "infs"),
    JaxFlag("jax_disable_jit", "functions run eagerly, op by op", "disable_jit"),
    JaxFlag("jax_log_compiles", "each compilation is logged"),
)


class Switch:
    """A process-wide on/off setting of jaxdbg itself."""

    def __init__(self, name: str, meaning: str, default: bool) -> None:
        self.name = name
        self.meaning = meaning
        self.default = default
        self._value = default
        self._lock = threading.Lock()

    def get(self) -> bool:
        return self._value

    def set(self, value: bool) -> None:
        with self._lock:
            self._value = bool(value)

    def reset(self) -> None:
        self.set(self.default)

    def __repr__(self) -> str:
        return f"<Switch {self.name}={'on' if self._value else 'off'}>"


PRINT_ROUTING = Switch(
    "print", "jax.debug.print rows go to the print log (off: to stdout, as JAX prints them)", default=True
)

SWITCHES = (PRINT_ROUTING,)


class PanelDrawn(str, enum.Enum):
    """What a client's frontend did with the debugger panel (see :class:`PanelDrawing`)."""

    UNKNOWN = "not shown yet"
    DRAWN = "drawn by this frontend"
    NOT_DRAWN = "not drawn by this frontend"

    def __str__(self) -> str:
        return self.value


class PanelDrawing:
    """Whether each frontend attached to this kernel draws the debugger panel.

    A frontend without a widget manager (jupyter console, qtconsole, an editor's client)
    shows a widget's text and never draws it; the first stop finds that out by waiting
    for the panel's browser code to say it holds the panel, and later stops of the same
    client (its Jupyter session id) use the typed prompt at once. ``%jaxdbg backend
    widgets`` forces the panel for every client.
    """

    def __init__(self) -> None:
        self._seen: dict[str, PanelDrawn] = {}
        #: client -> seconds from showing its first panel to each message heard ("held", "drawn")
        self.heard_after: dict[str, dict[str, float]] = {}
        self._forced = False
        self._lock = threading.Lock()

    def of(self, client: str) -> PanelDrawn:
        with self._lock:
            return self._seen.get(client, PanelDrawn.UNKNOWN)

    def record(self, client: str, drawn: bool) -> None:
        with self._lock:
            self._seen[client] = PanelDrawn.DRAWN if drawn else PanelDrawn.NOT_DRAWN

    def heard(self, client: str, message: str, seconds: float) -> None:
        """The first ``message`` from ``client``'s frontend came ``seconds`` after its panel showed."""
        with self._lock:
            self.heard_after.setdefault(client, {}).setdefault(message, seconds)

    @property
    def forced(self) -> bool:
        return self._forced

    def force(self, on: bool) -> None:
        """``%jaxdbg backend widgets`` (on) or another choice (off)."""
        with self._lock:
            self._forced = bool(on)

    def reset(self) -> None:
        with self._lock:
            self._seen.clear()
            self.heard_after.clear()
            self._forced = False


PANEL_DRAWING = PanelDrawing()

#: How long a stop waits for the frontend to say it holds the panel before it answers at
#: the typed prompt (or continues, without stdin). Measured in JupyterLab 4 and Notebook 7
#: on the shared test machine (docs/frontends.md): held within 0.2 s, a first view within
#: 0.43 s, cold; a wide margin, paid once per kernel session by a frontend without widgets.
PANEL_DRAW_WAIT_S = 5.0
