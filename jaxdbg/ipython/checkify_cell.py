"""``%%checkify``: run a cell with its jitted calls checked, and the notebook view of errors.

While the cell runs, ``jax.jit`` makes checked functions and every jitted function
already bound to a name in the notebook is swapped for a checked one. A checked
call runs ``jax.jit(checkify(f, errors))``; the first call that fails ends the
cell, whose result is then the error, rendered with its location (see
:mod:`jaxdbg.capture.checkify_errors`). The names are put back when the cell ends.

The extension also renders any checkify ``Error`` that is a cell's result.
"""

from __future__ import annotations

import ast
import shlex
import weakref
from typing import Any, Callable

from jax.experimental import checkify as jax_checkify

from jaxdbg.capture.checkify_errors import CheckifyView, LocatedError, parse_errors
from jaxdbg.internals import ipython_api, jax_api
from jaxdbg.runtime import jax_routes, notices

USAGE = "%%checkify [--errors user|index|float|nan|div|all]  (several joined with commas)"


class CheckFailed(Exception):
    """Ends a ``%%checkify`` cell at the first checked call that failed."""

    def __init__(self, error: LocatedError) -> None:
        super().__init__(error.get())
        self.error = error


def _is_jitted(value: Any) -> bool:
    # A jax.jit result: callable with the ahead-of-time ``lower`` / ``trace`` methods.
    return callable(value) and hasattr(value, "lower") and hasattr(value, "trace") and not isinstance(value, type)


# Checked versions of the notebook's jitted functions, kept across %%checkify runs so
# a function is traced and compiled once per error set, not once per cell run.
_checked_cache: "weakref.WeakKeyDictionary[Any, dict[frozenset, Callable]]" = weakref.WeakKeyDictionary()


class CheckedCalls:
    """Checked stand-ins for jitted functions while one cell runs."""

    def __init__(self, errors: frozenset) -> None:
        self.errors = errors
        self.original_jit = jax_routes.JIT.original()  # JAX's own, also while the cell's stands in
        self.unchecked: list[str] = []  # functions that could not be checked, and why

    def wrap(
        self, jitted: Callable[..., Any], *, jit_options: dict | None = None, fun: Callable[..., Any] | None = None
    ) -> Callable[..., Any]:
        target = fun if fun is not None else jitted
        checked = self._compiled(jitted, target, jit_options)
        name = getattr(target, "__name__", "function")
        state = {"checked_once": False, "usable": True}

        def call(*args: Any, **kwargs: Any) -> Any:
            if not state["usable"] or jax_api.holds_tracer((args, kwargs)):
                return jitted(*args, **kwargs)  # inside another trace: the outer call checks
            try:
                err, out = checked(*args, **kwargs)
            except Exception as exc:
                if state["checked_once"] or isinstance(exc, CheckFailed):
                    raise
                # The checked version cannot be built for this function (static
                # arguments of an existing jit, a transform checkify does not take):
                # run it as it is; a real error in the function shows up from there.
                state["usable"] = False
                self.unchecked.append(f"{name} ({type(exc).__name__})")
                return jitted(*args, **kwargs)
            state["checked_once"] = True
            if err.get_exception() is not None:
                raise CheckFailed(LocatedError.of(err))
            return out

        call.__wrapped__ = target  # type: ignore[attr-defined]
        call.__name__ = name
        return call

    def _compiled(self, jitted: Any, target: Any, jit_options: dict | None) -> Callable[..., Any]:
        def build() -> Callable[..., Any]:
            return self.original_jit(jax_routes.CHECKIFY.original()(target, errors=self.errors), **(jit_options or {}))

        if jit_options is not None:  # jitted by this cell: new each run anyway
            return build()
        try:
            per_errors = _checked_cache.setdefault(jitted, {})
        except TypeError:  # not weak-referenceable
            return build()
        if self.errors not in per_errors:
            per_errors[self.errors] = build()
        return per_errors[self.errors]

    def jit(self) -> Callable[..., Any]:
        """A ``jax.jit`` whose results are checked (decorator and partial forms)."""

        def checked_jit(fun: Any = None, **options: Any) -> Any:
            if fun is None:
                return lambda f: checked_jit(f, **options)
            return self.wrap(self.original_jit(fun, **options), jit_options=options, fun=fun)

        return checked_jit


def _run_source(shell: Any, cell: str) -> Any:
    """Run a cell's code in the user namespace; the value of a final expression."""
    source = shell.transform_cell(cell)  # line magics and shell escapes, as IPython does
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    filename = ipython_api.cache_cell_source(shell, source)
    namespace = shell.user_ns
    if tree.body:
        exec(compile(tree, filename, "exec"), namespace)  # the user's own cell
    if last is not None:
        return eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
    return None


def checkify_cell(shell: Any, line: str, cell: str) -> Any:
    """The body of ``%%checkify``."""
    args = shlex.split(line)
    spec = "user"
    while args:
        arg = args.pop(0)
        if arg in ("--errors", "-e") and args:
            spec = args.pop(0)
        elif arg.startswith("--errors="):
            spec = arg.split("=", 1)[1]
        else:
            notices.notice(f"unexpected argument {arg!r}; usage: {USAGE}")
            return None
    try:
        errors = parse_errors(spec)
    except ValueError as exc:
        notices.notice(str(exc))
        return None
    calls = CheckedCalls(errors)
    namespace = shell.user_ns
    swapped = {name: value for name, value in list(namespace.items()) if not name.startswith("_") and _is_jitted(value)}
    stand_ins = {name: calls.wrap(value) for name, value in swapped.items()}
    for name, value in list(namespace.items()):
        if value is calls.original_jit:  # ``from jax import jit``
            swapped[name], stand_ins[name] = value, calls.jit()
    namespace.update(stand_ins)
    routed_here = jax_routes.JIT.install(calls.jit())  # a nested %%checkify keeps the outer one
    try:
        result = _run_source(shell, cell)
    except CheckFailed as failed:
        return failed.error
    finally:
        if routed_here:
            jax_routes.JIT.uninstall()
        for name, stand_in in stand_ins.items():
            if namespace.get(name) is stand_in:
                namespace[name] = swapped[name]
    if calls.unchecked:
        notices.notice("not checked: " + ", ".join(sorted(set(calls.unchecked))))
    return result


# -- extension feature ------------------------------------------------------------------------


def _html(err: Any) -> str | None:
    return CheckifyView.of(err)._repr_html_()


def _plain(err: Any, p: Any, cycle: bool) -> None:
    p.text(str(CheckifyView.of(err)))


def load(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    formatters["text/html"].for_type(jax_checkify.Error, _html)
    formatters["text/plain"].for_type(jax_checkify.Error, _plain)

    def magic(line: str, cell: str) -> Any:
        return checkify_cell(shell, line, cell)

    magic.__doc__ = f"Run the cell with its jitted calls checked.\n\n{USAGE}"
    shell.register_magic_function(magic, magic_kind="cell", magic_name="checkify")


def unload(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for mime in ("text/html", "text/plain"):
        formatters[mime].pop(jax_checkify.Error, None)
    shell.magics_manager.magics["cell"].pop("checkify", None)
