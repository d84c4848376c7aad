"""%jaxdbg nans on / infs on: a NaN (an Inf) opens a stop at the line and device that
made it, under shard_map, pmap, a sharded jit, a plain jit and in a gradient's backward
pass (real JAX on 8 host CPU devices, answered by scripted terminal commands)."""

from __future__ import annotations

import io
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdbg.capture import nan_location, nan_watch
from jaxdbg.frontends import scripted
from jaxdbg.runtime import jax_routes
from support.jax_setups import devices_or_skip, shard_map


@pytest.fixture
def watch(monkeypatch):
    """The watch on, its stops answered by ``commands`` into ``out``."""
    monkeypatch.delenv(scripted.ENV_VAR, raising=False)
    scripted.reset()
    out = io.StringIO()

    def on(commands: str, infs: bool = False) -> io.StringIO:
        nan_watch.set_enabled(True, backend="cli", infs=infs, stdout=out, stdin=io.StringIO(""), commands=commands)
        return out

    yield on
    nan_watch.set_enabled(False, infs=True)
    nan_watch.set_enabled(False)
    scripted.reset()


def _banner(text: str) -> str:
    found = re.findall(r"^Stopped at .*$", text, re.M)
    assert len(found) == 1, text
    return found[0]


def _root(block):
    shifted = block - 10.0
    return jnp.sqrt(shifted)  # NaN where block < 10


def test_a_nan_under_shard_map_stops_at_its_line_on_the_device_that_made_it(watch):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))
    out = watch("where; p shifted; up; p block; c")

    def shard_fn(block):
        return jax.lax.psum(_root(block), "d")  # every device gets the NaN through psum

    f = jax.jit(shard_map()(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P()))
    x = (jnp.arange(16.0) + 10).at[11].set(-1.0)  # only device 5's block has a value below 10
    with pytest.raises(FloatingPointError):
        f(x)
    text = out.getvalue()
    line = _root.__code__.co_firstlineno + 2
    assert _banner(text) == (f"Stopped at {__file__}:{line} in _root (device 5; NaN made by sqrt)")
    assert "return jnp.sqrt(shifted)" in text
    # The traced lines' values, as JAX's re-run computed them on device 5 (x[10:12]).
    assert "(jaxdbg) p shifted\nArray([ 10., -11.], dtype=float32)" in text
    assert "(jaxdbg) p block\nArray([20., -1.], dtype=float32)" in text


def test_a_nan_under_pmap_names_each_device_that_made_one(watch):
    devices_or_skip(8)
    out = watch("c")

    def step(block):
        return jax.lax.pmean(_root(block), "i")

    x = (jnp.arange(16.0) + 10).at[1].set(3.0).at[13].set(-2.0)  # devices 0 and 6
    with pytest.raises(FloatingPointError):
        jax.pmap(step, axis_name="i")(x.reshape(8, 2))
    assert _banner(out.getvalue()).endswith("in _root (device 0; NaN made by sqrt; also on device 6)")


def _safe_root(w):
    return jnp.where(w > 0, jnp.sqrt(w), 0.0)  # forward finite; its gradient at 0 is NaN


def _squashed(w):
    return jnp.tanh(1e20 * w) * 1e20  # forward finite; its gradient at 0 is 1e40: Inf


@pytest.mark.parametrize("value,part,infs", [("NaN", _safe_root, False), ("Inf", _squashed, True)])
def test_a_nan_or_inf_of_the_backward_pass_names_the_forward_line(watch, value, part, infs):
    out = watch("where; c", infs=infs)

    def loss(w):
        return jnp.sum(part(w))

    with pytest.raises(FloatingPointError):
        jax.jit(jax.grad(loss))(jnp.array([0.0, 4.0]))
    line = part.__code__.co_firstlineno + 1
    assert _banner(out.getvalue()) == (
        f"Stopped at {__file__}:{line} in {part.__name__} "
        f"({value} made by mul in the backward pass (the gradient) of this line)"
    )


