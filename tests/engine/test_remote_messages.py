"""What travels between a stop's owner and the job's debug host survives the trip:
JSON through the coordination service's store, as the signed messages carry it."""

from __future__ import annotations

import json

import jax.numpy as jnp
import numpy as np

from jaxdbg.engine import remote_stops, watches
from jaxdbg.engine.session import Session
from jaxdbg.capture.frames import Frame
from jaxdbg.capture.stop_info import StopInfo


def _travelled(value: watches.WatchValue) -> watches.WatchValue:
    return remote_stops.watch_value_from_message(json.loads(json.dumps(
        remote_stops.watch_value_message(value))))


def test_watch_values_of_every_kind_come_back_as_they_left():
    frame = Frame("<cell>", 1, "f", {"x": jnp.arange(4.0), "z": jnp.array([1 + 2j, np.nan]),
                                     "n": 3}, {}, ["x\n"], 1)
    session = Session([frame], StopInfo())
    values = session.watch_values(["x.sum()", "x", "z", "str(n)", "1 / 0", "nope"], 5)
    back = [_travelled(v) for v in values]
    assert back == values
    number, array, complex_array, text, raised, missing = back
    assert number.number == 6.0 and number.hit == 5
    assert array.shape == (4,) and array.stats is not None and array.stats.max == 3.0
    assert complex_array.stats is not None and complex_array.stats.mean == 1 + 2j
    assert complex_array.stats.nan_count == 1
    assert text.text == "'3'"
    assert raised.error and "ZeroDivisionError" in raised.error
    assert missing.error and "nope" in missing.error
