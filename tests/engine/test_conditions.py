"""condition N EXPR and log N TEMPLATE, set at the prompt and decided on the host."""

import re

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.capture import prints
from jaxdbg.engine import breakpoint_checks, breakpoint_state, evaluation
from jaxdbg.engine.frames import Frame
from support.checks_state import fresh_breakpoint_checks  # noqa: F401 (autouse)
from support.transcript import Transcript


def _scan(t: Transcript, steps: int):
    def body(carry, i):
        loss = carry * 0.5 + i
        jaxdbg.breakpoint(**t.options)
        return loss, loss

    return jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(float(steps)))[0])


def _steps(t: Transcript) -> list[int]:
    """The loop index of each stop, read from the 'p i' answers."""
    return [int(float(a.removeprefix("Array(").split(",")[0])) for a in t.answers("p i")]


def _number(t: Transcript) -> int:
    return int(re.search(r"breakpoint (\d+), hit", t.stops()[0]).group(1))


def test_a_condition_stops_only_where_it_is_true_and_clears():
    n = _breakpoint_number()
    t = Transcript(
        "p i", f"condition {n} i % 25 == 24", "c", "p i", "c", "p i", f"condition {n}", "c", "p i", "c", "p i", "ca"
    )
    _scan(t, 100)()
    assert _steps(t) == [0, 24, 49, 50, 51]
    assert "New condition set for breakpoint" in t.text
    assert t.answers(f"condition {n}")[0] == f"Breakpoint {n} is now unconditional."


def _breakpoint_number() -> int:
    """The number of the breakpoint in _scan's body (the same before and after it is traced)."""
    return breakpoint_state.register(*_site_of(None))


def _site_of(f):
    """The (file, line, function) of the breakpoint inside _scan's body."""
    import inspect

    lines, start = inspect.getsourcelines(_scan)
    offset = next(i for i, line in enumerate(lines) if "jaxdbg.breakpoint" in line)
    return __file__, start + offset, "body"


def test_hits_count_every_stop_as_pdb_and_ignore_waits_for_a_true_condition():
    t = Transcript("p i", "ca")
    f = _scan(t, 10)
    number = _breakpoint_number()
    breakpoint_state.set_condition(number, "i >= 5")
    breakpoint_state.set_ignore(number, 2)
    before = next(r.hits for r in breakpoint_state.rows() if r.number == number)
    f()
    assert _steps(t) == [7]  # 5 and 6 were ignored: the ignore count waits for a true condition
    assert next(r.hits for r in breakpoint_state.rows() if r.number == number) == before + 10


def test_a_raising_condition_is_reported_once_and_passes(capsys):
    t = Transcript()
    f = _scan(t, 20)
    number = _breakpoint_number()
    breakpoint_state.set_condition(number, "undefined_name > 1")
    result = f()
    assert float(result) > 0 and t.stops() == []
    out = capsys.readouterr().out
    assert out.count(f"the condition of breakpoint {number}, 'undefined_name > 1', raised NameError") == 1


def test_a_logpoint_writes_its_line_per_step_and_never_stops(capsys):
    t = Transcript()
    f = _scan(t, 5)
    number = _breakpoint_number()
    breakpoint_state.set_log_template(number, "step {i:.0f}: loss={loss:.4f}")
    rows = []
    with prints.sink_installed(rows.append):
        f()
    assert t.stops() == []
    assert [r.text for r in rows] == [
        "step 0: loss=0.5000",
        "step 1: loss=1.2500",
        "step 2: loss=2.6250",
        "step 3: loss=4.3125",
        "step 4: loss=6.1562",
    ]
    assert rows[0].site.function == "body" and rows[0].site.lineno == _site_of(f)[1]


def test_a_logpoint_made_at_a_conditional_stop_writes_where_the_condition_holds_and_says_so():
    n = _breakpoint_number()
    t = Transcript("p i", f"condition {n} i % 10 == 9", "c", "p i", f'log {n} "step {{i:.0f}}"', "breakpoints", "c")
    rows = []
    with prints.sink_installed(rows.append):
        _scan(t, 40)()
    assert _steps(t) == [0, 9]
    assert [r.text for r in rows] == ["step 19", "step 29", "step 39"]
    said = t.answers(f'log {n} "step {{i:.0f}}"')[0]
    assert f"where i % 10 == 9 holds (its condition; 'condition {n}' clears it)" in said, said
    listing = t.answers("breakpoints")[0]
    assert "log only if i % 10 == 9" in listing and "stop only if" not in listing, listing


