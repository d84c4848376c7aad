"""Sharding layouts on 8 forced CPU devices: golden text renderings, HTML, and inspect_sharding in jit."""

from __future__ import annotations

import collections
import io

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg
from jaxdbg.engine.values.layout_reading import layout_from_indices, sharding_view
from jaxdbg.engine.values.sharding_layout import ShardingView, compress_ids
from jaxdbg.ipython import sharding_hooks
from support.jax_setups import devices_or_skip

pytestmark = pytest.mark.multidevice


@pytest.fixture(scope="module")
def meshes():
    devices_or_skip(8)
    return {
        "2x4": jax.make_mesh((2, 4), ("x", "y")),
        "8": jax.make_mesh((8,), ("d",)),
        "2x2x2": jax.make_mesh((2, 2, 2), ("a", "b", "c")),
    }


def _array(shape, mesh, spec):
    return jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


GOLDEN_1D = """\
float32[16] · NamedSharding · mesh d=8 · P('d') · 8 cpu devices
columns: dim 0 (d)
    0:2     2:4     4:6     6:8     8:10   10:12   12:14   14:16
 ┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐
 │   0   │   1   │   2   │   3   │   4   │   5   │   6   │   7   │
 └───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘
8 shards, one device each:
    [0:2]    device 0
    [2:4]    device 1
    [4:6]    device 2
    [6:8]    device 3
    [8:10]   device 4
    [10:12]  device 5
    [12:14]  device 6
    [14:16]  device 7
"""

GOLDEN_2D = """\
float32[8,8] · NamedSharding · mesh x=2 × y=4 · P('x', 'y') · 8 cpu devices
rows: dim 0 (x) · columns: dim 1 (y)
      0:2   2:4   4:6   6:8
    ┌─────┬─────┬─────┬─────┐
0:4 │  0  │  1  │  2  │  3  │
4:8 │  4  │  5  │  6  │  7  │
    └─────┴─────┴─────┴─────┘
8 shards, one device each:
    [0:4, 0:2]  device 0
    [0:4, 2:4]  device 1
    [0:4, 4:6]  device 2
    [0:4, 6:8]  device 3
    [4:8, 0:2]  device 4
    [4:8, 2:4]  device 5
    [4:8, 4:6]  device 6
    [4:8, 6:8]  device 7
"""

GOLDEN_3D = """\
float32[4,6,8] · NamedSharding · mesh a=2 × b=2 × c=2 · P('a', 'b', 'c') · 8 cpu devices
grids: dim 0 (a) · rows: dim 1 (b) · columns: dim 2 (c)
[0:2, :, :]
      0:4   4:8
    ┌─────┬─────┐
0:3 │  0  │  1  │
3:6 │  2  │  3  │
    └─────┴─────┘
[2:4, :, :]
      0:4   4:8
    ┌─────┬─────┐
0:3 │  4  │  5  │
3:6 │  6  │  7  │
    └─────┴─────┘
8 shards, one device each:
    [0:2, 0:3, 0:4]  device 0
    [0:2, 0:3, 4:8]  device 1
    [0:2, 3:6, 0:4]  device 2
    [0:2, 3:6, 4:8]  device 3
    [2:4, 0:3, 0:4]  device 4
    [2:4, 0:3, 4:8]  device 5
    [2:4, 3:6, 0:4]  device 6
    [2:4, 3:6, 4:8]  device 7
"""

GOLDEN_REPLICATED = """\
float32[8,8] · NamedSharding · mesh x=2 × y=4 · P() · 8 cpu devices
 ┌─────┐
 │ 0–7 │
 └─────┘
1 shard, replicated ×8:
    [:, :]  replicated ×8: 0–7
"""

GOLDEN_PARTIAL = """\
float32[8,8] · NamedSharding · mesh x=2 × y=4 · P('x') · 8 cpu devices
rows: dim 0 (x)
    ┌─────┐
0:4 │ 0–3 │
4:8 │ 4–7 │
    └─────┘
2 shards, replicated ×4:
    [0:4, :]  replicated ×4: 0–3
    [4:8, :]  replicated ×4: 4–7
"""

