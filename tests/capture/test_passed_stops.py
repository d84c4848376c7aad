"""What a passed stop costs on the host: a disabled, ignored or continued-past breakpoint
sends none of its values there (its program asks first, without operands, at every step); the
passed stops are counted as hits."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.capture import breakpoints
from jaxdbg.engine import breakpoint_state, watches
from support import hlo_text
from support.hang_guard import Script
from support.host_bytes import HostBytes
from support.jax_setups import automatic_axes, devices_or_skip, explicit_axes
from support.transcript import Transcript


def _scan(t: Transcript):
    def step(c, x):
        c = c + x
        jaxdbg.breakpoint(**t.options)
        return c, None

    return jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])


SCAN_BREAKPOINT_LINE = _scan.__code__.co_firstlineno + 3  # _scan's jaxdbg.breakpoint()


def _row():
    """_scan's breakpoint (other tests here have a ``step`` too, in any order)."""
    return next(
        row for row in breakpoint_state.rows() if (row.filename, row.lineno) == (__file__, SCAN_BREAKPOINT_LINE)
    )


def _arrivals():
    seen: list[int] = []
    return seen, breakpoints.observe_host_arrivals(lambda: seen.append(1))


def test_a_disabled_breakpoint_sends_nothing_to_the_host_and_stops_again_once_enabled():
    t = Transcript("disable", "c", "p c", "c")
    f = _scan(t)
    f(jnp.arange(3.0))  # the first stop disables it; the next two steps are passed
    number = _row().number
    hits = _row().hits
    seen, undo = _arrivals()
    try:
        assert float(f(jnp.arange(100.0))) == sum(range(100))
        assert seen == []  # no host callback with the values ran at all
        assert _row().hits == hits  # disabled stops are not hits
        breakpoint_state.set_enabled(number, True)
        f(jnp.arange(1.0) + 7)  # enabled again: it stops, with its values
    finally:
        undo()
        breakpoint_state.reset()
    assert len(t.stops()) == 2 and seen == [1]
    assert t.answers("p c") == ["Array(7., dtype=float32)"]


def test_ignored_and_continued_past_stops_do_not_arrive_and_both_count():
    t = Transcript("ignore 50", "c", "p c", "c")
    f = _scan(t)
    seen, undo = _arrivals()
    # hits last the process: another test may have hit it already
    before = (
        _row().hits
        if any((r.filename, r.lineno) == (__file__, SCAN_BREAKPOINT_LINE) for r in breakpoint_state.rows())
        else 0
    )
    try:
        f(jnp.arange(52.0))  # the first stop, 50 ignored hits, then a stop again
        assert len(seen) == 2 and len(t.stops()) == 2
        assert t.answers("p c") == ["Array(1326., dtype=float32)"]  # 0 + 1 + ... + 51: step 51's
        assert _row().hits - before == 52
        seen.clear()
        breakpoint_state.continue_all(_row().number)
        f(jnp.arange(20.0))
        assert seen == [] and len(t.stops()) == 2  # passed without their values
        assert _row().hits - before == 72
    finally:
        undo()
        breakpoint_state.reset()


STEPS = 100
LOCAL = (512, 512)  # float32: 1 MB
PER_PASSED_STOP = 64  # bytes a passed stop may send: the host's question, not the values


@pytest.mark.parametrize("passed_by", ["continue all", "disable", f"ignore {10 * STEPS}"])
def test_a_passed_stop_sends_a_few_bytes_whatever_the_size_of_its_locals(monkeypatch, passed_by):
    host = HostBytes(monkeypatch)
    t = Transcript(passed_by, "c")

    def step(c, x):
        big = jnp.full(LOCAL, x) + c
        jaxdbg.breakpoint(**t.options)
        return c + big[0, 0], None

    f = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    try:
        jax.block_until_ready(f(jnp.arange(float(STEPS))))
        assert len(t.stops()) == 1
        opened = host.total  # the first stop, with its values
        assert opened >= 4 * LOCAL[0] * LOCAL[1]
        host.total = 0
        jax.block_until_ready(f(jnp.arange(float(STEPS))))  # every stop passed (the same run in a script)
        assert len(t.stops()) == 1
        assert host.total <= STEPS * PER_PASSED_STOP, host.total
    finally:
        breakpoint_state.reset()


