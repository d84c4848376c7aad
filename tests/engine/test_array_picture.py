"""The array picture model: slices, sampling, colour codes and their marked classes,
histograms, for every dtype the array view draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from jaxdbg.engine import array_picture as ap
from jaxdbg.engine.array_picture import CellClass, LEVELS, PictureError, Sampling


def test_marked_classes_have_their_own_codes_and_counts():
    x = np.array([[np.nan, np.inf, -np.inf], [0.0, 1.0, 3.0]], np.float32)
    pic = ap.picture(x)
    assert pic.codes.tolist() == [[CellClass.NAN, CellClass.POS_INF, CellClass.NEG_INF],
                                  [CellClass.ZERO, round((LEVELS - 1) / 3), LEVELS - 1]]
    assert pic.class_counts == {"nan": 1, "+inf": 1, "-inf": 1, "zero": 1}
    assert (pic.low, pic.high) == (0.0, 3.0)  # the finite range
    assert pic.histogram.sum() == 3  # the finite values only


def test_the_ramp_is_linear_between_the_ends_and_clipped_outside_a_given_range():
    pic = ap.picture(np.array([1.0, 2.0, 3.0]), value_range=(1.0, 2.0))
    assert pic.codes.tolist() == [[0, LEVELS - 1, LEVELS - 1]]
    mid = ap.picture(np.array([-1.0, 0.5, 2.0]))
    assert mid.codes[0, 1] == round(1.5 / 3 * (LEVELS - 1))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16,
                                   np.int8, np.int32, np.uint8, np.int64])
def test_every_numeric_dtype_is_drawn_with_exact_values(dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype)
    pic = ap.picture(x)
    assert pic.dtype == str(np.dtype(dtype)) and pic.values.tolist() == np.arange(12).reshape(3, 4).tolist()
    assert pic.codes[0, 0] == CellClass.ZERO and pic.codes[2, 3] == LEVELS - 1


def test_bfloat16_nan_and_inf_are_marked():
    x = np.array([np.nan, np.inf, 2.0, 4.0], ml_dtypes.bfloat16)
    assert ap.picture(x).codes.tolist() == [[CellClass.NAN, CellClass.POS_INF, 0, LEVELS - 1]]


def test_bool_is_zero_for_false_and_the_high_end_for_true():
    assert ap.picture(np.array([True, False])).codes.tolist() == [[LEVELS - 1, CellClass.ZERO]]


def test_complex_is_drawn_as_magnitudes_and_says_so():
    pic = ap.picture(np.array([3 + 4j, 0j]))
    assert pic.values.tolist() == [[5.0, 0.0]] and pic.magnitudes and "|x|" in pic.note


def test_jax_arrays_and_a_constant_array():
    pic = ap.picture(jnp.full((2, 2), 7.0))
    assert (pic.codes == LEVELS // 2).all() and pic.histogram.sum() == 4


def test_one_dimensional_is_one_row():
    pic = ap.picture(np.arange(5.0))
    assert pic.codes.shape == (1, 5) and pic.axes == (None, 0) and pic.element_index(0, 3) == (3,)


def test_n_d_shows_the_leading_slice_by_default_and_chosen_axes_and_indices():
    x = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    lead = ap.picture(x)
    assert lead.index == (0, None, None) and lead.values.tolist() == x[0].tolist()
    assert lead.slice_text() == "[0, :, :]" and "slice [0, :, :]" in lead.note
    other = ap.picture(x, axes=(2, 0), indices={1: 2})
    assert other.values.tolist() == x[:, 2, :].T.tolist()  # rows along axis 2
    assert other.element_index(3, 1) == (1, 2, 3)
    assert ap.picture(x, indices={0: -1}).values.tolist() == x[1].tolist()


@pytest.mark.parametrize("axes, indices, message", [
    ((0, 0), None, "two different axes"), ((0, 5), None, "two different axes"),
    (None, {0: 2}, "out of range"), (None, {2: 0}, "slider indices are for the other axes"),
])
def test_a_bad_slice_says_why(axes, indices, message):
    with pytest.raises(PictureError, match=message):
        ap.picture(np.zeros((2, 3, 4)), axes=axes, indices=indices)


def test_what_cannot_be_drawn_says_why():
    with pytest.raises(PictureError, match="not an array"):
        ap.picture([1, 2])
    with pytest.raises(PictureError, match="no elements"):
        ap.picture(np.zeros((0, 3)))
    with pytest.raises(PictureError, match="cannot be drawn"):
        ap.picture(np.array(["a", "b"]))


def test_a_big_slice_is_sampled_evenly_keeping_the_ends_and_exact_elements():
    x = np.arange(1000 * 700, dtype=np.float32).reshape(1000, 700)
    pic = ap.picture(x, max_side=100)
    assert pic.sampling is Sampling.STRIDED and pic.codes.shape == (100, 100)
    assert pic.rows[0] == 0 and pic.rows[-1] == 999 and pic.cols[-1] == 699
    r, c = 37, 58
    assert pic.values[r, c] == x[pic.rows[r], pic.cols[c]]
    assert "100 of 1000 rows, 100 of 700 columns" in pic.note


def test_an_edge_sample_keeps_both_ends():
    x = np.arange(1000.0)
    pic = ap.picture(x, max_side=10, sampling="edges")
    assert pic.cols.tolist() == [0, 1, 2, 3, 4, 995, 996, 997, 998, 999]
    assert pic.sampling is Sampling.EDGES and "the first and last" in pic.note
    assert not ap.picture(np.arange(5.0), max_side=10).sampled


def test_a_nan_in_a_corner_survives_the_strided_sample():
    x = np.ones((4096, 4096), np.float32)
    x[-1, -1] = np.nan
    assert ap.picture(x).codes[-1, -1] == CellClass.NAN


def test_shard_boundaries_of_a_sharded_array():
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=jax.devices()[:8])
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x", "y"))
    x = jax.device_put(jnp.zeros((8, 16)), sharding)
    pic = ap.picture(x)
    assert pic.row_cuts == (4,) and pic.col_cuts == (4, 8, 12)
    given = ap.picture(np.zeros((8, 16)), sharding=sharding)
    assert given.row_cuts == (4,)
    assert ap.picture(np.zeros((8, 16))).row_cuts == ()


def test_pytree_leaves_and_small_pictures_of_locals():
    tree = {"a": np.zeros(3), "b": [np.ones((2, 2)), "text"], "c": np.zeros(0)}
    assert [path for path, _ in ap.array_leaves(tree)] == ["['a']", "['b'][0]"]
    pics = ap.small_pictures({"x": np.zeros((50, 50)), "s": np.float32(1), "t": "no", "e": np.zeros(0)})
    assert [name for name, _ in pics] == ["x"] and pics[0][1].codes.shape == (32, 32)
    huge = np.broadcast_to(np.float32(0), (ap.SUMMARY_MAX_ELEMENTS + 1,))  # no memory of its own
    assert ap.small_pictures({"huge": huge, "x": np.zeros(3)})[0][0] == "x"