@pytest.mark.parametrize("value,part,infs", [("NaN", _safe_root, False), ("Inf", _squashed, True)])
def test_the_backward_pass_of_a_shard_map_names_the_forward_line_and_device(watch, value, part, infs):
    # The gradient's program holds two shard_maps (the forward one and its transpose),
    # which checkify cannot check as one program.
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))
    out = watch("where; c", infs=infs)

    def loss(w):
        return shard_map()(part, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(w).sum()

    w = (jnp.arange(16.0) + 1).at[11].set(0.0)  # only device 5's block holds a 0
    with pytest.raises(FloatingPointError) as raised:
        jax.jit(jax.grad(loss))(w)
    line = part.__code__.co_firstlineno + 1
    assert _banner(out.getvalue()) == (
        f"Stopped at {__file__}:{line} in {part.__name__} "
        f"(device 5; {value} made by mul in the backward pass (the gradient) of this line)"
    )
    assert getattr(raised.value, nan_watch.SERVED).devices == (5,)


def _sine_root(w):
    # lax's own primitives: jnp's are jitted functions, whose cached programs JAX's
    # re-run evaluates without coming back to this line.
    wave = jax.lax.sin(w)
    return jax.lax.sqrt(wave)  # finite at 0; its derivative there, 0.5 / sqrt(0), is Inf


def test_an_inf_made_while_a_gradient_linearizes_is_named_the_lines_derivative(watch):
    out = watch("where; p wave; c", infs=True)

    def loss(w):
        return jnp.sum(_sine_root(w))

    with pytest.raises(FloatingPointError, match=r"\(inf\)") as raised:
        jax.jit(jax.grad(loss))(jnp.array([0.0, 1.0]))
    line = _sine_root.__code__.co_firstlineno + 4
    text = out.getvalue()
    assert _banner(text) == (
        f"Stopped at {__file__}:{line} in _sine_root (Inf made by div in the derivative (the gradient) of this line)"
    )
    origin = getattr(raised.value, nan_watch.SERVED)
    assert origin.derivative and not origin.backward
    # The forward pass's value at the line, from JAX's re-run (the gradient's primal).
    assert "(jaxdbg) p wave\nArray([0.        , 0.84147096], dtype=float32)" in text


def test_a_lines_derivative_under_shard_map_names_the_device():
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))

    def loss(w):
        return shard_map()(_sine_root, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(w).sum()

    w = (jnp.arange(16.0) + 1).at[11].set(0.0)  # sin(0) = 0 on device 5 only
    origin = nan_location.locate(jax.jit(jax.grad(loss)), (w,), {}, infs=True)
    assert (origin.primitive, origin.devices, origin.where.lineno) == (
        "div",
        (5,),
        _sine_root.__code__.co_firstlineno + 4,
    )
    assert origin.describe() == "Inf made by div in the derivative (the gradient) of this line"


def test_a_nan_of_the_forward_pass_under_a_gradient_is_not_called_its_derivative():
    def loss(w):
        return jnp.sum(_root(w))  # sqrt of a negative: the forward pass's own NaN

    origin = nan_location.locate(jax.jit(jax.grad(loss)), (jnp.array([4.0, 16.0]),), {})
    assert (origin.primitive, origin.backward, origin.derivative) == ("sqrt", False, False)
    assert origin.describe() == "NaN made by sqrt"


def test_a_plain_jit_nan_stops_at_its_line_with_the_reruns_values(watch):
    """JAX's re-run reached the line: the stop opens there, during the call (before
    any traceback), with the values the re-run computed; the error follows, once."""
    out = watch("p shifted; up; p x; c")

    @jax.jit
    def f(x):
        return _root(x) + 1

    with pytest.raises(FloatingPointError) as raised:
        f(jnp.array([4.0, 16.0]))
    text = out.getvalue()
    line = _root.__code__.co_firstlineno + 2
    assert _banner(text) == f"Stopped at {__file__}:{line} in _root (NaN made by sqrt)"
    assert "(jaxdbg) p shifted\nArray([-6.,  6.], dtype=float32)" in text
    assert "(jaxdbg) p x\nArray([ 4., 16.], dtype=float32)" in text
    assert getattr(raised.value, nan_watch.SERVED).primitive == "sqrt"  # the post-mortem adds none
    assert "invalid value (nan) encountered in sqrt" in str(raised.value)


def test_quit_at_a_nan_stop_says_the_calls_error_goes_on(watch):
    """The call has failed already: Quit leaves the stop and JAX's error goes on, as
    after a continue; the stop says so, not that it stops the computation."""
    out = watch("q")

    with pytest.raises(FloatingPointError):
        jax.jit(_root)(jnp.array([4.0, 16.0]))
    text = out.getvalue()
    said = text.split("(jaxdbg) q\n", 1)[1]
    assert said == "Quitting: the call has failed already, and its FloatingPointError goes on.\n", said


def test_a_traceback_through_a_watched_function_shows_no_frame_of_jaxdbg(watch):
    """With the watch on every jitted call passes through jaxdbg's wrapper: IPython's
    traceback of any error from one (here a shape error) leaves that frame out."""
    from IPython.core import ultratb

    watch("c")

    @jax.jit
    def mismatched(x):
        return x @ jnp.ones(3)

    with pytest.raises(TypeError) as raised:
        mismatched(jnp.ones(2))
    try:  # IPython 9 names its colours a theme; Colab's IPython 7, a scheme
        shown = ultratb.AutoFormattedTB(mode="Context", theme_name="nocolor")
    except TypeError:
        shown = ultratb.AutoFormattedTB(mode="Context", color_scheme="NoColor")
    text = shown.text(raised.type, raised.value, raised.tb)
    assert "mismatched" in text and "jaxdbg/capture/nan_watch.py" not in text, text


def test_functions_stay_jaxs_own_once_the_watch_is_off(watch):
    watch("c")
    assert jax.jit is nan_watch._watching_jit and jax.pmap is nan_watch._watching_pmap
    watched = jax.jit(lambda v: v * 2)
    assert float(watched(jnp.float32(2))) == 4.0 and watched.lower(jnp.float32(1)) is not None
    nan_watch.set_enabled(False)
    assert jax.jit is jax_routes.JIT.original() and not jax.config.jax_debug_nans
    assert not isinstance(jax.jit(lambda v: v), nan_watch.WatchedFunction)


def test_locate_finds_nothing_in_a_finite_program():
    assert nan_location.locate(jax.jit(jnp.sin), (jnp.arange(3.0),), {}) is None


# -- Infs: %jaxdbg infs on (JAX's jax_debug_infs the detector) ---------------------------


def _log(block):
    shifted = block - 10.0
    return jnp.log(shifted)  # -Inf where block == 10


def test_an_inf_under_shard_map_stops_at_its_line_on_the_device_that_made_it(watch):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))
    out = watch("where; c", infs=True)

    def shard_fn(block):
        return jax.lax.psum(_log(block), "d")  # every device gets the Inf through psum

    f = jax.jit(shard_map()(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P()))
    x = (jnp.arange(16.0) + 11).at[11].set(10.0)  # only device 5's block holds a 10
    with pytest.raises(FloatingPointError, match=r"\(inf\)") as raised:
        f(x)
    line = _log.__code__.co_firstlineno + 2
    assert _banner(out.getvalue()) == f"Stopped at {__file__}:{line} in _log (device 5; Inf made by log)"
    origin = getattr(raised.value, nan_watch.SERVED)
    assert (origin.value, origin.primitive, origin.devices) == ("Inf", "log", (5,))