RELEASE_SCRIPT = """
import gc, io
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
gc.disable()  # only explicit collections from here on
shell.run_cell('''
import io, jax, jax.numpy as jnp, jaxdbg
@jax.jit
def f(x):
    big = x * 2
    jaxdbg.breakpoint(backend="cli", stdin=io.StringIO("c\\\\n"), stdout=io.StringIO())
    return big
''')
shell.run_cell("jax.jit(lambda x: x + 1)(1.0)")
print("without a stop", len(collections), flush=True)
shell.run_cell("f(jnp.ones(3)).block_until_ready()")
print("after a stop", len(collections), flush=True)
"""


def test_a_cell_in_which_a_stop_opened_collects_when_it_ends():
    # JAX frees a callback's operands (a stop's host copies of a big local) from a queue
    # its gc callback empties; an idle kernel would otherwise keep them.
    with Script(RELEASE_SCRIPT) as run:
        code = run.wait(120)
        out = run.output
    assert code == 0, out
    assert "without a stop 0" in out, out
    after = int(out.split("after a stop ")[1].split()[0])
    assert after >= 1, out


def test_enable_typed_at_another_breakpoints_stop_holds_from_the_next_step():
    # The program asks "does this stop open?" at every step, so an `enable` typed at a
    # stop of another breakpoint in the same call is seen at its next stop, not the next call.
    t = Transcript()

    def step(carry, x):
        carry = carry * 0.5 + x
        jaxdbg.breakpoint(**t.options)  # disabled before the call
        jaxdbg.breakpoint_if(x == 3.0, **t.options)
        return carry, None

    first_line = step.__code__.co_firstlineno + 2
    _run_with_one_disabled(t, step, first_line, 10, "p x\nenable {n}\nc\np x\ncontinue all\n")
    # The conditional one stops at step 3; the first one, enabled there, at its next stop:
    # step 4 (its question at step 3 was asked before the stop it was enabled at).
    # Before, it stopped at the next call only.
    assert t.answers("p x") == ["Array(3., dtype=float32)", "Array(4., dtype=float32)"], t.text
    assert [stop.split(" (")[0] for stop in t.stops()] == [
        f"Stopped at {__file__}:{first_line + 1} in step",
        f"Stopped at {__file__}:{first_line} in step",
    ]


@pytest.mark.parametrize("conditional", [False, True])
def test_enable_typed_at_a_stop_holds_at_a_later_stop_of_the_same_step(conditional):
    # Two stops in a step, the second disabled: `enable` typed at the first's stop holds at
    # the second's in the same step. XLA may run the host calls of a step's two stops at
    # once or in either order; the second's question waits for the first stop to close.
    t = Transcript()

    def step(carry, x):
        carry = carry * 0.5 + x
        jaxdbg.breakpoint(**t.options)
        if conditional:
            jaxdbg.breakpoint_if(x >= 0.0, **t.options)  # disabled before the call
        else:
            jaxdbg.breakpoint(**t.options)  # disabled before the call
        return carry, None

    second_line = step.__code__.co_firstlineno + (4 if conditional else 6)
    answers = "c\nc\np x\nenable {n}\nc\np x\nc\ncontinue all\ncontinue all\n"
    _run_with_one_disabled(t, step, second_line, 6, answers)
    assert t.answers("p x") == ["Array(2., dtype=float32)", "Array(2., dtype=float32)"], t.text
    assert t.stops()[3].startswith(f"Stopped at {__file__}:{second_line} in step"), t.text


def _run_with_one_disabled(t: Transcript, step, line: int, steps: int, answers: str) -> None:
    """Scan ``step`` over ``steps`` steps with the breakpoint at ``line`` disabled before
    the call, answering its stops with ``answers`` (``{n}``: that breakpoint's number)."""
    f = jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(8), xs)[0])
    xs = jnp.arange(float(steps))
    try:
        f.lower(xs)  # traced: the breakpoints have their numbers
        number = next(row.number for row in breakpoint_state.rows() if (row.filename, row.lineno) == (__file__, line))
        breakpoint_state.set_enabled(number, False)
        t.stdin.write(answers.format(n=number))
        t.stdin.seek(0)
        jax.block_until_ready(f(xs))
    finally:
        breakpoint_state.reset()


