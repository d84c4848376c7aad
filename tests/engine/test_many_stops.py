"""Many stops: breakpoint numbers, hit counts, continue all, disable / enable, ignore, reset."""

import re
import sys

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, frames
from jaxdbg.engine.stop_info import StopInfo
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def _fresh_state():
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


def _banner_numbers(t: Transcript) -> list[tuple[int, int]]:
    return [tuple(map(int, re.search(r"breakpoint (\d+), hit (\d+)", s).groups())) for s in t.stops()]


def _stops(t: Transcript) -> tuple[int, list[int], int]:
    """(breakpoint number, hits counted from this test's first stop, hits before this test).

    Hit counts last for the process, and some call sites serve several tests.
    """
    seen = _banner_numbers(t)
    number, first = seen[0]
    assert all(n == number for n, _ in seen)
    return number, [hit - first + 1 for _, hit in seen], first - 1


def _row(number: int) -> breakpoint_state.BreakpointRow:
    return next(r for r in breakpoint_state.rows() if r.number == number)


def _scan_with_breakpoint(t: Transcript):
    def body(carry, x):
        jaxdbg.breakpoint(**t.options)
        return carry + x, x

    return jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])


def test_banner_counts_hits_of_a_numbered_breakpoint():
    t = Transcript("c", "c", "c")
    _scan_with_breakpoint(t)(jnp.arange(3.0))
    number, hits, before = _stops(t)
    assert hits == [1, 2, 3]
    assert f"(breakpoint {number}, hit {before + 2})" in t.stops()[1]
    assert _row(number).hits == before + 3 and _row(number).function == "body"


def test_a_retraced_function_keeps_its_number():
    t = Transcript("c", "c")

    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x + 1

    jax.jit(f)(1.0)
    jax.jit(f)(jnp.ones(3))  # a new trace of the same call site
    first, second = _banner_numbers(t)
    assert first[0] == second[0] and (first[1], second[1]) == (1, 2)


def test_continue_all_in_a_1000_step_scan_serves_no_more_stops():
    t = Transcript("ca")
    result = _scan_with_breakpoint(t)(jnp.arange(1000.0))
    assert float(result) == sum(range(1000))
    assert len(t.stops()) == 1  # a second stop would read end of input and quit
    number, _, before = _stops(t)
    answer = t.answers("ca")[0]
    assert answer.startswith(f"Continuing past every remaining stop of breakpoint {number} in ")
    assert _row(number).hits == before + 1000
    assert breakpoint_state.end_run() == [
        f"jaxdbg: continued past 999 more stops of breakpoint {number} in this script"
    ]


def _line_of(text: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line)


def test_continue_all_lasts_until_the_run_ends(capsys):
    t = Transcript("continue all", "c", "ca")
    f = _scan_with_breakpoint(t)
    f(jnp.arange(5.0))
    f(jnp.arange(5.0) + 1)  # a script is one run, as a cell is
    assert _stops(t)[1] == [1]
    assert t.answers("continue all")[0].endswith(" in this script.")
    number = _stops(t)[0]
    assert breakpoint_state.end_run() == [f"jaxdbg: continued past 9 more stops of breakpoint {number} in this script"]
    assert capsys.readouterr().out.endswith(f"continued past 9 more stops of breakpoint {number} in this script\n")
    f(jnp.arange(5.0))  # a new run stops again
    assert _stops(t)[1] == [1, 11, 12]


def test_continue_all_covers_a_loop_repeating_the_same_call():
    t = Transcript("ca")
    f = _scan_with_breakpoint(t)
    for _ in range(3):
        f(jnp.arange(4.0))  # one line, as a loop inside one notebook cell
    assert len(t.stops()) == 1
    number, _, before = _stops(t)
    assert _row(number).hits == before + 12
    assert breakpoint_state.end_run() == [f"jaxdbg: continued past 11 more stops of breakpoint {number} in this script"]


def test_continue_all_skips_the_rest_of_a_vmap_batch():
    t = Transcript("ca")

    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x * 2

    jax.jit(jax.vmap(f))(jnp.arange(6.0))
    assert len(t.stops()) == 1 and "batch 1/6" in t.stops()[0]


def test_ignore_10_then_continue_stops_at_hit_12():
    t = Transcript("ignore 10", "c", "p x", "ca")
    _scan_with_breakpoint(t)(jnp.arange(20.0))
    number, hits, _ = _stops(t)
    assert t.answers("ignore 10") == [f"Will ignore the next 10 hits of breakpoint {number}."]
    assert hits == [1, 12]
    assert t.answers("p x") == ["Array(11., dtype=float32)"]
    assert _row(number).ignore == 0


