"""Which partial evaluation, if any, a breakpoint is traced under.

JAX partially evaluates a function to linearize it: a ``custom_jvp`` rule under
``grad`` runs once with its primals known and its tangents unknown (``JaxprTracer``s),
and the stop, which runs with the primal computation, shows the tangents as unavailable.

A library may also trace a function only to learn about it. Flax Linen's ``nn.scan``
traces its body once to find which variables are broadcast, before tracing it again for
the real ``lax.scan``: with JAX's partial evaluation (the carry and inputs unknown), or,
in newer Flax, by staging it into a jaxpr whose unused equations it drops (and which then
fails on anything with an effect that reads the carry: a ``jax.debug.print`` of it). A
stop staged in that first pass would run outside the loop, at every call, with the
loop's values missing, or make Flax raise; so a breakpoint traced there stages nothing.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import jax

from jaxdbg.internals import jax_api
from jaxdbg.internals.jax_api import _private

_JaxprTracer = _private("jax._src.interpreters.partial_eval", "JaxprTracer")
_JaxprTrace = _private("jax._src.interpreters.partial_eval", "JaxprTrace")
_pe_module = _private("jax._src.interpreters", "partial_eval")
_ad_module = _private("jax._src.interpreters", "ad")

#: partial_eval's functions that start a partial evaluation of a Python function.
_PARTIAL_EVAL_ENTRIES = (
    "trace_to_jaxpr_nounits",
    "trace_to_subjaxpr_nounits",
    "trace_to_subjaxpr_nounits2",
    "trace_to_subjaxpr_nounits_fwd",
    "trace_to_subjaxpr_nounits_fwd2",
)
#: ad's function that linearizes a JVP (a custom_jvp rule under grad) with its own trace.
_LINEARIZE = "linearize_from_jvp"
_JAX_DIR = os.path.dirname(jax.__file__) + os.sep


def is_linear_unknown(tracer: Any) -> bool:
    """True for a value JAX is partially evaluating as unknown (a tangent in a rule).

    A stop that used it would land in the linear half of the computation, which
    JAX transposes; such values are shown as unavailable instead.
    """
    if _JaxprTracer is None or not isinstance(tracer, _JaxprTracer):
        return False
    pval = getattr(tracer, "pval", None)
    return pval is not None and not pval.is_known()


def in_exploratory_partial_eval() -> bool:
    """True where the innermost trace this code runs in was started by a library to learn
    about the function (see the module docstring), not by JAX to run or differentiate it."""
    if _JaxprTrace is None or _pe_module is None or not jax_api.is_tracing():
        return False
    pe_file, ad_file = _pe_module.__file__, getattr(_ad_module, "__file__", None)
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename == ad_file and code.co_name == _LINEARIZE:
            return False
        if code.co_filename == pe_file and code.co_name in (*_PARTIAL_EVAL_ENTRIES, _STAGING_ENTRY):
            starter = _first_caller_outside(frame, pe_file)
            if starter is None or starter.f_code.co_filename.startswith(_JAX_DIR):
                return False  # JAX's own: jit, scan, linearize, make_jaxpr
            if code.co_name in _PARTIAL_EVAL_ENTRIES:
                return True
            return _is_exploratory_staging(starter)
        frame = frame.f_back
    return False


#: partial_eval's function that stages a Python function into a jaxpr.
_STAGING_ENTRY = "trace_to_jaxpr_dynamic"
#: Library functions known to stage a function only to look at the jaxpr (file suffix,
#: function): staging is how most libraries run a function, so only these are skipped.
_EXPLORATORY_STAGERS = ((os.path.join("flax", "core", "axes_scan.py"), "scan_fn"),)


def _is_exploratory_staging(starter: types.FrameType) -> bool:
    code = starter.f_code
    return any(code.co_filename.endswith(path) and code.co_name == name for path, name in _EXPLORATORY_STAGERS)


def _first_caller_outside(frame: types.FrameType, pe_file: str) -> types.FrameType | None:
    """The frame that started the trace ``frame`` is part of: the first caller outside
    partial_eval and JAX's function-wrapping plumbing."""
    caller = frame.f_back
    while caller is not None and (caller.f_code.co_filename == pe_file or caller.f_code.co_filename in _PLUMBING):
        caller = caller.f_back
    return caller


#: JAX's modules that wrap a traced function on its way in (frames between a trace's
#: entry in partial_eval and the code that asked for it).
_PLUMBING = frozenset(
    file
    for module in ("jax._src.linear_util", "jax._src.profiler", "jax._src.traceback_util", "jax._src.api_util")
    if (file := _private(module, "__file__")) is not None
)


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    pe_names = set(dir(_pe_module)) if _pe_module is not None else set()
    return {
        "jax._src.interpreters.partial_eval.JaxprTracer": _JaxprTracer is not None,
        "jax._src.interpreters.partial_eval.JaxprTrace": _JaxprTrace is not None,
        "jax._src.interpreters.partial_eval.trace_to_jaxpr_nounits, trace_to_jaxpr_dynamic": {
            "trace_to_jaxpr_nounits",
            _STAGING_ENTRY,
        }
        <= pe_names,
        "jax._src.interpreters.ad.linearize_from_jvp": hasattr(_ad_module, _LINEARIZE),
    }
