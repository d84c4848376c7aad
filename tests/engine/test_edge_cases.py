"""Edge cases a new user runs into at the prompt: odd dtypes, values that cannot show
themselves, and the ``sharding`` command agreeing with ``locals`` inside a program."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxdbg
from jaxdbg.engine import breakpoint_state
from jaxdbg.engine.values import array_statistics, summaries
from support.jax_setups import explicit_axes
from support.transcript import Transcript


def test_bfloat16_arrays_get_statistics_like_float32():
    row = summaries.summarize("w", jnp.array([1.0, 2.0, 3.0], jnp.bfloat16))
    assert row.stats is not None
    assert (row.stats.min, row.stats.max, row.stats.mean) == (1.0, 3.0, 2.0)
    assert row.describe().startswith("bfloat16[3] min=1 max=3 mean=2")


def test_a_scalar_row_shows_its_value_not_statistics():
    row = summaries.summarize("s", jnp.float32(3.5))
    assert row.describe() == "float32[] 3.5"


def test_statistics_of_an_array_with_nan_say_they_cover_finite_values():
    row = summaries.summarize("n", jnp.array([1.0, 3.0, np.nan, np.inf]))
    assert [text for text, _ in row.stat_parts()] == [
        "min=1 max=3 mean=2 of finite values",
        "nan=1",
        "inf=1",
        "(nan at [2], +inf at [3])",
    ]
    assert [text for text, _ in summaries.summarize("m", jnp.full(3, np.nan)).stat_parts()] == [
        "no finite values",
        "nan=3",
        "(nan at [0], nan at [1], nan at [2])",
    ]


def test_statistics_over_several_chunks_count_every_nan_and_inf(monkeypatch):
    """Arrays longer than one pass's chunk (NaN / Inf in different chunks, bfloat16,
    bool) get the statistics of the whole array."""
    monkeypatch.setattr(array_statistics, "STATS_CHUNK", 4)
    x = np.arange(11, dtype=np.float32)
    x[[1, 9]] = np.nan
    x[5] = np.inf
    s = summaries.array_stats(x)
    assert (s.min, s.max, s.nan_count, s.inf_count) == (0.0, 10.0, 2, 1)
    assert s.mean == pytest.approx(np.mean([0, 2, 3, 4, 6, 7, 8, 10]))
    b = summaries.array_stats(jnp.arange(10, dtype=jnp.bfloat16))
    assert (b.min, b.max, b.mean) == (0.0, 9.0, 4.5)
    flags = summaries.array_stats(np.arange(10) % 3 == 0)
    assert (flags.min, flags.max, flags.mean) == (0.0, 1.0, 0.4)


def test_the_one_pass_statistics_of_several_chunks_match_the_whole_array(monkeypatch):
    """min / max / mean taken chunk by chunk (C-, F-ordered and strided arrays,
    integers) equal numpy's over the whole array; a NaN or Inf in a later chunk only is
    still found and counted."""
    monkeypatch.setattr(array_statistics, "STATS_CHUNK", 4)
    grid = (np.arange(30, dtype=np.float32) * 1.5 - 7).reshape(5, 6)
    for x in (grid, np.asfortranarray(grid), grid[:, ::2], np.arange(-5, 12, dtype=np.int64)):
        s = summaries.array_stats(x)
        assert (s.min, s.max, s.nan_count, s.inf_count) == (float(x.min()), float(x.max()), 0, 0)
        assert s.mean == pytest.approx(float(x.mean(dtype=np.float64)))
    for bad, counts in ((np.nan, (1, 0)), (-np.inf, (0, 1))):
        late = np.arange(13, dtype=np.float32)
        late[11] = bad
        s = summaries.array_stats(late)
        assert (s.nan_count, s.inf_count) == counts and (s.min, s.max) == (0.0, 12.0)


def test_complex_statistics_over_several_chunks_hold_no_full_size_magnitudes(monkeypatch):
    """A complex array longer than one chunk: the complex mean and |x| min / max of the
    whole array, NaN / Inf counted in every chunk, and |x| taken one chunk at a time."""
    monkeypatch.setattr(array_statistics, "STATS_CHUNK", 4)
    z = (np.arange(11) + 1j * np.arange(11)[::-1]).astype(np.complex64)
    z[1], z[9], z[5] = complex(np.nan, 0), complex(0, np.nan), complex(np.inf, 1)
    finite = np.delete(z, [1, 5, 9])
    expected = (float(np.abs(finite).min()), float(np.abs(finite).max()), complex(finite.mean(dtype=np.complex128)))
    sizes = []
    real_abs = np.abs  # numpy's own: the patch below is numpy-wide while it lasts
    monkeypatch.setattr(np, "abs", lambda a, *k: sizes.append(np.size(a)) or real_abs(a, *k))
    s = summaries.array_stats(z)
    monkeypatch.setattr(np, "abs", real_abs)
    assert (s.nan_count, s.inf_count, s.magnitudes) == (2, 1, True)
    assert (s.min, s.max) == pytest.approx(expected[:2])
    assert s.mean == pytest.approx(expected[2])
    assert sizes and max(sizes) <= 4, sizes


def test_an_arrays_statistics_are_taken_once(monkeypatch):
    taken = []
    exact = array_statistics._exact_stats
    monkeypatch.setattr(array_statistics, "_exact_stats", lambda v: taken.append(v) or exact(v))
    x = jnp.arange(6.0)
    first = summaries.summarize("x", x).stats
    assert summaries.summarize("y", x).stats == first and len(taken) == 1
    summaries.summarize("z", jnp.arange(6.0))  # another value: its own statistics
    assert len(taken) == 2
    writable = np.arange(6.0)  # may change at the prompt: summarised afresh each time
    summaries.summarize("w", writable)
    writable[0] = 100.0
    assert summaries.summarize("w", writable).stats.max == 100.0 and len(taken) == 4


class _ReprRaises:
    def __repr__(self):
        raise RuntimeError("bad repr")


def test_sharding_of_a_value_whose_repr_raises_says_what_it_is():
    t = Transcript("sharding b", "c")

    def f(x):
        b = _ReprRaises()  # noqa: F841  (read by the debugger)
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.arange(3.0))
    assert t.answers("sharding b") == ["*** b is a _ReprRaises, not a jax.Array, a Sharding or a Mesh"]


def test_sharding_of_a_prng_key_array_is_laid_out():
    t = Transcript("sharding k", "c")

    def f(x):
        k = jax.random.key(0)  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.arange(3.0))
    answer = t.answers("sharding k")[0]
    assert not answer.startswith("***"), answer
    assert "key<fry>[]" in answer and "device 0" in answer


def test_sharding_with_a_shape_that_is_not_a_tuple_says_so():
    t = Transcript("sharding s, 3", "c")

    def f(x):
        s = NamedSharding(jax.make_mesh((8,), ("x",)), P("x"))  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.arange(3.0))
    assert t.answers("sharding s, 3") == [
        "*** the shape after the sharding must be a tuple of ints, such as (8, 8), not 3"
    ]


@pytest.mark.multidevice
def test_sharding_of_a_traced_local_in_a_sharded_jit_names_the_program_layout():
    mesh = jax.make_mesh((8,), ("x",), **explicit_axes(1))
    t = Transcript("whatis y", "sharding y", "c")

    @jax.jit
    def f(x):
        y = x + 1
        jaxdbg.breakpoint(**t.options)
        return y

    f(jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))).block_until_ready()
    assert t.answers("whatis y") == ["Array float32[16] sharding=P('x',) on mesh x=8"]
    answer = t.answers("sharding y")[0]
    # Not the layout of the copy gathered onto one device for the stop: the compiled one.
    assert "SingleDeviceSharding" not in answer
    header = answer.splitlines()[0]
    assert header.startswith("float32[16] · NamedSharding · mesh x=8 · P('x"), answer
    assert header.endswith("· as compiled"), answer


@pytest.mark.multidevice
def test_sharding_of_a_traced_local_under_pmap_names_the_stop_device():
    t = Transcript(*["sharding x", "c"] * 8)
    jax.pmap(lambda x: (jaxdbg.breakpoint(**t.options), x)[1])(jnp.arange(8.0)).block_until_ready()
    stops = t.stops()
    answers = t.answers("sharding x")
    assert len(answers) == len(stops) == 8
    for banner, answer in zip(stops, answers):
        device = re.search(r"device (\d)", banner).group(1)
        assert answer.startswith(f"x in the program: device {device} ("), answer


def test_repeated_list_without_source_keeps_saying_so():
    t = Transcript("l", "l", "c")
    namespace = {"jaxdbg": jaxdbg, "t": t}
    exec("def f(x):\n    jaxdbg.breakpoint(**t.options)\n    return x\n", namespace)
    jax.jit(namespace["f"])(1.0)
    assert t.answers("l") == ["> <string>:2 in f\n(source not available)"] * 2


def test_code_without_a_file_never_shows_another_codes_source(monkeypatch):
    """From Python 3.13 linecache holds a `python -c` command under "<string>", the name
    every exec'd source shares (pytest-xdist's workers start so): it is not f's source."""
    import linecache

    monkeypatch.setitem(
        linecache.cache, "<string>", (1, None, ["import sys;exec(eval(sys.stdin.readline()))\n"], "<string>")
    )
    t = Transcript("l", "c")
    namespace = {"jaxdbg": jaxdbg, "t": t}
    exec("def f(x):\n    jaxdbg.breakpoint(**t.options)\n    return x\n", namespace)
    jax.jit(namespace["f"])(1.0)
    assert t.answers("l") == ["> <string>:2 in f\n(source not available)"]


