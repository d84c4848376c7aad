"""The panel's array view without a kernel: the ``picture`` and ``view`` messages a
real stop answers, with their binary buffers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxdbg
from jaxdbg_widgets.panel import array_view
from jaxdbg_widgets.panel.panel import DebuggerPanel

_script: dict = {}


def _capture_backend(session, **_):
    p = DebuggerPanel(session)
    _script["fn"](p)
    if not session.finished:
        p.send({"type": "run", "id": "t:1", "line": "continue", "typed": False})


jaxdbg.register_debugger("array-view-test", _capture_backend, priority=-1000)


def stop_with(script):
    _script["fn"] = script

    @jax.jit
    def f(x):
        grid = jnp.log(x)  # NaN where x < 0, -inf where x == 0
        cube = jnp.arange(2 * 3 * 4, dtype=jnp.int32).reshape(2, 3, 4)
        tree = {"w": x.astype(jnp.bfloat16), "mask": x > 0}
        jaxdbg.breakpoint(backend="array-view-test")
        return grid, cube, tree

    jax.block_until_ready(f(jnp.array([[-1.0, 0.0, 1.0], [2.0, 3.0, 4.0]])))


def capture(p):
    box: list = []
    p.widget.send = lambda content, buffers=None: box.append((content, buffers or []))
    return box


def test_a_shown_rows_picture_comes_as_codes_in_a_buffer(monkeypatch):
    from jaxdbg.engine.values import array_picture

    made: list = []
    drawn = array_picture.picture
    monkeypatch.setattr(array_picture, "picture", lambda *a, **k: made.append(1) or drawn(*a, **k))

    def script(p):
        assert made == []  # no picture is made before the browser asks for one
        rows = {r["name"]: r for r in p.widget.locals_page["rows"]}
        assert rows["grid"]["picture"] and rows["cube"]["picture"] and not rows["tree"]["picture"]
        box = capture(p)
        p.send({"type": "picture", "frame": 0, "path": ["grid"]})
        ((content, buffers),) = box
        assert content["type"] == "picture" and content["picture"]["rows"] == 2
        codes = np.frombuffer(buffers[0], np.uint8).reshape(2, 3)
        assert codes[0, 0] == 252 and codes[0, 1] == 254  # NaN, -Inf
        assert codes[0, 2] == 255  # log(1) == 0: zero
        assert codes[1, 2] == 247  # the high end of the ramp
        seen.append(True)

    seen: list = []
    stop_with(script)
    assert seen


def test_the_large_view_sends_values_and_indices_and_follows_the_slider():
    def script(p):
        box = capture(p)
        p.send({"type": "view", "frame": 0, "path": ["cube"], "axes": None, "indices": None})
        p.send({"type": "view", "frame": 0, "path": ["cube"], "axes": [0, 2], "indices": {"1": 2}})
        (first, b1), (second, b2) = box
        assert first["picture"]["index"] == [0, None, None] and first["error"] == ""
        assert "min=0 max=23" in first["stats"]  # exact, over the whole array
        values = np.frombuffer(b1[1], first["picture"]["values"]).reshape(3, 4)
        assert values.tolist() == np.arange(12).reshape(3, 4).tolist()
        assert second["picture"]["index"] == [None, 2, None]
        values = np.frombuffer(b2[1], second["picture"]["values"]).reshape(2, 4)
        assert values.tolist() == np.arange(24).reshape(2, 3, 4)[:, 2, :].tolist()
        assert np.frombuffer(b2[2], np.int32).tolist() == [0, 1]
        # A bad slice is said in the view, and the stop goes on.
        p.send({"type": "view", "frame": 0, "path": ["cube"], "axes": [0, 0], "indices": None})
        assert "two different axes" in box[-1][0]["error"]
        p.send({"type": "view", "frame": 0, "path": ["cube"], "axes": None, "indices": None, "sampling": "sideways"})
        assert "sampling is one of ['strided', 'edges']" in box[-1][0]["error"]
        seen.append(True)

    seen: list = []
    stop_with(script)
    assert seen


def test_arrays_inside_pytrees_get_pictures_by_path():
    def script(p):
        box = capture(p)
        p.send({"type": "expand", "frame": 0, "path": ["tree"]})
        children = box[-1][0]["rows"]
        assert [c["picture"] for c in children] == [True, True]
        labels = [c["name"] for c in children]
        p.send({"type": "view", "frame": 0, "path": ["tree", labels.index("'w'")], "axes": None, "indices": None})
        content, buffers = box[-1]
        assert content["picture"]["dtype"] == "bfloat16" and content["name"] == "'w'"
        assert content["picture"]["values"] == "float32"  # exact for bfloat16, half the bytes
        assert np.frombuffer(buffers[1], np.float32)[:3].tolist() == [-1.0, 0.0, 1.0]
        seen.append(True)

    seen: list = []
    stop_with(script)
    assert seen


def test_describe_is_json_sized_and_says_the_sampling():
    from jaxdbg.engine.values import array_picture

    pic = array_picture.picture(np.zeros((4096, 4096), np.float32))
    d = array_view.describe(pic)
    assert d["sampled"] and "512 of 4096 rows" in d["note"] and d["rows"] == 512


def test_the_static_summary_keeps_the_pictures_as_inline_images_with_a_text_twin():
    panels: list = []
    stop_with(lambda p: panels.append(p))
    display = panels[0].finished_display
    bundle = display._repr_mimebundle_()
    assert bundle["text/html"].count('src="data:image/png;base64,') == 3  # grid, cube and x
    text = bundle["text/plain"]
    assert "grid: float32[2,3]" in text and "nan=1" in text and "-inf=1" in text, text
    assert "cube: int32[2,3,4]  slice [0, :, :]" in text, text


def test_the_large_view_of_a_traced_local_in_a_sharded_jit_draws_the_compiled_shards():
    mesh = jax.make_mesh((2, 4), ("x", "y"), devices=jax.devices()[:8])
    spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x", "y"))
    answers: list = []

    def script(p):
        box = capture(p)
        p.send({"type": "view", "frame": 0, "path": ["hidden"], "axes": None, "indices": None})
        answers.append(box[-1][0])

    _script["fn"] = script

    @jax.jit
    def step(x):
        hidden = jnp.tanh(x)
        jaxdbg.breakpoint(backend="array-view-test")
        return hidden.sum()

    float(step(jax.device_put(jnp.ones((8, 16)), spec)))  # waits for the stop (dispatch is asynchronous)
    pic = answers[0]["picture"]
    assert pic["row_cuts"] == [4] and pic["col_cuts"] == [4, 8, 12], pic


def test_a_big_slice_in_the_large_view_is_sampled_as_the_browser_asks():
    from jaxdbg.engine.values import array_picture

    big = np.arange(2000.0)
    strided, _ = array_view.large_view(0, ["v"], "v", big)
    edges, buffers = array_view.large_view(0, ["v"], "v", big, sampling="edges")
    assert strided["picture"]["sampling"] == "strided" and edges["picture"]["sampling"] == "edges"
    kept = np.frombuffer(buffers[3], np.int32)
    half = array_picture.VIEW_SIDE // 2
    assert kept[:3].tolist() == [0, 1, 2] and kept[-1] == 1999 and kept[half] == 2000 - half


def test_show_typed_in_the_panel_logs_the_pictures_as_images():
    logged: list = []

    def script(p):
        p.send({"type": "run", "id": "t:2", "line": "show tree", "typed": True})
        logged.extend(p.widget.log)

    stop_with(script)
    entry = logged[-1]
    assert entry["html"].count("data:image/png;base64,") == 2 and not entry["error"], entry
