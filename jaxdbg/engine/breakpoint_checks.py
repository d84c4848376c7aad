"""What the host decides before a stop opens: conditions, logpoints, watches of passed stops.

A stop of a breakpoint that has a condition, a log template or watches has its innermost
frame built first (the values reach the host anyway), then :func:`screen` decides, in
pdb's order:

1. a disabled breakpoint opens nothing (its watches still take their values);
2. a condition (``condition N EXPR``) evaluated in the innermost frame: false passes the
   stop, counted as a hit (as pdb counts hits) without using up an ignore count;
3. a logpoint (``log N TEMPLATE``) writes its line to the print log and passes;
4. then the ignore count and ``continue all`` (:mod:`jaxdbg.engine.breakpoint_state`).

A condition or template that raises is reported once per breakpoint and counts as
false (the stop passes); it never ends the computation. A breakpoint with none of the
three never gets here (:func:`active` is one set and one dict lookup).
"""

from __future__ import annotations

import ast
import functools
import threading
from typing import Any, Callable

from jaxdbg.engine import breakpoint_state, evaluation, watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.runtime import notices
from jaxdbg.runtime.guarded_calls import format_exception, guarded

#: How a logpoint's line reaches the print log: ``write(text, frame, info)``; handed down
#: by the capture layer, which owns the print log's rows.
LogWriter = Callable[[str, Frame, StopInfo], None]

# Names that read a frame's namespace as a whole: an expression using one needs every local.
_WHOLE_NAMESPACE = frozenset({"locals", "vars", "eval", "exec", "dir", "globals"})

_reported: set[tuple[int, str]] = set()  # (breakpoint, what failed) already said
_lock = threading.Lock()


def active(number: int | None) -> bool:
    """Whether stops of ``number`` need :func:`screen` (their frames built first)."""
    return breakpoint_state.has_checks(number) or watches.LIVE.has_watches(number)


def names_read(number: int) -> frozenset[str] | None:
    """The names breakpoint ``number``'s condition, log template and watches read: a
    stop being screened has only these locals sent to the host (None: every local).
    The same object while those are unchanged (asked at every step a screened stop passes)."""
    version = checks_version()
    known = _names_read.get(number)
    if known is not None and known[0] == version:
        return known[1]
    names = names_in(tuple(_condition_and_template(number) + watches.LIVE.expressions(number)))
    _names_read[number] = (version, names)
    return names


_names_read: dict[int, tuple[tuple[int, int], frozenset[str] | None]] = {}  # number -> (versions, names)


def only_watched_names(number: int) -> list[str] | None:
    """Breakpoint ``number``'s watched names, where its only checks are watches and each
    is a name (``watch loss``); else None."""
    expressions = watches.LIVE.expressions(number)
    if any(breakpoint_state.checks(number)) or not all(e.isidentifier() for e in expressions):
        return None
    return expressions


def watched_whole(number: int) -> frozenset[str]:
    """The names breakpoint ``number``'s checks read only as a watch of the whole name
    (``watch grads``, and no condition, template or other watch reading ``grads``): of
    such a pytree or array a watch keeps only statistics, which the program may send
    instead of the values. The same object while the checks are unchanged."""
    version = checks_version()
    known = _watched_whole.get(number)
    if known is not None and known[0] == version:
        return known[1]
    expressions = watches.LIVE.expressions(number)
    others = _condition_and_template(number) + [e for e in expressions if not e.isidentifier()]
    read_otherwise = names_in(tuple(others))
    whole = frozenset() if read_otherwise is None else frozenset(e for e in expressions if e.isidentifier())
    whole = whole.difference(read_otherwise or ())
    _watched_whole[number] = (version, whole)
    return whole


_watched_whole: dict[int, tuple[tuple[int, int], frozenset[str]]] = {}  # number -> (versions, names)


def _condition_and_template(number: int) -> list[str]:
    """The Python sources of breakpoint ``number``'s condition and log template (those set)."""
    condition, template = breakpoint_state.checks(number)
    return ([condition] if condition else []) + ([template_code(template)] if template else [])


def checks_version() -> tuple[int, int]:
    """Changes whenever any breakpoint's condition, log template or watches do."""
    return breakpoint_state.checks_version(), watches.LIVE.version


