"""JAX set-ups the sharding tests share: the devices a case needs, shard_map on every
JAX the tests support, and meshes with explicit axes where JAX has them."""

from __future__ import annotations

import jax
import pytest


def devices_or_skip(n: int) -> list:
    """The first ``n`` devices, or skip the test when there are fewer."""
    if jax.device_count() < n:
        pytest.skip(f"needs {n} devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)")
    return jax.devices()[:n]


def shard_map():
    """``jax.shard_map``, or the experimental one on a JAX that has no public one yet."""
    found = getattr(jax, "shard_map", None)
    if found is None:
        from jax.experimental.shard_map import shard_map as found
    return found


def explicit_axes(n: int) -> dict:
    """``jax.make_mesh`` keywords making its ``n`` axes explicit; none on a JAX without
    axis types, whose meshes are all automatic."""
    axis_type = getattr(jax.sharding, "AxisType", None)
    return {} if axis_type is None else {"axis_types": (axis_type.Explicit,) * n}


def automatic_axes(n: int) -> dict:
    """``jax.make_mesh`` keywords making its ``n`` axes automatic (newer JAX makes them
    explicit by default); none on a JAX without axis types."""
    axis_type = getattr(jax.sharding, "AxisType", None)
    return {} if axis_type is None else {"axis_types": (axis_type.Auto,) * n}