GOLDEN_MESH = """\
Mesh x=2 × y=4 · 8 cpu devices
rows: x · columns: y
    0   1   2   3
  ┌───┬───┬───┬───┐
0 │ 0 │ 1 │ 2 │ 3 │
1 │ 4 │ 5 │ 6 │ 7 │
  └───┴───┴───┴───┘
8 positions, one device each
"""

GOLDEN_NAMED = """\
shape [4,8] · NamedSharding · mesh x=2 × y=4 · P(None, 'y') · 8 cpu devices
columns: dim 1 (y)
   0:2   2:4   4:6   6:8
 ┌─────┬─────┬─────┬─────┐
 │ 0,4 │ 1,5 │ 2,6 │ 3,7 │
 └─────┴─────┴─────┴─────┘
4 shards, replicated ×2:
    [:, 0:2]  replicated ×2: 0,4
    [:, 2:4]  replicated ×2: 1,5
    [:, 4:6]  replicated ×2: 2,6
    [:, 6:8]  replicated ×2: 3,7
"""


def test_1d_array(meshes):
    assert str(sharding_view(_array((16,), meshes["8"], P("d")))) == GOLDEN_1D.rstrip("\n")


def test_2d_array(meshes):
    assert str(sharding_view(_array((8, 8), meshes["2x4"], P("x", "y")))) == GOLDEN_2D.rstrip("\n")


def test_3d_array_one_grid_per_leading_block(meshes):
    assert str(sharding_view(_array((4, 6, 8), meshes["2x2x2"], P("a", "b", "c")))) == GOLDEN_3D.rstrip("\n")


def test_fully_replicated(meshes):
    assert str(sharding_view(_array((8, 8), meshes["2x4"], P()))) == GOLDEN_REPLICATED.rstrip("\n")


def test_partially_replicated(meshes):
    assert str(sharding_view(_array((8, 8), meshes["2x4"], P("x")))) == GOLDEN_PARTIAL.rstrip("\n")


def test_mesh_itself(meshes):
    assert str(sharding_view(meshes["2x4"])) == GOLDEN_MESH.rstrip("\n")


def test_named_sharding_with_shape(meshes):
    sharding = NamedSharding(meshes["2x4"], P(None, "y"))
    assert str(sharding_view(sharding, shape=(4, 8))) == GOLDEN_NAMED.rstrip("\n")


def test_replicated_group_that_is_not_a_range(meshes):
    view = sharding_view(_array((8, 8), meshes["2x4"], P("y")))
    assert "replicated ×2: 0,4" in str(view)
    strided = jax.make_mesh((4, 2), ("p", "q"))
    assert "replicated ×4: 0,2,4,6" in str(sharding_view(_array((4,), strided, P("q"))))


def test_shapeless_named_sharding_draws_one_block_per_mesh_position(meshes):
    text = str(sharding_view(NamedSharding(meshes["2x4"], P("x"))))
    assert text.splitlines()[0].startswith("NamedSharding · mesh x=2 × y=4 · P('x')")
    assert "[0]  replicated ×4: 0–3" in text and "[1]  replicated ×4: 4–7" in text


def test_bad_inputs_say_what_is_expected(meshes):
    with pytest.raises(TypeError, match="jax.Array, a Sharding"):
        sharding_view(np.zeros(3))
    with pytest.raises(TypeError, match="inspect_sharding"):
        jax.jit(lambda a: sharding_view(a))(jnp.zeros(3))


def test_rich_rendering_matches_the_text_and_colours_cells(meshes):
    from rich.console import Console

    view = sharding_view(_array((8, 8), meshes["2x4"], P("x", "y")))
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=120, color_system="truecolor").print(view)
    coloured = buffer.getvalue()
    assert "\x1b[" in coloured and "48;2;" in coloured  # truecolor backgrounds
    plain = io.StringIO()
    Console(file=plain, force_terminal=False, width=120).print(view)
    assert _lines(plain.getvalue()) == _lines(str(view))