def test_a_bare_call_returning_none_prints_only_its_own_output(capsys):
    t = Transcript("print('hello from the prompt')", "p None", "c")

    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.arange(3.0))
    # What the command printed is its result (no "None" after it), at the prompt's stream.
    assert t.answers("print('hello from the prompt')") == ["hello from the prompt"]
    assert "hello from the prompt" not in capsys.readouterr().out
    assert t.answers("p None") == ["None"]


def test_frame_without_a_number_ca_with_a_word_and_a_repeated_number():
    t = Transcript("frame", "ca now", "disable 1 1", "enable 1", "c")

    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x

    try:
        f(jnp.arange(3.0))
    finally:
        breakpoint_state.reset()  # numbers are per process: leave every breakpoint enabled
    assert t.answers("frame")[0].startswith("*** frame needs a frame number, 0 (innermost) to ")
    assert t.answers("ca now") == ["*** ca takes no argument, not 'now'"]  # and the stop goes on
    assert len(t.answers("disable 1 1")[0].splitlines()) == 1
    assert t.answers("c") == ["Continuing."]


def test_an_unavailable_local_says_why_in_full():
    from jaxdbg.engine.frames import OUTSIDE_BODY

    row = summaries.summarize("xs", OUTSIDE_BODY)
    assert row.describe() == repr(OUTSIDE_BODY)
    assert "..." not in row.describe()