def test_a_logpoint_without_a_print_log_writes_to_stdout_and_a_failing_one_says_once(capsys):
    f = _scan(Transcript(), 3)
    number = _breakpoint_number()
    breakpoint_state.set_log_template(number, "loss {loss:.2f} {missing}")
    f()
    out = capsys.readouterr().out
    assert out.count(f"<log {number} failed: NameError") == 3
    assert out.count(f"the log template of breakpoint {number}") == 1


def test_condition_and_log_commands_refuse_bad_input_and_show_in_breakpoints():
    t = Transcript(
        "condition",
        "condition x",
        "condition 99999 i",
        "condition {n} i >",
        "log {n} 'step {i'",
        "condition {n} i > 100",
        'log {n} "at {i}"',
        "breakpoints",
        "log {n}",
        "condition {n}",
        "c",
    )
    number = _breakpoint_number()
    t.stdin = type(t.stdin)(t.stdin.getvalue().replace("{n}", str(number)))
    jaxdbg.breakpoint(**t.options)  # an eager stop of another breakpoint, to type at
    assert "takes a breakpoint number first" in t.answers("condition")[0]
    assert "not 'x'" in t.answers("condition x")[0]
    assert "no breakpoint 99999" in t.answers("condition 99999 i")[0]
    assert "does not parse: SyntaxError" in t.answers(f"condition {number} i >")[0]
    assert "does not parse: SyntaxError" in t.answers(f"log {number} 'step {{i'")[0]
    listing = t.answers("breakpoints")[0]
    assert "log only if i > 100" in listing and "log 'at {i}' (never stops)" in listing
    row = next(r for r in breakpoint_state.rows() if r.number == number)
    assert row.condition == "" and row.log_template == ""  # cleared by the last two commands


def _frame(**values) -> Frame:
    return Frame("<cell>", 1, "step", dict(values), {"LIMIT": 3}, ["pass\n"], 1)


@pytest.mark.parametrize(
    "condition, values, expected",
    [
        ("i % 25 == 24", {"i": jnp.int32(49)}, True),
        ("x > 1e9", {"x": jnp.float32(0.5)}, False),
        ("x[2] >= LIMIT and not done", {"x": jnp.arange(4.0), "done": jnp.bool_(False)}, False),
        ("(x * 2 - 1)[-1] == 5", {"x": jnp.arange(4, dtype=jnp.int8)}, True),
        ("h > 1", {"h": jnp.float16(1.5)}, True),
    ],
)
def test_a_condition_of_comparisons_and_indexing_is_decided_on_numpy_copies(monkeypatch, condition, values, expected):
    # Evaluated at every step a loop passes its breakpoint: NumPy gives these the answer
    # JAX would, with no JAX dispatch on the host (each one tens of microseconds).
    def no_jax(*args, **kwargs):
        raise AssertionError("evaluated with JAX")

    monkeypatch.setattr(evaluation, "evaluate", no_jax)
    assert breakpoint_checks.holds(1, condition, _frame(**values)) is expected


@pytest.mark.parametrize(
    "condition, values, expected",
    [
        ("x[10] > 2", {"x": jnp.arange(4.0)}, True),  # JAX clamps the index; NumPy raises
        ("x.sum() > 5", {"x": jnp.arange(4.0)}, True),  # a call: JAX's own evaluation
        ("jnp.isnan(x).any()", {"x": jnp.array([1.0, jnp.nan])}, True),
        ("k == k", {"k": jax.random.key(0)}, True),  # a PRNG key has no NumPy dtype
    ],
)
def test_a_condition_numpy_cannot_answer_as_jax_would_is_evaluated_by_jax(condition, values, expected):
    frame = _frame(**values)
    frame.globals["jnp"] = jnp
    assert breakpoint_checks.holds(1, condition, frame) is expected
