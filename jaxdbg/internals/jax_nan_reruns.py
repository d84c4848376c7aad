"""JAX's check of a compiled call's outputs, and its de-optimized re-run, as the NaN
watch needs them.

With ``jax_debug_nans`` / ``jax_debug_infs`` on, JAX checks the outputs of every
compiled call: the Python dispatch path checks them as it unpacks them, the C++ fast
path through a "post hook". Where a check fails, both paths hand the error, the
Python function and the call's arguments to ``api_util.maybe_recursive_nan_check``,
which prints a line and re-runs the function op by op (the "de-optimized version") to
raise from the primitive that made the value. That one function sees every failing
call, whoever made the jitted function and when: ``jax.jit`` before the watch was on,
``nnx.jit``, ``eqx.filter_jit``. :func:`intercept_reruns` puts jaxdbg's handler there.

From JAX 0.10, leaving any thread-local ``jax.debug_nans(False)`` context (JAX enters
one whenever it evaluates a jaxpr eagerly: a ``custom_jvp`` function such as
``jax.nn.relu`` under an eager gradient, ``jnp.var``...) sets this thread's post hook
to None instead of unsetting it, so from then on the fast path of every compiled
function checks nothing. :func:`keep_output_checks_on` makes leaving such a context
unset the thread's hook again, as it was before.

Each name is checked by ``tests/internals/test_internals.py`` through :func:`names_in_use`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, NoReturn

from jaxdbg.internals.jax_api import _private

_api = _private("jax._src", "api")
_api_util = _private("jax._src", "api_util")
_config = _private("jax._src", "config")
_post_hook_state: Any = getattr(_api, "_post_hook_state", None)  # JAX 0.10 on; before it, no such bug
_unset: Any = getattr(getattr(_config, "config_ext", None), "unset", None)
_jax_recursive_check: Any = getattr(_api_util, "maybe_recursive_nan_check", None)
_jax_no_nan_in_rerun: Any = getattr(_api_util, "_raise_no_nan_in_deoptimized", None)
_register_exclusion: Any = _private("jax._src.traceback_util", "register_exclusion")

#: handler(error, fun, args, kwargs): must raise (it is where JAX's re-run would run).
RerunHandler = Callable[[BaseException, Callable[..., Any], tuple, dict], NoReturn]

_handler: list[RerunHandler | None] = [None]


# -- the failing call, with its function and arguments --------------------------------


def _intercepted(error: Exception, fun: Callable[..., Any], args: Any, kwargs: Any, *rest: Any) -> NoReturn:
    handler = _handler[0]
    if handler is None:
        _jax_recursive_check(error, fun, args, kwargs, *rest)
    else:
        handler(error, fun, tuple(args), dict(kwargs or {}))
    raise AssertionError("unreachable: the re-run raises")  # pragma: no cover


def intercept_reruns(handler: RerunHandler | None) -> bool:
    """Route every failing call's re-run to ``handler`` (None: JAX's own again). Returns
    whether this JAX has the hook. JAX's modules look it up at each failure."""
    if not _recursive_check_present():
        return False
    _handler[0] = handler
    if _api_util.maybe_recursive_nan_check is not _intercepted:
        _api_util.maybe_recursive_nan_check = _intercepted
    # The error a user sees after the stop leaves out these frames, as JAX's own.
    for source in (__file__, getattr(sys.modules.get(getattr(handler, "__module__", "")), "__file__", None)):
        if source and callable(_register_exclusion):
            _register_exclusion(source)
    return True


def rerun_deoptimized(error: BaseException, fun: Callable[..., Any], args: tuple, kwargs: dict) -> NoReturn:
    """JAX's re-run of a failing call, op by op, without its printed line: raises the
    FloatingPointError of the primitive that made the value, or, when the re-run makes
    none (an optimization made it, or a rule JAX's checks skip), JAX's error saying so."""
    try:
        fun(*args, **kwargs)
    except (FloatingPointError, ZeroDivisionError) as found:
        raise found from None
    if callable(_jax_no_nan_in_rerun):
        _jax_no_nan_in_rerun(error)
    raise FloatingPointError(f"{error}: the de-optimized function made no invalid value")


def made_by(error: BaseException) -> str | None:
    """The primitive a re-run's error names (``invalid value (nan) encountered in log``)."""
    text = str(error)
    marker = " encountered in "
    if not text.startswith("invalid value (") or marker not in text:
        return None
    return text.split(marker, 1)[1].split()[0].strip(".") or None


# -- the fast path's output checks, kept on ---------------------------------------------


def _keeping_checks(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    def keep(value: Any) -> None:
        hook(value)
        _unset_if_no_local_flags()

    keep._jaxdbg_keeps_checks = True  # type: ignore[attr-defined]
    return keep


def _unset_if_no_local_flags() -> None:
    if _config.debug_nans.get_local() is _unset and _config.debug_infs.get_local() is _unset:
        _post_hook_state.set_local(_unset)


def keep_output_checks_on() -> bool:
    """Leaving a thread-local ``debug_nans`` / ``debug_infs`` context leaves JAX's fast
    path checking outputs again (see above), and this thread's checks, turned off by
    such a context already, are on again. Idempotent; returns whether it applied."""
    if not _post_hook_names_present():
        return False
    for state in (_config.debug_nans, _config.debug_infs):
        hook = state._update_thread_local_hook
        if hook is not None and not getattr(hook, "_jaxdbg_keeps_checks", False):
            state._update_thread_local_hook = _keeping_checks(hook)
    _unset_if_no_local_flags()
    return True


# -- for the tests ----------------------------------------------------------------------


def _recursive_check_present() -> bool:
    code = getattr(_jax_recursive_check, "__code__", None)
    return code is not None and code.co_varnames[:4] == ("e", "fun", "args", "kwargs")


def _post_hook_names_present() -> bool:
    return (
        _post_hook_state is not None
        and _unset is not None
        and all(
            hasattr(getattr(_config, flag, None), "_update_thread_local_hook") for flag in ("debug_nans", "debug_infs")
        )
        and callable(getattr(_post_hook_state, "set_local", None))
    )


def names_in_use() -> dict[str, bool]:
    """Every private name above and whether this JAX still has it (for the tests). The
    post hook's state is JAX 0.10's and later's; before it the bug it works around is absent."""
    from jaxdbg.internals.jax_api import jax_version

    names = {
        "jax._src.api_util.maybe_recursive_nan_check(e, fun, args, kwargs), "
        "_raise_no_nan_in_deoptimized": _recursive_check_present() and callable(_jax_no_nan_in_rerun),
        "jax._src.traceback_util.register_exclusion": callable(_register_exclusion),
    }
    if jax_version() >= (0, 10):
        names["jax._src.api._post_hook_state, jax._src.config.config_ext.unset, State._update_thread_local_hook"] = (
            _post_hook_names_present()
        )
    return names