def test_complex_arrays_show_a_complex_mean_and_labelled_magnitudes():
    z = np.exp(1j * np.linspace(0.0, 5.0, 64)).astype(np.complex64)  # |z| = 1, mean is not
    expected = complex(z.mean(dtype=np.complex128))
    row = summaries.summarize("z", jnp.asarray(z))
    text = " ".join(part for part, _ in row.stat_parts())
    assert f"mean={expected.real:.4g}{expected.imag:+.4g}j" in text, text
    assert "|x| min=1 max=1" in text, text
    assert "min=" not in text.replace("|x| min=", ""), text  # no unlabelled min of a complex array


def test_complex_statistics_with_nan_cover_the_finite_values():
    row = summaries.summarize("z", jnp.array([1 + 1j, 3 - 1j, np.nan], jnp.complex64))
    assert [part for part, _ in row.stat_parts()] == [
        "mean=2+0j |x| min=1.414 max=3.162 of finite values",
        "nan=1",
        "(nan at [2])",
    ]


def test_float32_scalars_show_as_numpy_prints_their_dtype():
    value = np.float32(968.4093)
    assert summaries.summarize("s", jnp.float32(value)).describe() == "float32[] 968.4093"
    assert summaries.summarize("s", value).describe() == "float32[] 968.4093"
    assert summaries.scalar_text(jnp.float32(value)) == "968.4093"
    assert summaries.scalar_text(jnp.bfloat16(1.5)) == "1.5"
    assert summaries.scalar_text(jnp.array(True)) == "True"


def test_whatis_of_a_container_gives_its_length_and_element_types():
    t = Transcript("whatis xs", "whatis d", "whatis long", "whatis same", "whatis ()", "c")

    def f(x):
        xs = [1, x, "s"]  # noqa: F841
        d = {"w": x, "n": 2}  # noqa: F841
        long = [1, "a"] * 20  # noqa: F841
        same = [x] * 50  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.ones(4))  # eager: the dict keeps its order (a jit stop's pytrees come back key-sorted)
    assert t.answers("whatis xs") == ["list of 3: int, float32[4], str"]
    assert t.answers("whatis d") == ["dict of 2: 'w': float32[4], 'n': int"]
    assert t.answers("whatis long") == ["list of 40: int, str, int, str, int, str, ... (34 more)"]
    assert t.answers("whatis same") == ["list of 50, each float32[4]"]
    assert t.answers("whatis ()") == ["tuple of 0"]


