"""LazyValues, a frame's locals where a big traced tree waits to be rebuilt: every way of
reading a value makes it first, once, even from two threads at once."""

from __future__ import annotations

import threading
import time

from jaxdbg.runtime.lazy_values import LazyValues

MADE = []


def _slow_tree():
    MADE.append(1)
    time.sleep(0.05)  # long enough for a second reader to arrive meanwhile
    return {"w": 1}


def _values():
    MADE.clear()
    return LazyValues({"x": 1, "params": None, "y": 2}, {"params": ("a dict of 1", _slow_tree)})


def test_the_hint_stands_until_the_value_is_read_once():
    values = _values()
    assert list(values) == ["x", "params", "y"] and len(values) == 3 and "params" in values
    assert values.hint("params") == "a dict of 1" and values.hint("x") is None and not MADE
    assert values["params"] == {"w": 1} and values["params"] is values["params"]
    assert values.hint("params") is None and len(MADE) == 1


def test_every_way_of_reading_makes_the_value():
    for read in (
        lambda v: dict(v)["params"],
        lambda v: {**v}["params"],
        lambda v: dict(v.items())["params"],
        lambda v: list(v.values())[1],
        lambda v: v.get("params"),
        lambda v: eval("params", {}, v),
        lambda v: {"k": 0, **v}["params"],
    ):
        assert read(_values()) == {"w": 1}


def test_two_threads_reading_at_once_make_it_once():
    values = _values()
    got = []
    threads = [threading.Thread(target=lambda: got.append(values["params"])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(MADE) == 1 and all(g is got[0] for g in got)


def test_a_value_set_or_deleted_before_it_was_made_is_never_made():
    values = _values()
    values["params"] = "set"
    assert values["params"] == "set" and values.hint("params") is None
    values = _values()
    del values["params"]
    assert "params" not in values and list(values) == ["x", "y"] and not MADE
