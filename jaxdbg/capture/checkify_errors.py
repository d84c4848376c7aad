"""checkify errors that say where they happened.

``jaxdbg.checkify(f, errors=...)`` is ``jax.experimental.checkify.checkify`` whose
error value also knows the user's file:line and function of each failure. JAX
keeps, with every error it records, the traceback of the check (or of the
primitive that produced a NaN, divided by zero, or indexed out of bounds); this
module picks the user's frames out of it. ``jaxdbg.show(err)`` renders any
checkify ``Error``: the message, the location with its source around it, and
for a mapped error (``vmap`` / ``pmap`` of a checkified function) a table of the
mapped indices and the error at each. ``err.throw()`` is JAX's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
from jax.experimental import checkify as jax_checkify

from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.values.drawable import Drawable
from jaxdbg.internals import jax_checkify_errors
from jaxdbg.runtime import jax_routes
from jaxdbg.views import checkify_view

CONTEXT_LINES = 3  # source lines shown either side of the failing line

CATEGORIES: dict[str, frozenset] = {
    "user": jax_checkify.user_checks,
    "index": jax_checkify.index_checks,
    "float": jax_checkify.float_checks,
    "nan": jax_checkify.nan_checks,
    "div": jax_checkify.div_checks,
    "all": jax_checkify.all_checks,
}


def parse_errors(spec: str) -> frozenset:
    """``"user"``, ``"nan,div"``... as a checkify error set; ValueError names the choices."""
    chosen: frozenset = frozenset()
    for name in (p.strip() for p in spec.replace("|", ",").split(",")):
        if name not in CATEGORIES:
            raise ValueError(
                f"unknown checkify error set {name!r}; choose from "
                + ", ".join(CATEGORIES)
                + " (several joined with commas)"
            )
        chosen = chosen | CATEGORIES[name]
    return chosen


# -- where an error happened -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SourceFrame:
    filename: str
    lineno: int
    function: str

    @property
    def location(self) -> str:
        return f"{frames_mod.display_filename(self.filename)}:{self.lineno}"


@dataclasses.dataclass(frozen=True)
class ErrorSite:
    """One failure: its message, the mapped index it happened at (if any), and user frames."""

    message: str
    index: tuple[int, ...] | None
    frames: tuple[SourceFrame, ...]  # innermost first; empty when JAX kept no traceback

    @property
    def where(self) -> SourceFrame | None:
        return self.frames[0] if self.frames else None

    def describe(self) -> str:
        where = self.where
        return self.message + (f" (at {where.location} in {where.function})" if where else "")


def user_frames(traceback_info: Any) -> tuple[SourceFrame, ...]:
    """The user's frames of a checkify traceback, innermost first."""
    hidden = frames_mod.hidden_file_test()  # the same machinery a breakpoint leaves out
    frames = []
    for filename, lineno, function in jax_checkify_errors.traceback_frames(traceback_info):
        if hidden(filename):
            continue
        frames.append(SourceFrame(filename, lineno, function))
    return tuple(frames)


def is_user_file(filename: str) -> bool:
    """Whether ``filename`` is the user's code (not JAX's, jaxdbg's or a library's)."""
    return not frames_mod.hidden_file_test()(filename)


def error_sites(err: Any) -> list[ErrorSite]:
    """Every failure an ``Error`` holds: one, or one per failing mapped index."""
    exc = err.get_exception()
    if exc is None:
        return []
    mapping = getattr(exc, "error_mapping", None)  # a BatchedError: vmap / pmap of checkify
    if isinstance(mapping, dict):
        return [
            ErrorSite(str(e), tuple(int(i) for i in index), user_frames(e.traceback_info))
            for index, e in sorted(mapping.items())
        ]
    return [ErrorSite(str(exc), None, user_frames(getattr(exc, "traceback_info", None)))]


def mapped_shape(err: Any) -> tuple[int, ...]:
    """The batch shape of a mapped error (``()`` when it is not mapped)."""
    import numpy as np

    for pred in jax_checkify_errors.checkify_error_predicates(err):
        return tuple(np.shape(pred))
    return ()


# -- the error value --------------------------------------------------------------------


