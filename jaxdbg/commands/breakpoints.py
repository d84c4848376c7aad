"""Session commands for many stops: ``continue all``, ``disable``, ``enable``, ``ignore``,
``condition``, ``log``, ``breakpoints``.

They register in the public command table (:mod:`jaxdbg.engine.command_table`), as a
plugin's would, so every view (terminal, panel, Colab) has them, and ``continue``
gets its ``all`` sub-word there; the state they change lives in
:mod:`jaxdbg.engine.breakpoint_state`.
"""

from __future__ import annotations

import ast

from jaxdbg.engine import breakpoint_checks, breakpoint_state
from jaxdbg.engine.command_table import ArgumentKind, add_sub_word, command, error
from jaxdbg.engine.outputs import Output, OutputKind, Resume
from jaxdbg.engine.session import Session

_NO_NUMBER = "this stop does not come from a numbered breakpoint"


def _current_number(s: Session) -> int | None:
    number = s.info.breakpoint_id
    return number if number is not None and breakpoint_state.exists(number) else None


def _numbers(s: Session, arg: str, command: str) -> list[int] | Output:
    """The breakpoint numbers in ``arg``, or the current stop's; an error Output otherwise."""
    if not arg:
        current = _current_number(s)
        return error(f"{_NO_NUMBER}; give a number ({command} N)") if current is None else [current]
    try:
        numbers = list(dict.fromkeys(int(word) for word in arg.split()))  # each once
    except ValueError:
        return error(f"{command} takes breakpoint numbers, not {arg!r}")
    for n in numbers:
        if not breakpoint_state.exists(n):
            return error(_unknown(n))
    return numbers


def _unknown(number: int) -> str:
    known = ", ".join(str(r.number) for r in breakpoint_state.rows()) or "none yet"
    return f"no breakpoint {number} (known: {known}); 'breakpoints' lists them"


def _row(number: int) -> breakpoint_state.BreakpointRow:
    return next(r for r in breakpoint_state.rows() if r.number == number)


def continue_all(s: Session, arg: str) -> Output:
    number = _current_number(s)
    if number is None:
        return error(f"{_NO_NUMBER}; use continue")
    run = breakpoint_state.continue_all(number)
    s.end(Resume.CONTINUE_ALL)
    return Output(
        OutputKind.RESUME,
        f"Continuing past every remaining stop of breakpoint {number} in {run.description}.",
        resume=Resume.CONTINUE_ALL,
    )


add_sub_word(
    "continue",
    "all",
    run=continue_all,
    summary="Continue past every remaining stop of this breakpoint in this run (cell); also 'ca'.",
)


@command("ca", usage="ca", summary="Same as 'continue all'.")
def _ca(s: Session, arg: str) -> Output:
    return continue_all(s, arg)


@command(
    "disable",
    usage="disable [N ...]",
    summary="Stop opening breakpoint N (default: this one) for the rest of the session.",
    argument=ArgumentKind.BREAKPOINT_NUMBERS,
)
def _disable(s: Session, arg: str) -> Output:
    numbers = _numbers(s, arg, "disable")
    if isinstance(numbers, Output):
        return numbers
    for n in numbers:
        breakpoint_state.set_enabled(n, False)
    return Output(
        OutputKind.TEXT,
        "\n".join(f"Disabled breakpoint {n} at {_row(n).location}; 'enable {n}' turns it back on." for n in numbers),
    )


@command(
    "enable",
    usage="enable [N ...]",
    summary="Open breakpoint N (default: this one) again.",
    argument=ArgumentKind.BREAKPOINT_NUMBERS,
)
def _enable(s: Session, arg: str) -> Output:
    numbers = _numbers(s, arg, "enable")
    if isinstance(numbers, Output):
        return numbers
    for n in numbers:
        breakpoint_state.set_enabled(n, True)
    return Output(OutputKind.TEXT, "\n".join(f"Enabled breakpoint {n} at {_row(n).location}." for n in numbers))


@command(
    "ignore",
    usage="ignore [N] COUNT",
    summary="Pass the next COUNT hits of breakpoint N (default: this one); 0 stops again.",
    argument=ArgumentKind.BREAKPOINT_AND_COUNT,
)
def _ignore(s: Session, arg: str) -> Output:
    words = arg.split()
    usage = "ignore takes [N] COUNT: a breakpoint number (default: this one) and a count >= 0"
    if len(words) not in (1, 2):
        return error(usage)
    try:
        values = [int(w) for w in words]
    except ValueError:
        return error(f"{usage}, not {arg!r}")
    count = values[-1]
    if count < 0:
        return error(usage)
    numbers = _numbers(s, words[0] if len(words) == 2 else "", "ignore")
    if isinstance(numbers, Output):
        return numbers
    number = numbers[0]
    breakpoint_state.set_ignore(number, count)
    if count == 0:
        return Output(OutputKind.TEXT, f"Will stop next time breakpoint {number} is reached.")
    hits = "hit" if count == 1 else f"{count} hits"
    return Output(OutputKind.TEXT, f"Will ignore the next {hits} of breakpoint {number}.")