# -- HTML -------------------------------------------------------------------------------


def test_html_has_a_legend_hover_details_and_theme_colours(meshes):
    html = sharding_view(_array((8, 8), meshes["2x4"], P("x")))._repr_html_()
    assert html.count('class="jxs-sw"') == 2  # one legend swatch per shard
    assert "replicated ×4: 0–3" in html and "replicated ×4: 4–7" in html
    assert 'title="[0:4, :]  shape [4, 8]\nreplicated ×4: 0–3"' in html  # hover details
    assert "var(--jp-content-font-color1" in html and "var(--jp-border-color1" in html
    assert "matplotlib" not in html


def test_html_escapes_everything(meshes):
    devices = np.array(jax.devices()[:8]).reshape(2, 4)
    mesh = jax.sharding.Mesh(devices, ("<script>alert(1)</script>", 'y"&'))
    view = sharding_view(_array((8, 8), mesh, P("<script>alert(1)</script>", 'y"&')))
    html = view._repr_html_()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'y"&' not in html and "y&#34;&amp;" in html
    assert "<script>" not in sharding_view(mesh)._repr_html_()


def test_colours_are_deterministic(meshes):
    a = sharding_view(_array((8, 8), meshes["2x4"], P("x", "y")))._repr_html_()
    b = sharding_view(_array((8, 8), meshes["2x4"], P("x", "y")))._repr_html_()
    assert a == b


# -- large and multi-process layouts (from a device -> index map) ------------------------

Device = collections.namedtuple("Device", "id process_index platform")


def test_512_columns_fold_with_a_count_and_device_ranges():
    indices = {Device(i, 0, "tpu"): (slice(2 * i, 2 * i + 2),) for i in range(512)}
    layout = layout_from_indices(indices, (1024,), title="float32[1024]", sharding_name="NamedSharding")
    view = ShardingView(layout)
    text = str(view)
    assert max(len(line) for line in text.splitlines()) < 120
    assert "×505" in text and "505 columns folded" in text and "devices 6–510" in text
    assert "512 shards, one device each (too many to list)" in text
    html = view._repr_html_()
    assert html.count('class="jxs-cell"') == 31 and "×481" in html


