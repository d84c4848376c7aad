"""save PATH / jaxdbg.open_stop(PATH): every dtype and a pytree round trip; bad files refused."""

import json
import subprocess
import sys
import zipfile

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, saved_stops, watches
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(watches, "LIVE", watches.WatchBook())
    breakpoint_state.reset()
    yield
    breakpoint_state.reset()


class Opaque:
    def __repr__(self):
        return "Opaque(7)"


def _stop_and_save(path, steps=3):
    t = Transcript("watch loss", "c", f"save {path}", "ca")

    def body(carry, i):
        loss = carry * 0.5 + i
        f32 = jnp.linspace(0, 1, 6, dtype=jnp.float32).reshape(2, 3) * i
        i32 = jnp.arange(4, dtype=jnp.int32)
        flags = jnp.array([True, False, True])
        bf16 = jnp.array([1.5, -2.25, jnp.inf], dtype=jnp.bfloat16)
        tree = {"w": f32, "layers": [i32, (flags, bf16)], "n": 3}  # noqa: F841 (locals to save)
        note, opaque, nothing = "hi", Opaque(), None  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return loss, loss

    jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(float(steps)))[0])()
    return t


def test_save_then_open_keeps_frames_source_locals_of_every_dtype_and_watches(tmp_path):
    path = tmp_path / "stop.npz"
    t = _stop_and_save(path)
    assert f"Saved the stop to {path}" in t.text
    saved = saved_stops.load(str(path))
    frame = saved.frames[0]
    assert frame.function == "body" and "jaxdbg.breakpoint" in frame.line()
    values = frame.locals
    assert values["f32"].dtype == np.float32 and values["f32"][1, 2] == pytest.approx(1.0)
    assert values["loss"].shape == () and float(values["loss"]) == 1.25  # a 0-d array stays 0-d
    assert values["i32"].dtype == np.int32 and values["i32"].tolist() == [0, 1, 2, 3]
    assert values["flags"].dtype == np.bool_ and values["flags"].tolist() == [True, False, True]
    assert values["bf16"].dtype == ml_dtypes.bfloat16
    assert values["bf16"].astype(np.float32).tolist() == [1.5, -2.25, np.inf]
    tree = values["tree"]
    assert tree["n"] == 3 and tree["layers"][1][1].dtype == ml_dtypes.bfloat16
    assert isinstance(tree["layers"][1], tuple) and tree["w"].shape == (2, 3)
    assert values["note"] == "hi" and values["nothing"] is None and repr(values["opaque"]) == "Opaque(7)"
    assert saved.info.hit is not None and saved.info.note == "reopened from stop.npz"
    (watch,) = saved.watches
    assert watch.expression == "loss" and [v.number for v in watch.values] == [0.5, 1.25]

    t2 = Transcript("p f32.sum()", "pp tree['layers'][0]", "watch", "locals", "up", "where", "c")
    jaxdbg.open_stop(str(path), **t2.options)
    assert "Stopped at" in t2.stops()[0] and "reopened from stop.npz" in t2.stops()[0]
    assert t2.answers("p f32.sum()") == ["Array(3., dtype=float32)"]  # arrays reopen as JAX arrays
    assert "Array([0, 1, 2, 3], dtype=int32)" in t2.answers("pp tree['layers'][0]")[0]
    assert "1: loss = 1.25" in t2.answers("watch")[0]
    assert "bfloat16[3]" in t2.answers("locals")[0] and "Opaque(7)" in t2.answers("locals")[0]
    assert ">  1  <lambda>" in t2.answers("where")[0]
    t3 = Transcript("q")  # nothing runs under it: Quit only closes it
    jaxdbg.open_stop(str(path), **t3.options)
    assert t3.answers("q") == ["Quitting: a reopened stop runs nothing."]


def test_a_reopened_stop_runs_in_a_process_without_the_program(tmp_path):
    path = tmp_path / "stop"
    _stop_and_save(path)  # ".npz" is added
    script = "import jaxdbg; jaxdbg.open_stop(%r, backend='cli')" % f"{path}.npz"
    done = subprocess.run(
        [sys.executable, "-c", script],
        input="p bf16\np jnp.mean(f32)\nc\n",
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Array([1.5, -2.25, inf], dtype=bfloat16)" in done.stdout
    assert "Array(0.5" in done.stdout and "jaxdbg.breakpoint(" in done.stdout  # its saved source


def _env():
    import os

    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(jaxdbg.__file__)), env.get("PYTHONPATH", "")])
    return env


