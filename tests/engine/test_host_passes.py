"""The debug host's word that it passes every stop of a breakpoint for now, as another
process of the job keeps it (tests/distributed/test_passed_in_a_job.py has the real job)."""

from __future__ import annotations

import pytest

from jaxdbg.engine import breakpoint_state, watches
from jaxdbg.job import host_passes


class _Host:
    process = 0


@pytest.fixture(autouse=True)
def no_words():
    yield
    for kept in (host_passes._passing, host_passes._checking, host_passes._continued, host_passes._hits):
        kept.clear()
    host_passes._hits_from.clear()
    host_passes._version[0] = None
    breakpoint_state.reset()


def _number(line: int) -> int:
    return breakpoint_state.register(__file__, line, "step")


def test_a_kept_word_passes_the_stops_and_counts_those_a_continue_all_passes():
    host_passes.accept(1, {"version": [0, 7], "hits": True})
    host_passes.accept(2, {"version": [0, 7], "hits": False})  # disabled: not hits
    assert host_passes.passes(1, 1) and host_passes.passes(1, 4)  # 4: a vmap's selected elements
    assert host_passes.passes(2, 1)
    assert not host_passes.passes(3, 1) and not host_passes.passes(None, 1)
    assert host_passes._continued == {1: 5}


def test_a_newer_version_at_the_host_ends_the_words_of_older_ones():
    host_passes.accept(1, {"version": [0, 7], "hits": True})
    host_passes.follow_version({"version": [0, 7]}, host_left=False)
    assert host_passes.passes(1, 1)
    host_passes.follow_version({"version": [0, 6]}, host_left=False)  # written before the word: older
    assert host_passes.passes(1, 1)
    host_passes.follow_version({"version": [0, 8]}, host_left=False)  # e.g. `enable 1` at the host
    assert not host_passes.passes(1, 1)
    host_passes.accept(1, {"version": [0, 7], "hits": True})  # an answer given before the change
    assert not host_passes.passes(1, 1)


def test_a_new_host_or_a_host_that_left_ends_every_word():
    host_passes.accept(1, {"version": [0, 7], "hits": True})
    host_passes.follow_version({"version": [1, 2]}, host_left=False)  # process 1 serves now
    assert not host_passes.passes(1, 1)
    host_passes.accept(1, {"version": [1, 2], "hits": True})
    assert host_passes.passes(1, 1)
    host_passes.follow_version({"version": [1, 2]}, host_left=True)
    assert not host_passes.passes(1, 1)


def test_a_stop_that_ends_without_a_word_ends_the_breakpoints_word():
    host_passes.accept(1, {"version": [0, 7], "hits": True})
    host_passes.accept(1, None)
    assert not host_passes.passes(1, 1)
    host_passes.accept(1, {"version": "garbled"})  # a message that makes no sense is no word
    assert not host_passes.passes(1, 1)


def test_the_host_gives_its_word_only_where_every_stop_passes_whatever_its_values():
    number = _number(101)
    assert host_passes.grant(_Host(), number) is None  # enabled: its stops open
    breakpoint_state.set_ignore(number, 5)
    assert host_passes.grant(_Host(), number) is None  # the host counts an ignore down itself
    breakpoint_state.set_ignore(number, 0)
    breakpoint_state.continue_all(number)
    word = host_passes.grant(_Host(), number)
    assert word == {"version": list(host_passes.host_version(_Host())), "hits": True}
    breakpoint_state.set_condition(number, "x > 3")  # with `continue all`: decided at the host
    assert host_passes.grant(_Host(), number) is None
    breakpoint_state.end_run()  # its `continue all` ends: the word gives the checks
    assert host_passes.grant(_Host(), number)["checks"] == ["x > 3", ""]
    breakpoint_state.set_condition(number, "")
    watches.LIVE.add(number, "x")  # a watch takes a value at every stop, passed ones too
    try:
        assert host_passes.grant(_Host(), number) is None
    finally:
        watches.LIVE.remove(number, "x")
    breakpoint_state.set_enabled(number, False)
    assert host_passes.grant(_Host(), number)["hits"] is False


def test_every_change_of_what_passes_moves_the_hosts_version():
    number = _number(102)
    seen = [host_passes.host_version(_Host())]
    for change in (
        lambda: breakpoint_state.set_enabled(number, False),
        lambda: breakpoint_state.set_enabled(number, True),
        lambda: breakpoint_state.continue_all(number),
        breakpoint_state.end_run,
        lambda: breakpoint_state.set_log_template(number, "{x}"),
        lambda: watches.LIVE.add(number, "x"),
        lambda: watches.LIVE.remove(number, "x"),
        breakpoint_state.reset,
    ):
        change()
        seen.append(host_passes.host_version(_Host()))
    assert all(a[1] < b[1] for a, b in zip(seen, seen[1:])), seen


def test_stops_passed_elsewhere_count_as_hits_and_in_the_continue_all_report(capsys):
    number = _number(103)
    breakpoint_state.continue_all(number)
    breakpoint_state.count_passed_elsewhere(number, 99, hits=5)  # 5 passed by a condition
    row = next(r for r in breakpoint_state.rows() if r.number == number)
    assert row.hits == 104
    breakpoint_state.end_run()
    assert f"continued past 99 more stops of breakpoint {number}" in capsys.readouterr().out


def test_a_word_with_the_hosts_checks_screens_here_until_the_host_changes():
    number = _number(104)
    host_passes.accept(number, {"version": [0, 7], "checks": ["x == 3", "x={x}"]})
    assert breakpoint_state.checks(number) == ("x == 3", "x={x}")
    assert not host_passes.passes(number, 1)  # screened here, not passed whole
    breakpoint_state.count_hit(number)  # a stop the condition passed here
    breakpoint_state.count_hit(number)
    host_passes.follow_version({"version": [0, 8]}, host_left=False)
    assert breakpoint_state.checks(number) == ("", "")  # the host decides again
    assert host_passes._hits == {number: 2}  # to be sent to the host


def test_a_pass_word_ends_a_checks_word_and_the_other_way_round():
    number = _number(105)
    host_passes.accept(number, {"version": [0, 7], "checks": ["x == 3", ""]})
    host_passes.accept(number, {"version": [0, 8], "hits": True})
    assert breakpoint_state.checks(number) == ("", "") and host_passes.passes(number, 1)
    host_passes.accept(number, {"version": [0, 9], "checks": ["x == 3", ""]})
    assert not host_passes.passes(number, 1) and breakpoint_state.checks(number) == ("x == 3", "")
