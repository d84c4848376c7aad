"""Watches: values per hit across stops that open and stops that pass; errors said once."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.commands import watches as watch_commands
from jaxdbg.engine import breakpoint_checks, breakpoint_state, evaluation, watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.stop_info import StopInfo
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())  # each test's own watches
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


def _number(t: Transcript) -> int:
    return int(re.search(r"breakpoint (\d+), hit", t.stops()[0]).group(1))


def _scan(t: Transcript, steps: int):
    def body(carry, i):
        loss = carry * 0.5 + i
        grads = jnp.full((3,), i)  # noqa: F841 (a local to watch)
        jaxdbg.breakpoint(**t.options)
        return loss, loss

    return jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(float(steps)))[0])


def _expected_losses(steps: int) -> list[float]:
    out, carry = [], np.float32(1.0)
    for i in range(steps):
        carry = np.float32(carry * np.float32(0.5) + np.float32(i))
        out.append(float(carry))
    return out


def test_a_watch_keeps_one_value_per_hit_through_continue_all():
    t = Transcript("watch loss", "watch grads", "ca")
    _scan(t, 100)()
    number = _number(t)
    loss, grads = watches.LIVE.watches(number)
    assert [v.number for v in loss.values] == pytest.approx(_expected_losses(100))
    first_hit = loss.values[0].hit
    assert [v.hit for v in loss.values] == list(range(first_hit, first_hit + 100))
    # an array keeps its statistics per hit, not its values
    assert grads.values[-1].number is None and grads.values[-1].stats.max == 99.0
    assert grads.values[-1].shape == (3,) and len(grads.values) == 100


def test_watch_alone_lists_and_unwatch_removes_by_expression_or_number():
    t = Transcript(
        "watch loss", "watch loss * 2", "c", "watch", "unwatch 2", "unwatch loss", "watch", "unwatch nothing", "c"
    )
    _scan(t, 2)()
    listed = t.answers("watch")[0]
    assert "1: loss = 1.25  (hit" in listed and "2: loss * 2 = 2.5" in listed
    assert "▁█" in listed  # the scalar's history as a line
    assert t.answers("unwatch 2")[0].startswith("No longer watching 'loss * 2'.")
    assert "(no watches at breakpoint" in t.answers("watch")[1]
    assert "*** no watch 'nothing'" in t.answers("unwatch nothing")[0]


def test_a_raising_watch_is_reported_once_and_the_computation_goes_on(capsys):
    t = Transcript("watch loss[5]", "ca")
    result = _scan(t, 10)()
    assert float(result) == pytest.approx(_expected_losses(10)[-1])
    said = t.text + capsys.readouterr().out
    assert said.count("watch 'loss[5]' at breakpoint") == 1, said
    number = _number(t)
    (watch,) = [w for w in watches.LIVE.watches(number) if w.expression == "loss[5]"]
    assert len(watch.values) == 10 and all(v.error.startswith("IndexError") for v in watch.values)


def test_a_watch_of_a_disabled_breakpoint_still_fills_in():
    t = Transcript("watch loss", "disable", "c")
    f = _scan(t, 3)
    f()
    number = _number(t)
    (watch,) = watches.LIVE.watches(number)
    assert [v.hit for v in watch.values][1:] == [None, None]  # not hits: the breakpoint is off
    assert len(t.stops()) == 1
    # called again, already disabled: the program still brings the values to the host
    # (a disabled breakpoint without watches sends nothing), and nothing opens
    f()
    (watch,) = watches.LIVE.watches(number)
    assert len(watch.values) == 6 and [v.hit for v in watch.values][3:] == [None] * 3
    assert len(t.stops()) == 1


def test_watch_errors_clearly_outside_a_numbered_breakpoint():
    session = jaxdbg.Session([Frame("f.py", 1, "f", {"x": 1}, {}, ["x\n"], 1)], StopInfo())
    out = session.execute("watch x")
    assert out.is_error and "numbered breakpoint" in out.text
    assert session.execute("watch").is_error


def test_a_bad_watch_expression_is_refused_at_once():
    session = jaxdbg.Session([Frame("f.py", 1, "f", {"x": 1}, {}, ["x\n"], 1)], StopInfo(breakpoint_id=9999))
    session.watch_book = watches.WatchBook()
    assert session.execute("watch x +").text.startswith("*** SyntaxError")
    assert session.execute("watch x").kind.value == "watches"
    assert session.execute("watch x").text.startswith("*** 'x' is watched already")


def test_no_watch_no_condition_means_no_screening():
    assert not breakpoint_checks.active(424242)
    assert not breakpoint_checks.active(None)


def test_sparkline_marks_non_finite_values():
    assert watch_commands.sparkline([0.0, 1.0, float("nan")]) == "▁█·"
    assert watch_commands.sparkline([]) == ""


def test_watch_values_of_every_kind():
    assert watches.value_of(1, jnp.float32(2.5)).number == 2.5
    assert watches.value_of(1, jnp.ones((), jnp.bfloat16)).number == 1.0
    assert watches.value_of(1, True).number == 1.0
    assert watches.value_of(1, np.int32(7)).text == "7"
    arr = watches.value_of(2, jnp.array([1.0, np.nan]))
    assert arr.number is None and arr.stats.nan_count == 1
    assert watches.value_of(3, "text").text == "'text'"
    assert watches.value_of(3, jnp.complex64(1 + 2j)).number is None


def test_a_screened_stops_scalar_watches_read_the_numpy_values_as_jax_would_show_them():
    # A screening receives the locals it asked for as NumPy arrays: a watch that is a
    # number is taken from them (no JAX array made at each passed step), with the text
    # and number the JAX frame gives; anything else is taken in the JAX frame.
    jax_locals = {"x": jnp.float32(0.7071068), "i": jnp.int32(7), "v": jnp.arange(3.0), "flag": jnp.bool_(True)}
    numpy_locals = {name: np.asarray(value) for name, value in jax_locals.items()}
    jax_frame = Frame("<cell>", 1, "step", jax_locals, {}, ["pass\n"], 1)
    numbers = Frame("<cell>", 1, "step", numpy_locals, {}, ["pass\n"], 1)
    built = []

    def frame_of():
        built.append(1)
        return jax_frame

    scalars = ["x", "x * 2 > 1", "i % 4", "flag", "-x"]
    on_numbers = watches.on_numbers(evaluation.lookup_in(numbers), frame_of)
    assert on_numbers(scalars, 3) == watches.in_frame(jax_frame)(scalars, 3)
    assert built == []  # the JAX frame was never needed
    others = ["v", "v.sum()", "x.astype(jnp.float16)"]
    jax_frame.globals["jnp"] = jnp
    assert on_numbers(others, 3) == watches.in_frame(jax_frame)(others, 3)
    assert built  # taken in the JAX frame


def test_a_screened_stops_pytree_watch_reads_the_numpy_leaves_as_jax_would_show_them():
    # A 6-leaf parameter tree with a NaN: its line, global norm, per-leaf norms and NaN
    # counts are the same from the NumPy leaves a screening receives as from JAX arrays.
    tree = {"w": jnp.ones((3, 4)), "b": jnp.array([1.0, jnp.nan]), "inner": {"s": jnp.float32(2.5), "i": jnp.arange(3)}}
    jax_frame = Frame("<cell>", 1, "step", {"params": tree}, {}, ["pass\n"], 1)
    numbers = Frame("<cell>", 1, "step", {"params": jax.tree.map(np.asarray, tree)}, {}, ["pass\n"], 1)
    built = []
    (ours,) = watches.on_numbers(evaluation.lookup_in(numbers), lambda: built.append(1) or jax_frame)(["params"], 5)
    (theirs,) = watches.in_frame(jax_frame)(["params"], 5)
    assert built == []
    assert (ours.text, ours.number) == (theirs.text, theirs.number) and "NaN in ['b']" in ours.text
    assert ours.leaves.paths == theirs.leaves.paths
    for field in ("norms", "nans", "infs"):
        np.testing.assert_array_equal(getattr(ours.leaves, field), getattr(theirs.leaves, field))


def test_a_watch_keeps_its_latest_values_up_to_the_history_length():
    # A full history drops its oldest values in batches (one at a time moved the whole
    # list at every step), but a watch's values are always the latest HISTORY_LENGTH.
    watches.LIVE.add(7, "loss")
    total = watches.HISTORY_LENGTH + 1_500
    for hit in range(1, total + 1):
        watches.LIVE.record_with(7, hit, lambda expressions, hit: [watches.WatchValue(hit, str(hit), number=hit)])
    (watch,) = watches.LIVE.watches(7)
    assert len(watch.values) == watches.HISTORY_LENGTH
    assert [v.hit for v in watch.values[:2]] == [total - watches.HISTORY_LENGTH + 1, total - watches.HISTORY_LENGTH + 2]
    assert watch.values[-1].hit == total


def test_what_a_screening_sends_follows_the_checks_as_they_change():
    # names_read is kept between steps (asked at every one); a new condition, template
    # or watch must change it at once.
    number = breakpoint_state.register("<cell>", 1, "step")
    breakpoint_state.set_condition(number, "x > 1")
    assert breakpoint_checks.names_read(number) == {"x"}
    breakpoint_state.set_condition(number, "y > 1")
    assert breakpoint_checks.names_read(number) == {"y"}
    watches.LIVE.add(number, "loss")
    assert breakpoint_checks.names_read(number) == {"y", "loss"}
    breakpoint_state.set_log_template(number, "{step}")
    assert breakpoint_checks.names_read(number) == {"y", "loss", "step"}
    watches.LIVE.remove(number, "loss")
    breakpoint_state.set_condition(number, "")
    assert breakpoint_checks.names_read(number) == {"step"}
    watches.LIVE.add(number, "locals()")
    assert breakpoint_checks.names_read(number) is None  # every local


def test_a_watch_of_a_scalar_numpy_has_no_number_for_is_taken_as_at_a_stop():
    # The step's scalars come with the host's question as NumPy arrays. A watch of one
    # NumPy cannot hold as JAX does (bfloat16, complex) is still taken, as a stop shows it.
    t = Transcript("watch h", "watch z", "watch i", "ca")

    def body(carry, i):
        h = (carry + i).astype(jnp.bfloat16)  # noqa: F841 (watched)
        z = (carry + i) * jnp.complex64(1j)  # noqa: F841 (watched)
        jaxdbg.breakpoint(**t.options)
        return carry + 0.5, None

    jax.jit(lambda: jax.lax.scan(body, 0.0, jnp.arange(4.0))[0])()
    h, z, i = watches.LIVE.watches(_number(t))
    assert [v.number for v in h.values] == [0.0, 1.5, 3.0, 4.5]
    assert [v.text for v in z.values] == ["0j", "1.5j", "3j", "4.5j"]
    assert all(v.number is None and v.error is None for v in z.values)
    assert [(v.text, v.number) for v in i.values] == [("0.0", 0.0), ("1.0", 1.0), ("2.0", 2.0), ("3.0", 3.0)]


def test_numbers_taken_at_passed_stops_are_kept_in_order_as_copies_and_read_as_values():
    # A watch of a local that is a number is kept at a passed stop as the number alone
    # (the values are made when read); other watches take the general path; the order
    # of hits holds across both, and a number is a copy of the program's buffer.
    book = watches.WatchBook()
    book.add(3, "loss")
    sent = {"loss": np.asarray(np.float32(0.25)), "grads": np.arange(3.0)}
    assert book.record_numbers(3, 1, sent.__getitem__)
    sent["loss"][()] = 7.0  # the buffer is reused by the program after the call
    assert book.record_numbers(3, 2, sent.__getitem__)
    assert book.recorded(3) == 2
    book.add(3, "grads")  # an array: not a number, so the general path takes both
    assert not book.record_numbers(3, 3, sent.__getitem__)
    frame = Frame("<cell>", 1, "step", {name: jnp.asarray(v) for name, v in sent.items()}, {}, ["pass\n"], 1)
    book.record_with(3, 3, watches.on_numbers(sent.__getitem__, lambda: frame))
    assert not book.record_numbers(3, 4, {}.__getitem__)  # a name not sent
    loss, grads = book.watches(3)
    assert [(v.hit, v.text, v.number) for v in loss.values] == [(1, "0.25", 0.25), (2, "7.0", 7.0), (3, "7.0", 7.0)]
    assert [v.hit for v in grads.values] == [3] and grads.values[0].stats.max == 2.0
    book.remove(3, "grads")
    for hit in range(4, 4 + watches.HISTORY_LENGTH + 1_500):
        assert book.record_numbers(3, hit, sent.__getitem__)
    (loss,) = book.watches(3)
    assert len(loss.values) == watches.HISTORY_LENGTH and loss.values[-1].hit == 3 + watches.HISTORY_LENGTH + 1_500
