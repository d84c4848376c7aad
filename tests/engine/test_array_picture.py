"""The array picture model: slices, sampling, colour codes and their marked classes,
histograms, for every dtype the array view draws."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from jaxdbg.engine.values import array_picture as ap
from jaxdbg.engine.values import picture_sets, summaries
from jaxdbg.engine.values.array_picture import LEVELS, CellClass, PictureError, Sampling


def test_marked_classes_have_their_own_codes_and_counts():
    x = np.array([[np.nan, np.inf, -np.inf], [0.0, 1.0, 3.0]], np.float32)
    pic = ap.picture(x)
    assert pic.codes.tolist() == [
        [CellClass.NAN, CellClass.POS_INF, CellClass.NEG_INF],
        [CellClass.ZERO, round((LEVELS - 1) / 3), LEVELS - 1],
    ]
    assert pic.class_counts == {"nan": 1, "+inf": 1, "-inf": 1, "zero": 1}
    assert (pic.low, pic.high) == (0.0, 3.0)  # the finite range
    assert pic.histogram.sum() == 3  # the finite values only


def test_the_ramp_is_linear_between_the_ends_and_clipped_outside_a_given_range():
    pic = ap.picture(np.array([1.0, 2.0, 3.0]), value_range=(1.0, 2.0))
    assert pic.codes.tolist() == [[0, LEVELS - 1, LEVELS - 1]]
    mid = ap.picture(np.array([-1.0, 0.5, 2.0]))
    assert mid.codes[0, 1] == round(1.5 / 3 * (LEVELS - 1))


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16, np.int8, np.int32, np.uint8, np.int64]
)
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


@pytest.mark.parametrize(
    "axes, indices, message",
    [
        ((0, 0), None, "two different axes"),
        ((0, 5), None, "two different axes"),
        (None, {0: 2}, "out of range"),
        (None, {2: 0}, "slider indices are for the other axes"),
    ],
)
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
    assert [path for path, _ in picture_sets.array_leaves(tree)] == ["['a']", "['b'][0]"]
    pics = picture_sets.small_pictures({"x": np.zeros((50, 50)), "s": np.float32(1), "t": "no", "e": np.zeros(0)})
    assert [name for name, _ in pics] == ["x"] and pics[0][1].codes.shape == (32, 32)
    huge = np.broadcast_to(np.float32(0), (picture_sets.SUMMARY_MAX_ELEMENTS + 1,))  # no memory of its own
    assert picture_sets.small_pictures({"huge": huge, "x": np.zeros(3)})[0][0] == "x"


# -- a sample never hides a NaN or an Inf; the statistics are the whole array's ----------


def _with_nan_and_inf(shape, nan_at, inf_at, seed=0):
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    x[nan_at], x[inf_at] = np.nan, np.inf
    return x


def test_a_thumbnail_of_64_rows_keeps_the_rows_holding_a_nan_and_an_inf():
    # Rows 41 and 57 are both odd: an even stride of 32 of 64 rows passes over them.
    x = _with_nan_and_inf((64, 32), (41, 3), (57, 20))
    pic = ap.picture(jnp.asarray(x), max_side=ap.THUMBNAIL_SIDE)
    assert pic.sampled and pic.codes.shape == (32, 32) and len(set(pic.rows.tolist())) == 32
    assert 41 in pic.rows and 57 in pic.rows and list(pic.rows) == sorted(pic.rows)
    r, c = list(pic.rows).index(41), list(pic.cols).index(3)
    assert pic.codes[r, c] == CellClass.NAN and pic.element_index(r, c) == (41, 3)
    assert (pic.codes == CellClass.POS_INF).sum() == 1
    finite = x[np.isfinite(x)]
    assert (pic.low, pic.high) == (float(finite.min()), float(finite.max()))  # whole, not the sample's
    assert pic.class_counts["nan"] == 1 and pic.class_counts["+inf"] == 1
    assert pic.nonfinite_count == 2 and [cell.index for cell in pic.nonfinite_cells] == [(41, 3), (57, 20)]
    assert [cell.kind for cell in pic.nonfinite_cells] == ["nan", "+inf"]
    assert "every NaN / Inf cell kept" in pic.note


@pytest.mark.parametrize("sampling", list(Sampling))
def test_a_large_view_keeps_a_nan_off_the_stride_in_either_sampling(sampling):
    x = np.zeros((2048, 1024), np.float32)
    x[1001, 333] = np.nan
    x[7, 5] = -np.inf
    pic = ap.picture(x, max_side=256, sampling=sampling)
    assert pic.codes.shape == (256, 256)
    assert (pic.codes == CellClass.NAN).sum() == 1 and (pic.codes == CellClass.NEG_INF).sum() == 1
    assert pic.class_counts == {"nan": 1, "+inf": 0, "-inf": 1}  # no zero count this big
    assert "every NaN / Inf cell kept" in pic.note


def test_more_nans_than_the_picture_has_rows_are_counted_whole_and_said_so():
    x = np.ones((300, 300))
    x[:, 7] = np.nan  # 300 NaN in one column: one column and 40 rows can show 40 of them
    pic = ap.picture(x, max_side=40)
    assert pic.class_counts["nan"] == 300 and (pic.codes == CellClass.NAN).sum() == 40
    assert "40 of its 300 NaN / Inf cells kept" in pic.note
    assert len(pic.nonfinite_cells) == summaries.NONFINITE_LISTED and pic.nonfinite_count == 300


def test_a_nan_in_another_slice_is_counted_and_placed_but_not_drawn():
    x = np.zeros((3, 4, 5))
    x[2, 1, 1] = np.nan
    pic = ap.picture(x)  # the slice [0, :, :]
    assert (pic.codes == CellClass.NAN).sum() == 0 and pic.class_counts["nan"] == 1
    assert pic.nonfinite_cells[0].index == (2, 1, 1) and pic.class_counts["zero"] == 59


def test_exact_statistics_list_where_the_first_nonfinite_values_are():
    x = np.zeros(100_000, np.float32)
    x[[5, 70_000]] = np.nan
    x[9] = -np.inf
    stats = summaries.array_stats(x.reshape(100, 1000))
    assert (stats.nan_count, stats.inf_count, stats.neg_inf_count) == (2, 1, 1)
    assert stats.nonfinite_cells == (
        summaries.NonFiniteCell((0, 5), "nan"),
        summaries.NonFiniteCell((0, 9), "-inf"),
        summaries.NonFiniteCell((70, 0), "nan"),
    )
    assert stats.nonfinite_places(2) == "nan at [0, 5], -inf at [0, 9] and 1 more"
    assert summaries.ArrayStats.from_json(json.loads(json.dumps(stats.to_json()))) == stats
    many = np.full((10, 10), np.inf)
    assert len(summaries.array_stats(many).nonfinite_cells) == summaries.NONFINITE_LISTED


def test_the_locals_row_names_where_the_nan_is():
    x = _with_nan_and_inf((64, 32), (41, 3), (57, 20))
    text = summaries.summarize("h", jnp.asarray(x)).describe()
    assert "nan=1 inf=1 (nan at [41, 3], +inf at [57, 20])" in text


def test_a_sampled_slice_of_chosen_axes_keeps_its_own_nan_only():
    x = np.zeros((3, 50, 60))
    x[2, 10, 7], x[0, 49, 59] = np.nan, np.inf
    pic = ap.picture(x, indices={0: 2}, axes=(2, 1), max_side=8)  # rows along axis 2
    ((r, c),) = np.argwhere(pic.codes == CellClass.NAN)
    assert pic.element_index(r, c) == (2, 10, 7) and (pic.codes == CellClass.POS_INF).sum() == 0
    assert pic.slice_nonfinite == 1 and "every NaN / Inf cell kept" in pic.note
    assert pic.class_counts["+inf"] == 1  # the whole array's count, though not in this slice