def test_an_inf_under_pmap_names_each_device_that_made_one(watch):
    devices_or_skip(8)
    out = watch("c", infs=True)

    def step(block):
        return jax.lax.pmean(jnp.exp(block), "i")  # exp overflows float32 past 88.7

    x = jnp.zeros(16).at[1].set(100.0).at[13].set(200.0)  # devices 0 and 6
    with pytest.raises(FloatingPointError):
        jax.pmap(step, axis_name="i")(x.reshape(8, 2))
    line = step.__code__.co_firstlineno + 1
    assert _banner(out.getvalue()) == (
        f"Stopped at {__file__}:{line} in step (device 0; Inf made by exp; also on device 6)"
    )


def test_nan_and_inf_checks_are_switched_apart_as_jaxs_flags_are(watch):
    watch("c", infs=True)
    assert jax.config.jax_debug_infs and not jax.config.jax_debug_nans and nan_watch.enabled()
    assert np.isnan(jax.jit(jnp.sqrt)(jnp.float32(-1.0)))  # a NaN: not checked, no error
    nan_watch.set_enabled(True)
    nan_watch.set_enabled(False, infs=True)  # the NaN checks still on: still watched
    assert nan_watch.enabled() and jax.config.jax_debug_nans and not jax.config.jax_debug_infs
    nan_watch.set_enabled(False)
    assert not nan_watch.enabled()