def _number_and_rest(s: Session, arg: str, command: str) -> tuple[int, str] | Output:
    """``N REST`` as (N, REST); N must be a known breakpoint."""
    word, _, rest = arg.strip().partition(" ")
    if not word:
        return error(f"{command} takes a breakpoint number first ('breakpoints' lists them)")
    try:
        number = int(word)
    except ValueError:
        return error(f"{command} takes a breakpoint number first, not {word!r}")
    if not breakpoint_state.exists(number):
        return error(_unknown(number))
    return number, rest.strip()


@command(
    "condition",
    usage="condition N [expr]",
    summary="Stop at breakpoint N only where expr, evaluated in its frame, is true; without expr: always stop.",
    argument=ArgumentKind.BREAKPOINT_NUMBERS,
)
def _condition(s: Session, arg: str) -> Output:
    parsed = _number_and_rest(s, arg, "condition")
    if isinstance(parsed, Output):
        return parsed
    number, expression = parsed
    if expression:
        try:
            compile(expression, "<condition>", "eval")
        except SyntaxError as e:
            return error(f"the condition does not parse: SyntaxError: {e.msg}")
    breakpoint_state.set_condition(number, expression)
    breakpoint_checks.forget_reports(number)
    if not expression:
        return Output(OutputKind.TEXT, f"Breakpoint {number} is now unconditional.")
    return Output(OutputKind.TEXT, f"New condition set for breakpoint {number}: {expression}")


def _template(text: str) -> str:
    """A template typed with quotes (``"step {i}"``) is that string; else the text as typed."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


@command(
    "log",
    usage="log N [template]",
    summary="Make breakpoint N a logpoint: it never stops and writes template, its {fields} "
    "formatted in its frame ('step {i}: loss={loss:.4f}'), to the print log; "
    "without template: stop again.",
    argument=ArgumentKind.BREAKPOINT_NUMBERS,
)
def _log(s: Session, arg: str) -> Output:
    parsed = _number_and_rest(s, arg, "log")
    if isinstance(parsed, Output):
        return parsed
    number, text = parsed
    template = _template(text) if text else ""
    if template:
        try:
            breakpoint_checks.check_template(template)
        except SyntaxError as e:
            return error(f"the template does not parse: SyntaxError: {e.msg}")
    breakpoint_state.set_log_template(number, template)
    breakpoint_checks.forget_reports(number)
    if not template:
        return Output(OutputKind.TEXT, f"Breakpoint {number} stops again (no log template).")
    condition, _ = breakpoint_state.checks(number)
    # A condition set before still chooses the stops: a logpoint writes only at those.
    where = f" where {condition} holds (its condition; 'condition {number}' clears it)" if condition else ""
    return Output(
        OutputKind.TEXT,
        f"Breakpoint {number} is a logpoint now: it writes "
        f"{template!r}{where} and does not stop; 'log {number}' makes it stop again.",
    )


@command(
    "breakpoints",
    usage="breakpoints",
    summary="List breakpoints: number, location, hits, enabled and ignore state, condition, log.",
)
def _breakpoints(s: Session, arg: str) -> Output:
    rows = breakpoint_state.rows()
    if not rows:
        return Output(OutputKind.BREAKPOINTS, "(no breakpoints yet)", rows)
    current = _current_number(s)
    lines = [f"  {'Num':<4} {'Enabled':<8} {'Hits':>6} {'Ignore':>6}  Where"]
    for r in rows:
        note = "  (continuing past its stops in this run)" if r.continuing else ""
        lines.append(
            f"{'>' if r.number == current else ' '} {r.number:<4} "
            f"{'yes' if r.enabled else 'no':<8} {r.hits:>6} {r.ignore:>6}  "
            f"{r.location} in {r.function}{note}"
        )
        if r.condition:
            lines.append(f"        {'log' if r.log_template else 'stop'} only if {r.condition}")
        if r.log_template:
            lines.append(f"        log {r.log_template!r} (never stops)")
    return Output(OutputKind.BREAKPOINTS, "\n".join(lines), rows)