@jax.tree_util.register_pytree_node_class
class LocatedError(jax_checkify.Error):
    """A checkify ``Error`` whose ``get()`` adds the user's file:line and function.

    Everything else (``throw``, ``get_exception``, use as a pytree under jit,
    vmap, pmap) is JAX's; notebooks render it with :func:`show`'s view.
    """

    __slots__ = ()

    @classmethod
    def of(cls, err: jax_checkify.Error) -> "LocatedError":
        return cls(*jax_checkify_errors.checkify_error_fields(err))

    def get(self) -> str | None:
        sites = error_sites(self)
        if not sites:
            return None
        if sites[0].index is None:
            return sites[0].describe()
        return "\n".join(f"at mapped index {index_label(s.index)}: {s.describe()}" for s in sites)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    def _repr_html_(self) -> str:
        return CheckifyView.of(self)._repr_html_()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(CheckifyView.of(self)))


def checkify(
    f: Callable[..., Any], errors: frozenset = jax_checkify.user_checks
) -> Callable[..., tuple[LocatedError, Any]]:
    """``jax.experimental.checkify.checkify`` whose error knows where each failure happened.

    ``errors`` also accepts a name: ``"user"``, ``"index"``, ``"float"``, ``"nan"``,
    ``"div"`` or ``"all"`` (several joined with commas).
    """
    if isinstance(errors, str):
        errors = parse_errors(errors)
    # Its own error set: checkify interpretations (and so locations) are not shared
    # with another checkified function's.
    checked = jax_routes.CHECKIFY.original()(f, errors=jax_checkify_errors.errors_interpreted_apart(errors))

    def run(*args: Any, **kwargs: Any) -> tuple[LocatedError, Any]:
        with jax_checkify_errors.checkify_errors_at_user_frames(user_frames, is_user_file):
            err, out = checked(*args, **kwargs)
        return LocatedError.of(err), out

    run.__wrapped__ = f  # type: ignore[attr-defined]
    run.__name__ = getattr(f, "__name__", "checked")
    run.__doc__ = getattr(f, "__doc__", None)
    return run


# -- the view -------------------------------------------------------------------------------


def _source(frame: SourceFrame, context: int = CONTEXT_LINES) -> tuple[int, list[str]]:
    lines = frames_mod.source_lines(frame.filename, None)
    if not lines:
        return frame.lineno, []
    first = max(1, frame.lineno - context)
    last = min(len(lines), frame.lineno + context)
    return first, [line.rstrip("\n") for line in lines[first - 1 : last]]


def index_label(index: tuple[int, ...] | None) -> str:
    return "" if index is None else ", ".join(map(str, index))  # None: an unmapped error


@dataclasses.dataclass(repr=False)
class CheckifyView(Drawable):
    """What :func:`show` draws for one checkify ``Error`` (drawn by
    :mod:`jaxdbg.views.checkify_view`, registered there)."""

    sites: list[ErrorSite]
    shape: tuple[int, ...] = ()

    @classmethod
    def of(cls, err: Any) -> "CheckifyView":
        return cls(error_sites(err), mapped_shape(err))

    @property
    def mapped(self) -> bool:
        return bool(self.shape)

    def distinct_frames(self) -> list[SourceFrame]:
        seen, out = set(), []
        for site in self.sites:
            if site.where is not None and site.where not in seen:
                seen.add(site.where)
                out.append(site.where)
        return out

    def headline(self) -> str:
        if not self.sites:
            return "checkify: no error"
        if not self.mapped:
            return f"checkify error: {self.sites[0].message}"
        total = 1
        for n in self.shape:
            total *= n
        return f"checkify errors at {len(self.sites)} of {total} mapped indices"

    def source(self, frame: SourceFrame) -> tuple[int, list[str]]:
        """The first line number and the lines of ``frame``'s source around its line."""
        return _source(frame)

    def callers(self) -> tuple[SourceFrame, ...]:
        """The frames that called the first error's frame, innermost first."""
        return tuple(self.sites[0].frames[1:]) if self.sites else ()

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


CheckifyView.register_drawing(
    plain=lambda view: checkify_view.render_plain(view, index_label),
    rich=checkify_view.render_rich,
    html=lambda view: checkify_view.render_html(view, index_label),
)


def view_of(obj: Any) -> CheckifyView | None:
    """The view of a checkify ``Error`` (what ``jaxdbg.show`` draws), None for anything else."""
    return CheckifyView.of(obj) if isinstance(obj, jax_checkify.Error) else None