def test_ignore_with_a_number_and_zero_stops_again():
    # The number is known before the stop: the call site is registered once.
    number = breakpoint_state.register(__file__, _line_of("jaxdbg.breakpoint(**t.options)"), "body")
    t = Transcript("ignore 3", "breakpoints", "c", f"ignore {number} 2", f"ignore {number} 0", "c", "ca")
    _scan_with_breakpoint(t)(jnp.arange(10.0))
    assert _stops(t)[:2] == (number, [1, 5, 6])
    assert t.answers(f"ignore {number} 0") == [f"Will stop next time breakpoint {number} is reached."]
    listing = t.answers("breakpoints")[0].splitlines()
    assert listing[0].split() == ["Num", "Enabled", "Hits", "Ignore", "Where"]
    row = next(line for line in listing if line.startswith(">"))
    assert row.split()[1:5] == [str(number), "yes", str(_stops(t)[2] + 1), "3"]
    assert row.endswith(f"test_many_stops.py:{_line_of('jaxdbg.breakpoint(**t.options)')} in body")


def test_disable_stops_nothing_in_later_calls_and_enable_restores():
    t = Transcript("disable", "c", "c")  # the last "c" is for the stop after enable

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x + 1

    f(1.0)
    number, _, before = _stops(t)
    assert t.answers("disable")[0].startswith(f"Disabled breakpoint {number} at ")
    assert float(f(2.0)) == 3.0
    assert len(t.stops()) == 1 and _row(number).enabled is False and _row(number).hits == before + 1

    other = Transcript(f"enable {number}", "c")
    jaxdbg.breakpoint(**other.options)  # any stop can enable it again
    assert other.answers(f"enable {number}")[0].startswith(f"Enabled breakpoint {number}")
    f(3.0)
    assert _stops(t)[1] == [1, 2]


def test_reset_enables_every_breakpoint_and_clears_ignore_counts():
    t = Transcript("ignore 50", "disable", "c", "ca")
    f = _scan_with_breakpoint(t)
    f(jnp.arange(3.0))
    number = _stops(t)[0]
    assert (_row(number).enabled, _row(number).ignore) == (False, 50)
    jaxdbg.engine.breakpoint_state.reset()
    assert (_row(number).enabled, _row(number).ignore) == (True, 0)
    f(jnp.arange(3.0))
    assert _stops(t)[1] == [1, 2]


@pytest.mark.multidevice
def test_continue_all_under_pmap_serves_no_other_device():
    t = Transcript("ca")
    out = jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x * 2)[1])(jnp.arange(8.0))
    out.block_until_ready()
    assert len(t.stops()) == 1 and "device " in t.stops()[0]
    number, _, before = _stops(t)
    assert _row(number).hits == before + 8
    assert breakpoint_state.end_run() == [f"jaxdbg: continued past 7 more stops of breakpoint {number} in this script"]


@pytest.mark.multidevice
def test_disable_and_ignore_apply_to_devices_already_waiting():
    t = Transcript("disable", "c")
    jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    assert len(t.stops()) == 1

    t = Transcript("ignore 3", "c", "c", "c", "c", "c")
    jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    hits = _stops(t)[1]
    assert len(hits) == 8 - 3 and hits == sorted(hits)


def test_commands_explain_bad_input_and_the_session_goes_on():
    t = Transcript(
        "disable 999", "enable x", "ignore", "ignore 1 2 3", "ignore -1", "continue later", "breakpoints", "c"
    )
    _scan_with_breakpoint(t)(jnp.arange(1.0))
    assert t.answers("disable 999")[0].startswith("*** no breakpoint 999 (known: ")
    assert t.answers("enable x") == ["*** enable takes breakpoint numbers, not 'x'"]
    for line in ("ignore", "ignore 1 2 3", "ignore -1"):
        assert t.answers(line)[0].startswith("*** ignore takes [N] COUNT"), line
    assert t.answers("continue later") == ["*** continue takes no argument but 'all', not 'later'"]
    assert len(t.stops()) == 1


def test_a_stop_without_a_breakpoint_number_says_so():
    session = jaxdbg.Session([frames.live_frame(sys._getframe())], StopInfo())
    for line in ("ca", "continue all", "disable", "ignore 2"):
        out = session.execute(line)
        assert out.is_error and "does not come from a numbered breakpoint" in out.text, line
    assert not session.finished
    assert session.execute("breakpoints").kind is jaxdbg.OutputKind.BREAKPOINTS
    assert session.execute("continue").resume is jaxdbg.Resume.CONTINUE


def test_help_lists_the_many_stops_commands():
    session = jaxdbg.Session([frames.live_frame(sys._getframe())], StopInfo())
    text = session.execute("help").text
    for usage in ("continue [all]", "ca", "disable [N ...]", "enable [N ...]", "ignore [N] COUNT", "breakpoints"):
        assert usage in text, usage