def test_an_inf_is_located_in_a_plain_jit_where_the_nan_checks_see_nothing():
    @jax.jit
    def f(x):
        return jnp.exp(x * 2) + 1

    x = jnp.array([1.0, 100.0])
    assert nan_location.locate(f, (x,), {}) is None
    origin = nan_location.locate(f, (x,), {}, infs=True)
    assert (origin.value, origin.primitive, origin.backward) == ("Inf", "exp", False)
    assert origin.where.lineno == f.__wrapped__.__code__.co_firstlineno + 2
    assert nan_location.locate(f, (jnp.array([1.0, 2.0]),), {}, infs=True) is None


# -- sharded jit: JAX's re-run checks each device's buffer, which names the device --


def _sharded(values, n: int = 8):
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    return jax.device_put(values, NamedSharding(Mesh(np.array(devices_or_skip(n)), ("d",)), P("d")))


@pytest.mark.parametrize(
    "value,part,primitive,bad,infs",
    [
        ("NaN", _root, "sqrt", -1.0, False),  # sqrt of a negative
        ("Inf", _log, "log", 10.0, True),  # log of 0
    ],
)
def test_a_nan_or_inf_under_a_sharded_jit_stops_once_at_its_line_naming_the_device(
    watch, value, part, primitive, bad, infs
):
    out = watch("where; p shifted.shape; p float(shifted[11]); c", infs=infs)

    @jax.jit
    def f(x):
        return part(x) * 2

    # Two values per device: x[3] is device 1's, x[11] device 5's (JAX's device ids).
    x = _sharded((jnp.arange(16.0) + 11).at[3].set(bad).at[11].set(bad))
    with pytest.raises(FloatingPointError) as raised:
        f(x)
    text = out.getvalue()
    line = part.__code__.co_firstlineno + 2
    assert _banner(text) == (
        f"Stopped at {__file__}:{line} in {part.__name__} (device 1; {value} made by {primitive}; also on device 5)"
    )
    # The frames are JAX's op-by-op re-run's: the line's locals hold the whole array.
    assert f"(jaxdbg) p shifted.shape\n(16,)\n(jaxdbg) p float(shifted[11])\n{bad - 10.0}\n" in text
    assert text.count("Continuing.") == 1
    origin = getattr(raised.value, nan_watch.SERVED)
    assert (origin.value, origin.devices, origin.backward) == (value, (1, 5), False)


def test_a_sharded_jit_names_the_device_by_its_jax_id(watch):
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    out = watch("c")
    devices = devices_or_skip(8)[::-1]  # the mesh's position 0 is device 7
    x = jax.device_put((jnp.arange(16.0) + 11).at[1].set(-3.0), NamedSharding(Mesh(np.array(devices), ("d",)), P("d")))
    with pytest.raises(FloatingPointError):
        jax.jit(_root)(x)
    assert _banner(out.getvalue()).endswith("in _root (device 7; NaN made by sqrt)")


def _narrowed(block):
    scaled = block * 1e4
    return scaled.astype(jnp.float16).astype(jnp.float32)  # float16 ends at 65504: Inf past it