def test_several_processes_are_shown():
    indices = {Device(i, i // 4, "tpu"): (slice(i, i + 1),) for i in range(8)}
    layout = layout_from_indices(indices, (8,), title="float32[8]", sharding_name="NamedSharding")
    text = str(ShardingView(layout))
    assert "2 processes" in text.splitlines()[0]
    assert "0 p0" in text and "7 p1" in text
    assert "process 1" in ShardingView(layout)._repr_html_()


def test_compress_ids():
    assert compress_ids(range(64)) == "0–63"
    assert compress_ids([0, 2, 4, 6]) == "0,2,4,6"
    assert compress_ids([0, 1, 2, 3, 8, 9, 10, 11]) == "0–3,8–11"
    assert compress_ids([0, 1]) == "0,1"
    assert compress_ids(range(0, 40, 2)) == "0,2,4,… (20)"


# -- visualize_sharding and inspect_sharding -----------------------------------------------


def test_visualize_sharding_prints_and_returns_none(meshes, capsys):
    x = _array((8, 8), meshes["2x4"], P("x", "y"))
    assert jaxdbg.visualize_sharding(x) is None
    assert _lines(capsys.readouterr().out) == _lines(GOLDEN_2D)


def test_inspect_sharding_in_jit_reports_at_compile_and_on_cached_calls(meshes, capsys):
    x = _array((8, 8), meshes["2x4"], P("x", "y"))

    @jax.jit
    def f(a):
        return jaxdbg.inspect_sharding(a * 2) + 1

    first = f(x)
    first.block_until_ready()
    out1 = capsys.readouterr().out
    f(x).block_until_ready()
    out2 = capsys.readouterr().out
    expected = _lines(GOLDEN_2D)
    assert _lines(out1) == expected  # at compile time, once (not again for the first run)
    assert _lines(out2) == expected  # JAX's own function says nothing on a cached call
    np.testing.assert_allclose(first, 1.0)


def test_inspect_sharding_callback_gets_the_sharding_on_every_call(meshes):
    x = _array((8, 8), meshes["2x4"], P("x", None))
    seen = []

    @jax.jit
    def f(a):
        return jaxdbg.inspect_sharding(a, callback=seen.append) * 3

    for _ in range(3):
        f(x).block_until_ready()
    assert len(seen) == 3
    assert all(s.is_equivalent_to(x.sharding, 2) for s in seen)


def test_routed_jax_functions_and_restore(meshes, capsys):
    jax_visualize, jax_inspect = jax.debug.visualize_array_sharding, jax.debug.inspect_array_sharding
    x = _array((4, 6, 8), meshes["2x2x2"], P("a", "b", "c"))
    sharding_hooks.install()
    try:
        jax.debug.visualize_array_sharding(x, use_color=False)  # 3-D: JAX's own would raise
        assert _lines(capsys.readouterr().out) == _lines(GOLDEN_3D)
        seen = []

        @jax.jit
        def f(a):
            jax.debug.inspect_array_sharding(a, callback=seen.append)
            return a + 1

        f(x).block_until_ready()
        f(x).block_until_ready()
        assert len(seen) == 2
    finally:
        sharding_hooks.uninstall()
    assert jax.debug.visualize_array_sharding is jax_visualize
    assert jax.debug.inspect_array_sharding is jax_inspect
    assert not sharding_hooks.is_installed()


# -- the `sharding EXPR` Session command ---------------------------------------------------


def _session(**local_values):
    from jaxdbg.engine.frames import Frame

    source = ["x = 1\n"]
    frame = Frame("<cell>", 1, "f", dict(local_values), {"P": P}, source, 1)
    return jaxdbg.Session([frame])


def test_sharding_command_gives_the_view(meshes):
    x = _array((8, 8), meshes["2x4"], P("x", "y"))
    session = _session(x=x, mesh=meshes["2x4"], s=NamedSharding(meshes["2x4"], P(None, "y")))
    out = session.execute("sharding x")
    assert out.kind is jaxdbg.OutputKind.SHARDING
    assert isinstance(out.data, ShardingView) and out.text == GOLDEN_2D.rstrip("\n")
    assert session.execute("sharding mesh").text == GOLDEN_MESH.rstrip("\n")
    assert session.execute("sharding s, (4, 8)").text == GOLDEN_NAMED.rstrip("\n")


def test_sharding_command_errors_keep_the_session_going(meshes):
    session = _session(n=3, x=_array((8,), meshes["8"], P("d")))
    assert session.execute("sharding").text.startswith("*** sharding needs an expression")
    assert session.execute("sharding n").text == "*** n is a int, not a jax.Array, a Sharding or a Mesh"
    assert session.execute("sharding missing").is_error
    assert not session.finished
    assert session.execute("sharding x").kind is jaxdbg.OutputKind.SHARDING


def test_terminal_backend_draws_the_command_with_rich(meshes):
    from rich.console import Console

    from jaxdbg.frontends import cli

    session = _session(x=_array((8, 8), meshes["2x4"], P("x", "y")))
    buffer = io.StringIO()
    cli.render(
        Console(file=buffer, force_terminal=True, color_system="truecolor", width=120), session.execute("sharding x")
    )
    assert "48;2;" in buffer.getvalue()


def test_sharding_command_at_a_real_stop(meshes):
    from support.transcript import Transcript

    t = Transcript("sharding a", "sharding a.sharding, (8, 8)", "c")
    x = _array((8, 8), meshes["2x4"], P("x", "y"))

    def step(a):
        jaxdbg.breakpoint(**t.options)
        return a

    step(x)
    assert t.answers("sharding a") == [GOLDEN_2D.rstrip("\n")]
    assert t.answers("sharding a.sharding, (8, 8)")[0].splitlines()[0].startswith("shape [8,8] · NamedSharding")