def _auto_mesh_2x4():
    axis_type = getattr(jax.sharding, "AxisType", None)  # automatic axes: the compiler picks
    return jax.make_mesh(
        (2, 4), ("data", "model"), **({} if axis_type is None else {"axis_types": (axis_type.Auto,) * 2})
    )


@pytest.mark.multidevice
def test_sharding_of_a_traced_local_in_a_sharded_jit_draws_the_layout_as_compiled():
    mesh = _auto_mesh_2x4()
    t = Transcript("whatis y", "sharding y", "sharding w", "c")

    @jax.jit
    def f(x):
        y = x * 2
        w = y.sum(axis=1)
        jaxdbg.breakpoint(**t.options)
        return w

    f(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))).block_until_ready()
    assert t.answers("whatis y") == ["Array float32[8,8] sharding=auto on mesh data=2, model=4"]
    y_layout, w_layout = t.answers("sharding y")[0], t.answers("sharding w")[0]
    header = y_layout.splitlines()[0]
    assert "float32[8,8]" in header and "as compiled" in header and "data=2 × model=4" in header, y_layout
    assert "P('data', 'model')" in header and "8 cpu devices" in header, y_layout
    assert "SingleDeviceSharding" not in y_layout and "no layout to draw" not in y_layout
    assert "float32[8]" in w_layout.splitlines()[0] and "as compiled" in w_layout, w_layout


@pytest.mark.multidevice
def test_a_sharded_jit_stop_returns_its_values_and_the_panel_output_is_a_layout():
    mesh = _auto_mesh_2x4()
    seen = []

    def backend(session, **_):
        seen.append(session.execute("sharding y"))
        session.execute("c")

    jaxdbg.register_debugger("as-compiled-test", backend, -1000)
    try:

        @jax.jit
        def f(x):
            y = jnp.sin(x)
            jaxdbg.breakpoint(backend="as-compiled-test")
            return y + 1

        x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("data", "model")))
        out = f(x)
        assert np.allclose(np.asarray(out), np.sin(np.arange(64.0).reshape(8, 8)) + 1, atol=1e-5)
    finally:
        jaxdbg.unregister_debugger("as-compiled-test")
    (output,) = seen
    assert output.kind == "sharding", output.text
    assert output.data.layout.device_count == 8 and output.data.layout.note == "as compiled"
    assert "jaxdbg-sharding" in output.data._repr_html_()


@pytest.mark.multidevice
def test_sharding_of_a_traced_local_under_shard_map_names_the_stop_device():
    mesh = jax.make_mesh((4, 2), ("rows", "cols"))
    t = Transcript(*["sharding x", "c"] * 8)
    spec = P("rows", "cols")
    f = jax.jit(
        jax.shard_map(lambda x: (jaxdbg.breakpoint(**t.options), x)[1], mesh=mesh, in_specs=spec, out_specs=spec)
    )
    f(jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, spec))).block_until_ready()
    for banner, answer in zip(t.stops(), t.answers("sharding x")):
        device = re.search(r"device (\d)", banner).group(1)
        assert answer.startswith(f"x in the program: device {device} ("), answer
    assert len(t.stops()) == 8


@pytest.mark.multidevice
def test_recording_compiled_shardings_keeps_grad_and_vmap_in_a_sharded_jit_working():
    mesh = _auto_mesh_2x4()
    # One transcript per breakpoint: the two are independent host callbacks, whose order
    # XLA chooses.
    t, rows = Transcript("sharding y", "c"), Transcript(*["sharding r", "c"] * 2)

    def loss(w, x):
        y = jnp.tanh(x * w)
        jaxdbg.breakpoint(**t.options)
        return jnp.sum(y)

    def row(r):
        jaxdbg.breakpoint(**rows.options)
        return r.sum()

    @jax.jit
    def step(w, x):
        return jax.grad(loss)(w, x), jax.vmap(row)(x[:2])

    x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))
    grad, sums = step(0.5, x)
    assert float(grad) == pytest.approx(64 * (1 - np.tanh(0.5) ** 2), rel=1e-5)
    assert np.asarray(sums).tolist() == [8.0, 8.0]
    assert "as compiled" in t.answers("sharding y")[0]
    assert len(rows.answers("sharding r")) == 2
    for answer in rows.answers("sharding r"):  # a batch element: the compiler laid out the batch
        assert not answer.startswith("***"), answer