def test_an_inf_made_by_a_narrowing_cast_is_located_on_its_device(watch):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))
    out = watch("c", infs=True)

    def shard_fn(block):
        return jax.lax.psum(_narrowed(block), "d")

    f = jax.jit(shard_map()(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P()))
    x = jnp.ones(16).at[11].set(7.0)  # only device 5's block holds a value past 6.5504
    with pytest.raises(FloatingPointError, match=r"\(inf\)"):
        f(x)
    line = _narrowed.__code__.co_firstlineno + 2
    assert _banner(out.getvalue()) == (
        f"Stopped at {__file__}:{line} in _narrowed (device 5; Inf made by convert_element_type)"
    )


def test_a_cast_is_checked_only_while_jaxdbg_locates():
    from jax.experimental import checkify

    @jax.jit
    def f(x):
        return x.astype(jnp.float16) * 1

    x = jnp.array([1.0, 1e6])
    assert nan_location.locate(f, (x,), {}, infs=True).primitive == "convert_element_type"
    err, _ = checkify.checkify(lambda v: v.astype(jnp.float16), errors=checkify.nan_checks)(jnp.array([jnp.nan]))
    assert err.get() is None  # a user's own checkify checks no cast, as JAX's does not


def test_debug_nans_and_debug_infs_switch_the_watch_outside_a_notebook(monkeypatch):
    """``jaxdbg.debug_nans()`` / ``debug_infs()`` are ``%jaxdbg nans on`` / ``infs on``
    for a script: JAX's flag and the watch on, a stop at the line, then both off."""
    import jaxdbg

    monkeypatch.delenv(scripted.ENV_VAR, raising=False)
    scripted.reset()
    out = io.StringIO()
    original_jit = jax_routes.JIT.original()
    flags = jax.config
    try:
        jaxdbg.debug_nans(backend="cli", stdout=out, stdin=io.StringIO(""), commands="c")
        assert flags.jax_debug_nans and not flags.jax_debug_infs and nan_watch.enabled()
        with pytest.raises(FloatingPointError):
            jax.jit(jax.grad(lambda w: jnp.sum(_safe_root(w))))(jnp.array([0.0, 4.0]))
        assert _banner(out.getvalue()).endswith(
            "in _safe_root (NaN made by mul in the backward pass (the gradient) of this line)"
        )
        jaxdbg.debug_infs(backend="cli", stdout=out, stdin=io.StringIO(""), commands="c")
        jaxdbg.debug_nans(False)  # the Inf checks still on: still watched
        assert flags.jax_debug_infs and not flags.jax_debug_nans and nan_watch.enabled()
    finally:
        jaxdbg.debug_infs(False)
        jaxdbg.debug_nans(False)
        scripted.reset()
    assert not nan_watch.enabled() and jax.jit is original_jit
    assert not flags.jax_debug_nans and not flags.jax_debug_infs


def test_a_line_the_rerun_did_not_reach_lists_its_names_saying_why_they_have_no_value(watch):
    """The backward pass of a shard_map: JAX's re-run stops in the transpose, at no line
    of yours, so the stop has the line as traced; ``p w`` says why it has no value
    instead of raising a NameError."""
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(8)), ("d",))
    out = watch("p w; locals; c")

    def loss(x):
        per_device = shard_map()(
            lambda block: _safe_root(block).sum(keepdims=True), mesh=mesh, in_specs=P("d"), out_specs=P("d")
        )
        return per_device(x).sum()

    with pytest.raises(FloatingPointError):
        jax.jit(jax.grad(loss))((jnp.arange(16.0) + 1).at[10].set(0.0))
    text = out.getvalue()
    assert _banner(text).endswith(
        "in _safe_root (device 5; NaN made by mul in the backward pass (the gradient) of this line)"
    )
    unavailable = f"<unavailable: {nan_watch.NOT_REACHED.why}>"
    assert f"(jaxdbg) p w\n{unavailable}\n" in text
    assert f"(jaxdbg) locals\nw  Unavailable  {unavailable}\n" in text
    assert "NameError" not in text