@pytest.mark.parametrize("form", ["plain", "token", "nested vmap"])
def test_an_untriggered_breakpoint_if_under_vmap_makes_no_host_call(monkeypatch, form):
    # Under vmap the predicate is batched, and JAX makes a lax.cond on it a select that
    # runs both branches: the stop asked the host at every step, with every element's
    # predicate false (3x the step time of a small scan). It asks only at a step where
    # some element's predicate holds.
    host = HostBytes(monkeypatch)
    t = Transcript("p x", "c")

    def step(c, x):
        big = jnp.full(LOCAL, x)
        if form == "token":
            c = jaxdbg.breakpoint_if(x > 100.0, token=c, **t.options)
        else:
            jaxdbg.breakpoint_if(x > 100.0, **t.options)
        return c + big[0, 0], None

    scan = jax.vmap(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    f = jax.jit(jax.vmap(scan) if form == "nested vmap" else scan)
    shape = (2, 3, STEPS) if form == "nested vmap" else (3, STEPS)
    try:
        jax.block_until_ready(f(jnp.zeros(shape)))
        assert host.calls == 0 and host.total == 0 and t.stops() == []
        one = (1, 2, 7) if form == "nested vmap" else (2, 7)  # one element, one step
        out = f(jnp.zeros(shape).at[one].set(1000.0))
        assert float(out[one[:-1]]) == 1000.0 and float(out.sum()) == 1000.0
        assert len(t.stops()) == 1 and t.answers("p x") == ["Array(1000., dtype=float32)"], t.text
        batch = "batch 2/2, 3/3" if form == "nested vmap" else "batch 3/3"
        assert batch in t.stops()[0], t.text
        assert host.calls <= 4, host.calls  # at that step only: the question, the values, the stop
    finally:
        breakpoint_state.reset()


def test_under_vmap_an_untriggered_breakpoint_if_reduces_its_elementwise_test_once():
    # Under vmap the stop sends each element's predicate (the mask) and branches on
    # whether any element's holds. XLA folded that "any" and the user's reduction into
    # one reduction of the element-wise test, so it reduced the test twice at every step.
    batch, width = 4, 128
    weights = jnp.eye(width) * 0.5

    def step(hidden, x):
        hidden = jnp.tanh(weights @ hidden + x)
        jaxdbg.breakpoint_if(jnp.any(jnp.isnan(hidden)))
        return hidden, None

    program = jax.jit(jax.vmap(lambda xs: jax.lax.scan(step, jnp.zeros(width), xs)[0]))
    try:
        compiled = program.lower(jnp.ones((batch, 16))).compile().as_text()
    finally:
        breakpoint_state.reset()
    test = f"pred[{batch},{width}]"
    assert len(hlo_text.parse(compiled).readers_of(test)) == 1, compiled


def test_a_stop_in_a_loop_has_xla_copy_no_carry_the_loop_alone_does_not():
    # A training loop carries its parameters through a scan. The question "does this stop
    # open?" is asked at every step; a predicate that read one element of the step's
    # locals had XLA keep the old carry alive beside the new one: a copy of the whole
    # carry at every step (10 ms per step for 16 MB here), passed stop or not. (A stop
    # that holds the old and the new carry both still has one copy: it may need both.)
    shape = (256, 256)

    def program(stop):
        def step(carry, x):
            carry = carry * 0.5 + x
            stop()
            return carry, None

        return jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(shape), xs)[0])

    xs = jnp.arange(4.0)
    without = program(lambda: None).lower(xs).compile().as_text()
    with_stop = program(jaxdbg.breakpoint).lower(xs).compile().as_text()
    programs = [hlo_text.parse(text) for text in (without, with_stop)]
    assert any(i.opcode == "while" for i in programs[1].instructions())
    carry = f"f32[{shape[0]},{shape[1]}]"
    copies = [[i for i in p.instructions() if i.opcode == "copy" and i.shape == carry] for p in programs]
    assert len(copies[1]) == len(copies[0]), with_stop


