"""jaxdbg's sharding drawings are its own, but each block names the devices JAX names.

For 1-D and 2-D arrays (what ``jax.debug.visualize_array_sharding`` draws) the
device ids in each cell of JAX's drawing, read row by row, must be those jaxdbg's
layout puts in the same cell.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxdbg.engine.values.layout_reading import layout_of
from jaxdbg.runtime import jax_routes

pytestmark = pytest.mark.multidevice
pytest.importorskip("rich", reason="JAX draws shardings with rich")

JAX_VISUALIZE = jax_routes.VISUALIZE_ARRAY_SHARDING.original()


def _ids(label: str) -> tuple[int, ...]:
    ids: list[int] = []
    for part in label.split(","):
        first, _, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return tuple(sorted(ids))


def jax_cells(x, capfd) -> list[list[tuple[int, ...]]]:
    """The device ids in each cell of JAX's drawing, row by row."""
    capfd.readouterr()
    JAX_VISUALIZE(x, use_color=False)
    drawing = capfd.readouterr().out
    return [
        [_ids(label) for label in re.findall(r"CPU ([\d,\-]+)", line)] for line in drawing.splitlines() if "CPU" in line
    ]


def jaxdbg_cells(x) -> list[list[tuple[int, ...]]]:
    layout = layout_of(x)
    (page,) = layout.pages()
    return [[tuple(layout.shard_at(page, r, c).devices) for c in range(layout.cols())] for r in range(layout.rows())]


def _mesh(shape, names, order=None):
    devices = np.array(jax.devices()[: int(np.prod(shape))])
    if order is not None:
        devices = devices[list(order)]
    return Mesh(devices.reshape(shape), names)


CASES = {
    "1d over 8": ((16,), ((8,), ("d",)), P("d")),
    "1d over a 2x4 mesh's both axes": ((16,), ((2, 4), ("x", "y")), P(("x", "y"))),
    "2d rows and columns": ((8, 8), ((2, 4), ("x", "y")), P("x", "y")),
    "2d columns, rows replicated": ((4, 8), ((2, 4), ("x", "y")), P(None, "y")),
    "2d rows, columns replicated": ((8, 4), ((2, 4), ("x", "y")), P("x")),
    "2d transposed axes": ((8, 8), ((2, 4), ("x", "y")), P("y", "x")),
    "fully replicated": ((4, 4), ((2, 4), ("x", "y")), P()),
    "permuted devices": ((8, 8), ((4, 2), ("x", "y"), (0, 2, 4, 6, 1, 3, 5, 7)), P("x", "y")),
    "uneven blocks": ((6, 4), ((2, 2), ("x", "y")), P("x", "y")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_block_names_the_devices_jax_names(name, capfd):
    shape, mesh_args, spec = CASES[name]
    if len(jax.devices()) < int(np.prod(mesh_args[0])):
        pytest.skip("needs 8 (forced host) devices")
    x = jax.device_put(jnp.zeros(shape), NamedSharding(_mesh(*mesh_args), spec))
    theirs = jax_cells(x, capfd)
    assert theirs and all(theirs), "JAX's drawing had no device labels"
    assert jaxdbg_cells(x) == theirs
