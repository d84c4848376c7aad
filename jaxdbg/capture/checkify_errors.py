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
from markupsafe import Markup

from jaxdbg.capture import frames as frames_mod
from jaxdbg.capture import jax_routes
from jaxdbg.internals import jax_api
from jaxdbg.views import theme

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
            raise ValueError(f"unknown checkify error set {name!r}; choose from "
                             + ", ".join(CATEGORIES) + " (several joined with commas)")
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
    for filename, lineno, function in jax_api.traceback_frames(traceback_info):
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
        return [ErrorSite(str(e), tuple(int(i) for i in index), user_frames(e.traceback_info))
                for index, e in sorted(mapping.items())]
    return [ErrorSite(str(exc), None, user_frames(getattr(exc, "traceback_info", None)))]


def mapped_shape(err: Any) -> tuple[int, ...]:
    """The batch shape of a mapped error (``()`` when it is not mapped)."""
    import numpy as np

    for pred in jax_api.checkify_error_predicates(err):
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
        return cls(*jax_api.checkify_error_fields(err))

    def get(self) -> str | None:
        sites = error_sites(self)
        if not sites:
            return None
        if sites[0].index is None:
            return sites[0].describe()
        return "\n".join(f"at mapped index {_index_label(s.index)}: {s.describe()}"
                         for s in sites)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    def _repr_html_(self) -> str:
        return CheckifyView.of(self)._repr_html_()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(CheckifyView.of(self)))


def checkify(f: Callable[..., Any], errors: frozenset = jax_checkify.user_checks
             ) -> Callable[..., tuple[LocatedError, Any]]:
    """``jax.experimental.checkify.checkify`` whose error knows where each failure happened.

    ``errors`` also accepts a name: ``"user"``, ``"index"``, ``"float"``, ``"nan"``,
    ``"div"`` or ``"all"`` (several joined with commas).
    """
    if isinstance(errors, str):
        errors = parse_errors(errors)
    # Its own error set: checkify interpretations (and so locations) are not shared
    # with another checkified function's.
    checked = jax_routes.CHECKIFY.original()(f, errors=jax_api.errors_interpreted_apart(errors))

    def run(*args: Any, **kwargs: Any) -> tuple[LocatedError, Any]:
        with jax_api.checkify_errors_at_user_frames(user_frames, is_user_file):
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
    return first, [line.rstrip("\n") for line in lines[first - 1:last]]


def _index_label(index: tuple[int, ...] | None) -> str:
    return "" if index is None else ", ".join(map(str, index))  # None: an unmapped error


@dataclasses.dataclass
class CheckifyView:
    """What :func:`show` draws for one checkify ``Error``."""

    sites: list[ErrorSite]
    shape: tuple[int, ...] = ()

    @classmethod
    def of(cls, err: Any) -> "CheckifyView":
        return cls(error_sites(err), mapped_shape(err))

    @property
    def mapped(self) -> bool:
        return bool(self.shape)

    def _distinct_frames(self) -> list[SourceFrame]:
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

    # -- text ----------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [self.headline()]
        if self.mapped and self.sites:
            width = max(len("index"), *(len(_index_label(s.index)) for s in self.sites))
            lines.append(f"  {'index'.ljust(width)}  error  (where)")
            for s in self.sites:
                where = f"  ({s.where.location} in {s.where.function})" if s.where else ""
                lines.append(f"  {_index_label(s.index).ljust(width)}  {s.message}{where}")
        for frame in self._distinct_frames():
            lines.append(f"at {frame.location} in {frame.function}")
            first, source = _source(frame)
            for n, text in enumerate(source, start=first):
                lines.append(f"{'->' if n == frame.lineno else '  '} {n:>4} | {text}")
        callers = self.sites[0].frames[1:] if self.sites else ()
        for frame in callers:
            lines.append(f"called from {frame.location} in {frame.function}")
        if self.sites and not self.sites[0].frames:
            lines.append("(JAX recorded no user frame for this error)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    # -- HTML ----------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        parts = [Markup('<div class="jaxdbg-checkify" style="{}">').format(_BOX),
                 Markup('<div style="{}"><b>{}</b></div>').format(
                     _ERROR if self.sites else "", self.headline())]
        if self.mapped and self.sites:
            rows = Markup("").join(
                Markup('<tr><td style="{td}">{i}</td><td style="{td}">{m}</td>'
                       '<td style="{td}{muted}">{w}</td></tr>').format(
                    td=_TD, muted=_MUTED, i=_index_label(s.index), m=s.message,
                    w=f"{s.where.location} in {s.where.function}" if s.where else "")
                for s in self.sites)
            parts.append(Markup('<table style="border-collapse:collapse;margin:4px 0">'
                                '<tr><th style="{td}">index</th><th style="{td}">error</th>'
                                '<th style="{td}">where</th></tr>{rows}</table>')
                         .format(td=_TD, rows=rows))
        for frame in self._distinct_frames():
            first, source = _source(frame)
            parts.append(Markup('<div style="margin-top:4px">at <b>{}</b> in <code>{}</code></div>')
                         .format(frame.location, frame.function))
            if source:
                parts.append(theme.highlighted_lines(source, first, frame.lineno))
        for frame in (self.sites[0].frames[1:] if self.sites else ()):
            parts.append(Markup('<div style="{}">called from {} in <code>{}</code></div>')
                         .format(_MUTED, frame.location, frame.function))
        parts.append(Markup("</div>"))
        return str(Markup("").join(parts))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(str(self))


_BOX = theme.BOX
_ERROR = theme.ERROR
_MUTED = theme.MUTED
_TD = "padding:0 10px 0 0;text-align:left;vertical-align:top;"


def view_of(obj: Any) -> CheckifyView | None:
    """The view of a checkify ``Error`` (what ``jaxdbg.show`` draws), None for anything else."""
    return CheckifyView.of(obj) if isinstance(obj, jax_checkify.Error) else None