def _rewrite_metadata(src, dst, change):
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["metadata"].tobytes())
    change(meta)
    arrays["metadata"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(dst, **arrays)


def test_a_newer_version_a_truncated_or_corrupt_file_gets_a_clear_error(tmp_path):
    good = tmp_path / "good.npz"
    _stop_and_save(good)
    newer = tmp_path / "newer.npz"
    _rewrite_metadata(good, newer, lambda m: m.update(version=saved_stops.VERSION + 1))
    with pytest.raises(jaxdbg.SavedStopError, match="format version 2; this jaxdbg reads version 1"):
        jaxdbg.open_stop(str(newer), backend="cli")

    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(jaxdbg.SavedStopError, match="corrupt or truncated"):
        saved_stops.load(str(truncated))

    bad_dtype = tmp_path / "dtype.npz"
    _rewrite_metadata(good, bad_dtype, lambda m: m["frames"][0]["locals"]["f32"].update(dtype="object"))
    with pytest.raises(jaxdbg.SavedStopError, match="unknown dtype 'object'"):
        saved_stops.load(str(bad_dtype))

    wrong_size = tmp_path / "size.npz"
    _rewrite_metadata(good, wrong_size, lambda m: m["frames"][0]["locals"]["f32"].update(shape=[9, 9]))
    with pytest.raises(jaxdbg.SavedStopError, match="wrong size"):
        saved_stops.load(str(wrong_size))

    not_ours = tmp_path / "other.npz"
    np.savez(not_ours, x=np.ones(3))
    with pytest.raises(jaxdbg.SavedStopError, match="no metadata"):
        saved_stops.load(str(not_ours))
    with pytest.raises(jaxdbg.SavedStopError, match="could not read"):
        saved_stops.load(str(tmp_path / "missing.npz"))


def test_loading_never_unpickles(tmp_path):
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, metadata=np.frombuffer(b"{}", dtype=np.uint8), array_0=np.array([Opaque()], dtype=object))
    with pytest.raises(jaxdbg.SavedStopError, match="corrupt or truncated"):
        saved_stops.load(str(pickled))  # np.load refuses the object array: no pickle runs
    with zipfile.ZipFile(pickled) as z:
        assert "array_0.npy" in z.namelist()


def test_save_errors_are_reported_and_the_stop_goes_on(tmp_path):
    t = Transcript("save", f"save {tmp_path}/no/such/dir/x.npz", "c")
    jaxdbg.breakpoint(**t.options)
    assert "save needs a file name" in t.answers("save")[0]
    assert "*** could not write" in t.text


def test_a_transposed_array_and_a_scalar_keep_their_values(tmp_path):
    path = tmp_path / "eager.npz"
    t = Transcript(f"save {path}", "c")
    transposed = np.arange(6, dtype=np.int64).reshape(2, 3).T  # noqa: F841 (a local to save)
    scalar = np.float64(2.5)  # noqa: F841
    jaxdbg.breakpoint(**t.options)
    saved = saved_stops.load(str(path)).frames[0].locals
    assert saved["transposed"].tolist() == [[0, 3], [1, 4], [2, 5]]
    assert saved["scalar"].shape == () and saved["scalar"] == 2.5


def test_prng_keys_reopen_as_keys_of_their_implementation(tmp_path):
    """A typed key (``jax.random.key``, an NNX ``RngKey``'s value) is saved as its key
    data and reopens as a key again: ``jax.random.normal(key, ...)`` works on it."""
    path = tmp_path / "keys.npz"
    t = Transcript(f"save {path}", "c")

    @jax.jit
    def f(key):
        keys = jax.random.split(key, 3)
        jaxdbg.breakpoint(**t.options)
        return keys

    keys = f(jax.random.key(7))
    saved = saved_stops.load(str(path)).frames[0].locals
    assert jax.dtypes.issubdtype(saved["keys"].dtype, jax.dtypes.prng_key)
    assert jax.random.key_impl(saved["keys"]) == jax.random.key_impl(keys)
    np.testing.assert_array_equal(jax.random.key_data(saved["keys"]), jax.random.key_data(keys))
    t2 = Transcript("p jax.random.normal(key, (2,)).shape", "locals", "c")
    jaxdbg.open_stop(str(path), **t2.options)
    assert t2.answers("p jax.random.normal(key, (2,)).shape") == ["(2,)"]
    assert "key<fry>[3]" in t2.answers("locals")[0]


def test_an_nnx_modules_rng_key_reopens_as_a_key(tmp_path):
    nnx = pytest.importorskip("flax.nnx")
    path = tmp_path / "dropout.npz"
    t = Transcript(f"save {path}", "c")
    dropout = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=3))
    jaxdbg.breakpoint(**t.options)
    reopened = saved_stops.load(str(path)).frames[0].locals["dropout"]
    key = reopened.rngs.key
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(jax.random.key_data(key), jax.random.key_data(dropout.rngs.key[...]))
