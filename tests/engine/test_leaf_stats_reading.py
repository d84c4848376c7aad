"""Small float leaves read together (what a pytree watch takes at every passed stop):
the same statistics as one leaf at a time, whatever the dtype and wherever NaN / Inf
sit; CPU arrays read as they are, without ``jax.device_get``."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from jaxdbg.engine.values import leaf_stats


def _groups(dtype, seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        group = []
        for _ in range(int(rng.integers(1, 7))):
            x = (rng.standard_normal(int(rng.integers(1, 40))) * 10.0 ** int(rng.integers(-3, 4))).astype(dtype)
            if rng.random() < 0.3:
                x[rng.integers(0, x.size)] = np.nan
            if rng.random() < 0.3:
                x[rng.integers(0, x.size)] = -np.inf
            if rng.random() < 0.1:
                x[:] = np.nan  # no finite value: no max
            group.append(jnp.asarray(x) if rng.random() < 0.7 else x)
        yield group


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.complex64])
def test_leaves_read_together_match_one_at_a_time(dtype):
    for group in _groups(dtype, seed=sum(map(ord, np.dtype(dtype).name))):
        together = leaf_stats._batched_stats(group)
        for value, stats in zip(group, together):
            alone = leaf_stats._float_stats(np.asarray(value))
            assert (stats.nan_count, stats.inf_count) == (alone.nan_count, alone.inf_count)
            assert stats.max_abs == alone.max_abs
            assert math.isclose(stats.sum_squares, alone.sum_squares, rel_tol=1e-6)
            assert type(stats.sum_squares) is float and (stats.max_abs is None or type(stats.max_abs) is float)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # an overflow is a result here, not a warning
def test_finite_leaves_whose_squares_overflow_still_count_no_nan():
    big = np.array([1e200, 1.0]), np.array([2.0])
    first, second = leaf_stats._batched_stats(list(big))
    assert first.sum_squares == math.inf and first.max_abs == 1e200 and first.nan_count == first.inf_count == 0
    assert second == leaf_stats.LeafStats(4.0, 2.0, 0, 0)
    alone = leaf_stats._one_leaf_stats(np.array([1e200, -1e200]))  # a big leaf's own pass
    assert alone == leaf_stats.LeafStats(math.inf, 1e200, 0, 0)


def test_cpu_arrays_are_read_without_device_get(monkeypatch):
    fetched = []
    real = jax.device_get
    monkeypatch.setattr(leaf_stats.jax, "device_get", lambda xs: fetched.append(len(xs)) or real(xs))
    on_cpu = [jax.device_put(jnp.arange(3.0), jax.devices("cpu")[0]), np.ones(2)]
    assert [s.sum_squares for s in leaf_stats._batched_stats(on_cpu)] == [5.0, 2.0]
    assert fetched == []
    assert leaf_stats._in_host_memory(on_cpu[0]) and leaf_stats._in_host_memory(on_cpu[1])
    assert not leaf_stats._in_host_memory(object())  # no sharding to ask: device_get decides


def test_is_float_answers_each_dtype_as_its_name_does():
    for dtype in (jnp.float32, np.float16, ml_dtypes.bfloat16, np.complex64, np.int32, np.bool_):
        for asked in (np.dtype(dtype), np.dtype(dtype)):  # the second answer from the cache
            name = np.dtype(dtype).name
            assert leaf_stats.is_float(asked) == ("float" in name or "complex" in name)
    assert leaf_stats.is_float("float32") and not leaf_stats.is_float("int8")
    assert leaf_stats.is_float(jax.random.key(0).dtype) is False  # a PRNG key's dtype
