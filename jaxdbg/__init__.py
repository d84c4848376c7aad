"""jaxdbg: an interactive debugger for JAX programs in Jupyter, Colab and the terminal.

Public API::

    jaxdbg.breakpoint(...)                 stop with runtime values, inside jit/vmap/grad/scan/pmap
    jaxdbg.breakpoint_if(pred, ...)        stop only where pred holds
    jaxdbg.breakpoint_on_nonfinite(*xs)    stop when any leaf holds NaN or Inf
    jaxdbg.register_debugger / get_debugger / available_debuggers
    jaxdbg.install_jax_hook / uninstall_jax_hook
    jaxdbg.print / jaxdbg.callback     jax.debug.print / callback with file:line, batch and device
    jaxdbg.checkify(f, errors) / show  checkify whose errors say where; render an Error
    jaxdbg.post_mortem()               the debugger on the last exception's frames, like %debug
    jaxdbg.open_stop(path)             reopen a stop written by the `save PATH` command
    jaxdbg.watch_history()             every watch's values per hit, numpy arrays keyed by expression
    jaxdbg.Session, jaxdbg.Frame, jaxdbg.DebuggerQuit
    jaxdbg.visualize_sharding(x, shape=None)   draw how an array, Sharding or Mesh is laid out
    jaxdbg.sharding_view(x, shape=None)        the same layout as a displayable object
    jaxdbg.inspect_sharding(x, callback=None)  inside jit: the compiled sharding, on every call
    jaxdbg.distributed.serve_here()    serve every process's stops of a jax.distributed job here
"""

# isort: skip_file
# The order of these imports is the order features register in: the core commands
# first in `help`, then the many-stops, replay and watch commands; the drawings and the
# frontends before the installed backends.

from jaxdbg.runtime import collective_timeouts as _collective_timeouts  # noqa: F401 (first: see the module)
from jaxdbg.commands import core as _core_commands  # noqa: F401 (registers the core commands, first in help)
from jaxdbg.commands import breakpoints as _breakpoint_commands  # noqa: F401 (registers commands)
from jaxdbg.replay import stepping as _replay  # noqa: F401 (registers replay and the stepping commands)
from jaxdbg.commands import watches as _watch_commands  # noqa: F401 (registers commands)
from jaxdbg.views import drawings as _drawings  # noqa: F401 (registers the views' drawings of the models)
from jaxdbg.frontends import cli as _cli
from jaxdbg.frontends import colab as _colab
from jaxdbg.frontends import scripted as _scripted  # noqa: F401 (answers stops before backends)
from jaxdbg.capture.breakpoints import breakpoint, breakpoint_if
from jaxdbg.capture.nonfinite_breakpoint import breakpoint_on_nonfinite
from jaxdbg.capture.checkify_errors import checkify
from jaxdbg.runtime.errors import DebuggerQuit
from jaxdbg.engine.frames import Frame
from jaxdbg.ipython.extension import load_ipython_extension, unload_ipython_extension
from jaxdbg.capture.breakpoint_hook import install_jax_hook, uninstall_jax_hook
from jaxdbg.engine.registry import available_debuggers, get_debugger, register_debugger, unregister_debugger
from jaxdbg.engine.outputs import Output, OutputKind, Resume
from jaxdbg.capture.postmortem import post_mortem
from jaxdbg.capture.nan_watch import debug_infs, debug_nans
from jaxdbg.capture.prints import callback
from jaxdbg.capture.prints import debug_print as print  # jaxdbg.print, like jax.debug.print
from jaxdbg.engine.saved_stops import SavedStopError, open_stop
from jaxdbg.engine.watch_history import watch_history
from jaxdbg.engine.session import Session
from jaxdbg.capture.sharding_display import inspect_sharding, visualize_sharding
from jaxdbg.engine.values.layout_reading import sharding_view
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.capture.display import show  # the function, not the module of that name
from jaxdbg import distributed  # jaxdbg.distributed.serve_here(), for jax.distributed jobs
from jaxdbg.job import stop_routing as _stop_routing  # noqa: F401 (routes a job's stops to its debug host)

__version__ = "0.1.0"

# The terminal debugger works everywhere, so it is the lowest-priority fallback.
# replace=True: reloading the package (``%reload_ext jaxdbg``) runs this again.
register_debugger("cli", _cli.run_cli, priority=-100, available=_cli.available, options=_cli.OPTIONS, replace=True)
# In Colab the HTML view is the default (above the widget panel).
if _colab.importable():
    register_debugger(
        "colab", _colab.run_colab, priority=200, available=_colab.available, options=_colab.OPTIONS, replace=True
    )

# Installed backends (the widget panel) register themselves through entry points.
from jaxdbg.engine.backend_plugins import load_installed_backends as _load_installed_backends  # noqa: E402

_load_installed_backends()

__all__ = [
    "breakpoint",
    "breakpoint_if",
    "breakpoint_on_nonfinite",
    "DebuggerQuit",
    "Frame",
    "Output",
    "OutputKind",
    "Resume",
    "Session",
    "StopInfo",
    "register_debugger",
    "unregister_debugger",
    "get_debugger",
    "available_debuggers",
    "install_jax_hook",
    "uninstall_jax_hook",
    "load_ipython_extension",
    "unload_ipython_extension",
    "__version__",
    "visualize_sharding",
    "sharding_view",
    "inspect_sharding",
    "print",
    "callback",
    "checkify",
    "show",
    "post_mortem",
    "debug_nans",
    "debug_infs",
    "open_stop",
    "SavedStopError",
    "watch_history",
    "distributed",
]
