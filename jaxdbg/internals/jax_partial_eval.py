"""Which partial evaluation, if any, a breakpoint is traced under.

JAX partially evaluates a function to linearize it: a ``custom_jvp`` rule under
``grad`` runs once with its primals known and its tangents unknown (``JaxprTracer``s),
and the stop, which runs with the primal computation, shows the tangents as unavailable.

A library may also partially evaluate a function only to learn about it. Flax Linen's
``nn.scan`` traces its body once that way, with the carry and inputs unknown, to find
which variables are broadcast, and then traces it again for the real ``lax.scan``. A
stop staged in that first pass would run outside the loop, at every call, with the
loop's values missing; so a breakpoint traced in it stages nothing, as JAX's own
callbacks, whose unknown operands put them where that pass throws away, run nothing.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import jax

from jaxdbg.internals.jax_api import _private

_JaxprTracer = _private("jax._src.interpreters.partial_eval", "JaxprTracer")
_JaxprTrace = _private("jax._src.interpreters.partial_eval", "JaxprTrace")
_DynamicJaxprTrace = _private("jax._src.interpreters.partial_eval", "DynamicJaxprTrace")
_trace_ctx = _private("jax._src.core", "trace_ctx")
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


def _under_partial_eval() -> bool:
    """Whether the innermost staging here is a partial evaluation (a JaxprTrace met
    before any staged body's trace)."""
    trace = getattr(_trace_ctx, "trace", None)
    while trace is not None:
        if isinstance(trace, _JaxprTrace):
            return True
        if isinstance(trace, _DynamicJaxprTrace):
            return False
        trace = getattr(trace, "parent_trace", None)
    return False


def in_exploratory_partial_eval() -> bool:
    """True where the innermost partial evaluation this code runs in is not JAX's own
    (a linearization), but one a library started to learn about the function."""
    if _JaxprTrace is None or _pe_module is None or not _under_partial_eval():
        return False
    pe_file, ad_file = _pe_module.__file__, getattr(_ad_module, "__file__", None)
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename == ad_file and code.co_name == _LINEARIZE:
            return False
        if code.co_filename == pe_file and code.co_name in _PARTIAL_EVAL_ENTRIES:
            starter = _first_caller_outside(frame, pe_file)
            return starter is not None and not starter.f_code.co_filename.startswith(_JAX_DIR)
        frame = frame.f_back
    return False


def _first_caller_outside(frame: types.FrameType, pe_file: str) -> types.FrameType | None:
    """The frame that started the partial evaluation ``frame`` is part of: the first
    caller outside partial_eval and JAX's function-wrapping plumbing."""
    plumbing = {pe_file, *(_private(m, "__file__") for m in _PLUMBING)}
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename in plumbing:
        caller = caller.f_back
    return caller


_PLUMBING = ("jax._src.linear_util", "jax._src.profiler", "jax._src.traceback_util", "jax._src.api_util")


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests)."""
    pe_names = set(dir(_pe_module)) if _pe_module is not None else set()
    return {
        "jax._src.interpreters.partial_eval.JaxprTracer": _JaxprTracer is not None,
        "jax._src.interpreters.partial_eval.JaxprTrace, DynamicJaxprTrace": _JaxprTrace is not None
        and _DynamicJaxprTrace is not None,
        "jax._src.core.trace_ctx": _trace_ctx is not None,
        "jax._src.interpreters.partial_eval.trace_to_jaxpr_nounits": "trace_to_jaxpr_nounits" in pe_names,
        "jax._src.interpreters.ad.linearize_from_jvp": hasattr(_ad_module, _LINEARIZE),
    }