def test_a_big_intermediate_deleted_before_the_stop_is_not_computed_for_it():
    # docs/many-stops.md: a value only the stop reads is computed for it at every step;
    # ``del`` it before the breakpoint and XLA computes only what the program reads.
    def program(drop: bool):
        def step(c, x):
            big = jnp.full((384, 384), x) + c
            first = big[0, 0]
            if drop:
                del big
            jaxdbg.breakpoint()
            return c + first, None

        return jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])

    try:
        kept, deleted = (program(drop).lower(jnp.arange(4.0)).compile().as_text() for drop in (False, True))
    finally:
        breakpoint_state.reset()
    assert "f32[384,384]" in kept and "f32[384,384]" not in deleted, deleted


@pytest.mark.parametrize("locals_sent", ["one group", "several groups", "statistics"])
def test_a_stops_conds_branch_on_the_hosts_answer_with_no_kernel_made_for_it(monkeypatch, locals_sent):
    # Each lax.cond of a stop (the screening's, the opening one) branched on a test of the
    # host's answer, a kernel XLA compiled at every stop: a few ms each of a 10-frame
    # stop's 0.3 s trace and compile. They branch on the answer itself.
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())
    shape = (512, 512) if locals_sent == "statistics" else (64, 64)  # a statistics form's least; a group's own

    def step(c, x):
        big = jnp.full(shape, x) + c
        other = jnp.full(shape, x) * c
        if locals_sent == "one group":
            del other
        jaxdbg.breakpoint()
        return c + x + 0.0 * big[0, 0], None

    program = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    xs = jnp.arange(4.0)
    if locals_sent == "statistics":
        program.lower(xs)
        number = max(row.number for row in breakpoint_state.rows() if row.filename == __file__)
        watches.LIVE.add(number, "other")  # a watch set before its trace: a statistics form
        program = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    try:
        indices = hlo_text.parse(program.lower(xs).compile().as_text()).conditional_indices()
    finally:
        breakpoint_state.reset()
    # The screening's cond (one group's own send) and the opening one; with several
    # groups, a cond for each, which tests the state's bit for it.
    groups = len(indices) - 2
    assert groups == 0 if locals_sent == "one group" else groups >= 2, indices
    assert indices.count("fusion") == (0 if locals_sent == "one group" else groups), indices


@pytest.mark.parametrize("axes", ["automatic", "explicit"])
@pytest.mark.parametrize("flavour", ["breakpoint", "breakpoint_if", "token"])
def test_a_stop_in_a_sharded_jit_gathers_its_sharded_locals_only_to_send_them(axes, flavour):
    # Inside a sharded jit a stop's values are gathered onto one device for the host.
    # Gathered ahead of the question, a passed stop (or an untriggered breakpoint_if)
    # all-gathered every sharded local at every step: 60x the step's time here.
    devices_or_skip(8)
    mesh = jax.make_mesh((8,), ("d",), **(explicit_axes(1) if axes == "explicit" else automatic_axes(1)))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    t = Transcript("p big.shape", "p float(big[-1, 0])", "continue all")

    def step(carry, x):
        big = carry * 0.5 + x
        if flavour == "breakpoint":
            jaxdbg.breakpoint(**t.options)
        elif flavour == "token":  # the stop ordered by the value it passes on
            big = jaxdbg.breakpoint(token=big, **t.options)
        else:
            jaxdbg.breakpoint_if(x >= 2, **t.options)
        return big, None

    f = jax.jit(lambda c, xs: jax.lax.scan(step, c, xs)[0])
    carry = jax.device_put(jnp.ones((64, 16)), sharding)
    xs = jnp.arange(4.0)
    program = hlo_text.parse(f.lower(carry, xs).compile().as_text())
    assert any(i.opcode == "all-gather" for i in program.instructions())  # in the branch that sends
    assert [i.line for i in program.always_run() if i.opcode == "all-gather"] == []
    try:
        jax.block_until_ready(f(carry, xs))
    finally:
        breakpoint_state.reset()
    assert len(t.stops()) == 1  # its values still arrive whole where it opens
    expected = 2.625 if flavour == "breakpoint_if" else 0.5  # big at step 2 (x >= 2), or at step 0
    assert t.answers("p big.shape") == ["(64, 16)"]
    assert t.answers("p float(big[-1, 0])") == [repr(float(expected))]