@functools.lru_cache(maxsize=256)  # asked at every step a screened stop passes
def names_in(sources: tuple[str, ...]) -> frozenset[str] | None:
    """The names the Python expressions ``sources`` read; None when one reads the whole
    namespace (``locals()``, ``eval``), so every local is needed. A source that does not
    parse reads nothing (its check reports the error without values)."""
    names: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError:
            continue
        names.update(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return None if names & _WHOLE_NAMESPACE else frozenset(names)


def screen(
    number: int,
    innermost: Frame | Callable[[], Frame],
    info: StopInfo | Callable[[], StopInfo],
    write_log: LogWriter,
    numbers: Callable[[str], Any] | None = None,
) -> bool:
    """Decide a stop of breakpoint ``number`` with its innermost frame (all that a
    condition, a template or a watch reads; or what gives it, called at each need: it
    keeps what it built):
    True when it may open (then :func:`jaxdbg.engine.stop_serving.serve` takes its turn
    and records its watches); False when it was passed here, its watches recorded.

    ``info``: the stop's StopInfo, or what makes it (a logpoint's line needs it).
    ``numbers``: each name's value as a NumPy array, as a screening receives them
    (KeyError: not at hand); a condition or watch NumPy answers as JAX would is decided
    on them, with no JAX array and no frame made."""
    frame_of = innermost if callable(innermost) else lambda: innermost
    if not breakpoint_state.is_enabled(number):
        record_watches(number, None, frame_of, numbers)
        return False
    condition, template = breakpoint_state.checks(number)
    if condition and not holds(number, condition, frame_of, numbers):
        record_watches(number, breakpoint_state.count_hit(number), frame_of, numbers)
        return False
    if template:
        hit = breakpoint_state.count_hit(number)
        stop = info() if callable(info) else info
        stop.hit = hit
        write_log(format_template(number, template, frame_of()), frame_of(), stop)
        record_watches(number, hit, frame_of, numbers)
        return False
    opens, passed_hit = breakpoint_state.arrival(number)
    if not opens:
        record_watches(number, passed_hit, frame_of, numbers)
    return opens


def record_watches(
    number: int, hit: int | None, frame_of: Callable[[], Frame], numbers: Callable[[str], Any] | None
) -> None:
    """Keep breakpoint ``number``'s watches at a stop :func:`screen` passed, in the
    frame ``frame_of()`` builds or on ``numbers`` (see :func:`screen`)."""
    if numbers is None:
        watches.LIVE.record(number, hit, [frame_of()])
    elif not watches.LIVE.record_numbers(number, hit, numbers):
        watches.LIVE.record_with(number, hit, watches.on_numbers(numbers, frame_of))


def holds(
    number: int, condition: str, frame: Frame | Callable[[], Frame], numbers: Callable[[str], Any] | None = None
) -> bool:
    """Whether ``condition`` is true in ``frame`` (or the frame ``frame()`` builds); one
    that raises is false (said once). ``numbers``: the names' NumPy values, if at hand."""
    if numbers is None and isinstance(frame, Frame):
        numbers = evaluation.lookup_in(frame)  # its JAX arrays are read as NumPy arrays
    quick = None if numbers is None else _truth(evaluation.on_numpy_values(condition, numbers))
    if quick is not None:
        return quick
    if not isinstance(frame, Frame):
        frame = frame()
    try:
        value = evaluation.evaluate(condition, frame, {}, expression_only=True)
    except SyntaxError as e:
        _report_once(number, "condition", condition, f"SyntaxError: {e.msg}")
        return False
    except evaluation.EvaluationError as e:
        _report_once(number, "condition", condition, str(e))
        return False
    failure: list[BaseException] = []

    def failed(e: BaseException) -> bool:
        failure.append(e)
        return False

    truth = guarded(lambda: bool(value), failed)  # an array's __bool__ may raise
    if failure:
        _report_once(number, "condition", condition, format_exception(failure[0]))
    return truth


def _truth(value: Any) -> bool | None:
    """A NumPy evaluation's truth; None where it has none (not evaluated, or an array
    whose truth is ambiguous): JAX's evaluation then decides, and says what went wrong."""
    if value is evaluation.NOT_ON_NUMPY:
        return None
    try:
        return bool(value)
    except Exception:
        return None


def template_code(template: str) -> str:
    """``template`` as an f-string expression: ``{expr:spec}`` fields are Python in the frame."""
    return "f" + repr(template)


def check_template(template: str) -> None:
    """SyntaxError now for a template whose fields do not compile."""
    compile(template_code(template), "<log>", "eval")


def format_template(number: int, template: str, frame: Frame) -> str:
    """The logpoint's line: ``template`` formatted in ``frame``, or what went wrong."""
    try:
        text: Any = evaluation.evaluate(template_code(template), frame, {}, expression_only=True)
        return str(text)
    except (SyntaxError, evaluation.EvaluationError) as e:
        error = f"SyntaxError: {e.msg}" if isinstance(e, SyntaxError) else str(e)
        _report_once(number, "log template", template, error)
        return f"<log {number} failed: {error}>"


def _report_once(number: int, what: str, source: str, error: str) -> None:
    key = (number, f"{what}:{source}")
    with _lock:
        if key in _reported:
            return
        _reported.add(key)
    notices.notice(
        f"the {what} of breakpoint {number}, {source!r}, raised {error}; "
        f"{'its stops pass' if what == 'condition' else 'its lines say so'} "
        "(said once)"
    )


def forget_reports(number: int) -> None:
    """A new condition or template for ``number`` is reported afresh."""
    with _lock:
        for key in [k for k in _reported if k[0] == number]:
            _reported.discard(key)
