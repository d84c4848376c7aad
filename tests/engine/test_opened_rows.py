"""What opening a locals row shows, as the Session makes it (the panel asks; a remote
stop's owner answers the same way): children, a row in full, pictures, and a picture
as it travels between the processes of a job."""

from __future__ import annotations

import numpy as np
import pytest

from jaxdbg.engine.frames import Frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.values import array_picture
from jaxdbg.job import remote_stops


def _session() -> Session:
    values = {
        "tree": {"a": np.arange(6.0).reshape(2, 3), "b": (np.int32(3), "text")},
        "big": np.linspace(-1.0, 1.0, 40 * 50).reshape(40, 50) / 3,
    }
    return Session([Frame("step.py", 1, "step", values, {}, ["x = 1\n"], 1)])


def test_a_rows_children_its_statistics_and_its_pictures_come_from_the_session():
    session = _session()
    rows, total = session.row_children(["tree"], 200)
    assert total == 2 and [r["name"] for r in rows] == ["'a'", "'b'"] and rows[1]["expandable"]
    inner, _ = session.row_children(["tree", 1], 1)
    assert [r["name"] for r in inner] == ["[0]"]  # cut to the limit
    assert "max=5" in session.row_in_full(["tree", 0])["summary"]
    label, pic, stats = session.row_picture(["tree", 0])
    assert label == "'a'" and pic.codes.shape == (2, 3) and stats == ""
    label, pic, stats = session.row_picture(["big"], large=True, axes=(1, 0))
    assert pic.axes == (1, 0) and "min=-0.3333" in stats


def test_a_path_that_names_nothing_or_an_array_that_cannot_be_drawn_says_why():
    session = _session()
    with pytest.raises(LookupError, match="no local named 'nope'"):
        session.row_children(["nope"], 10)
    with pytest.raises(LookupError, match="has no child 7"):
        session.row_in_full(["tree", 7])
    with pytest.raises(LookupError, match="a row is named by"):
        session.row_picture([])
    with pytest.raises(array_picture.PictureError, match="two different axes"):
        session.row_picture(["big"], large=True, axes=(1, 1))


def test_a_picture_travels_whole_and_its_values_exactly():
    session = _session()
    for large, sampling in ((False, None), (True, array_picture.Sampling.EDGES)):
        _, pic, _ = session.row_picture(["big"], large=large, sampling=sampling)
        back = remote_stops.picture_from_message(remote_stops.picture_message(pic))
        for field in (
            "shape",
            "dtype",
            "axes",
            "index",
            "low",
            "high",
            "sampling",
            "class_counts",
            "magnitudes",
            "row_cuts",
            "col_cuts",
            "stats",
            "slice_nonfinite",
            "nonfinite_kept",
        ):
            assert getattr(back, field) == getattr(pic, field), field
        for field in ("rows", "cols", "codes", "values", "histogram", "histogram_edges"):
            assert np.array_equal(getattr(back, field), getattr(pic, field)), field
            assert getattr(back, field).dtype == getattr(pic, field).dtype, field


def test_the_owner_answers_a_bad_row_request_with_its_error_and_the_stop_goes_on():
    session = _session()
    answer = remote_stops._answer
    assert answer(session, {"op": "row_children", "path": ["nope"], "limit": 5}) == {
        "error": "no local named 'nope' in this frame"
    }
    assert (
        "two different axes"
        in answer(session, {"op": "row_picture", "path": ["big"], "large": True, "axes": [1, 1]})["picture_error"]
    )
    assert answer(session, {"op": "row_picture", "path": ["big"], "large": True, "axes": ["x", 1]})["error"].startswith(
        "ValueError"
    )
    reply = answer(session, {"op": "row_children", "path": ["tree"], "limit": 5, "frame": 0})
    assert reply["total"] == 2 and not session.finished
