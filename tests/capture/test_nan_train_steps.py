"""The NaN watch on the train steps users write: Flax NNX's ``nnx.jit``, Equinox's
``eqx.filter_jit`` with optax, ``jit(value_and_grad)`` through ``jax.nn.relu`` (a
``custom_jvp``), a plain ``jit``, and a function jitted before the watch was on. Each
NaN comes from the ``log`` of a parameter that the updates drive below zero; each stop
opens at that line, during the call, with the frame's own arguments as values, and
``replay`` reaches the line again (real JAX on CPU, scripted terminal commands)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import pytest

from jaxdbg.capture import nan_watch
from jaxdbg.frontends import scripted


@pytest.fixture
def watch(monkeypatch):
    monkeypatch.delenv(scripted.ENV_VAR, raising=False)
    scripted.reset()
    out = io.StringIO()

    def on(commands: str) -> io.StringIO:
        nan_watch.set_enabled(True, backend="cli", stdout=out, stdin=io.StringIO(""), commands=commands)
        return out

    yield on
    nan_watch.set_enabled(False)
    scripted.reset()


def _stops(text: str) -> list[str]:
    return re.findall(r"^Stopped at .*$", text, re.M)


def _line_of(fun, text: str) -> int:
    lines, first = __import__("inspect").getsourcelines(fun)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _train(step, state, steps: int = 6):
    """Call ``step`` until it raises; the index of the step that raised."""
    for i in range(steps):
        try:
            state = step(*state)
        except FloatingPointError as error:
            assert getattr(error, nan_watch.SERVED, None) is not None  # stopped for, once
            return i
    raise AssertionError("no NaN in the steps")


# -- Flax NNX -------------------------------------------------------------------------


def test_an_nnx_jit_train_step_stops_at_the_log_with_the_modules_values(watch):
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")

    class Scaled(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(3, 4, rngs=rngs)
            self.scale = nnx.Param(jnp.array(0.3))

        def __call__(self, x):
            h = jnp.tanh(self.l1(x))
            var = self.scale[...]
            return jnp.mean(h) + jnp.log(var)  # NaN once the updates drive scale below 0

    def loss_fn(model, x):
        return model(x)

    @nnx.jit
    def train_step(model, opt, x):
        loss, grads = nnx.value_and_grad(loss_fn)(model, x)
        opt.update(model, grads)
        return loss

    model = Scaled(nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.sgd(0.2), wrt=nnx.Param)
    x = jnp.ones((2, 3))
    out = watch("p var; p self.scale[...]; p x.shape; up; p model.l1.kernel.shape; down; replay; n; n; p var; c; c")

    def step(*_):
        train_step(model, opt, x)
        return ()

    assert _train(step, ()) == 1  # step 0 drives scale to 0.3 - 0.2 / 0.3 < 0
    text = out.getvalue()
    line = _line_of(Scaled.__call__, "jnp.log(var)")
    assert _stops(text) == [f"Stopped at {__file__}:{line} in __call__ (NaN made by log)"], text
    assert "(jaxdbg) p var\nArray(-0.3666" in text, text
    assert "(jaxdbg) p self.scale[...]\nArray(-0.3666" in text, text
    assert "(jaxdbg) p x.shape\n(2, 3)" in text, text
    assert "(jaxdbg) p model.l1.kernel.shape\n(3, 4)" in text, text
    assert f"{line} ->" in text.split("(jaxdbg) replay")[1], text  # the replay reached the line
    assert "<unavailable" not in text, text


# -- Equinox and optax ----------------------------------------------------------------


def test_an_equinox_filter_jit_step_with_relu_stops_at_the_log(watch):
    eqx = pytest.importorskip("equinox")
    optax = pytest.importorskip("optax")

    class Model(eqx.Module):
        w: jax.Array
        scale: jax.Array

        def __call__(self, x):
            h = jax.nn.relu(x @ self.w)
            var = self.scale
            return jnp.mean(h) + jnp.log(var)

    optim = optax.sgd(0.2)
    x = jnp.ones((2, 3))

    @eqx.filter_jit
    def step(model, state, loss):
        loss, grads = eqx.filter_value_and_grad(lambda m: m(x))(model)
        updates, state = optim.update(grads, state)
        return eqx.apply_updates(model, updates), state, loss  # a NaN only in the loss

    model = Model(jnp.ones((3, 4)), jnp.array(0.3))
    out = watch("p var; p self.w.shape; p x; c")
    assert _train(step, (model, optim.init(eqx.filter(model, eqx.is_array)), None)) == 1
    text = out.getvalue()
    line = _line_of(Model.__call__, "jnp.log(var)")
    assert _stops(text) == [f"Stopped at {__file__}:{line} in __call__ (NaN made by log)"], text
    assert "(jaxdbg) p var\nArray(-0.3666" in text, text
    assert "(jaxdbg) p self.w.shape\n(3, 4)" in text, text
    assert "(jaxdbg) p x\nArray([[1., 1., 1.]," in text, text


# -- jax.jit, before and after the watch -----------------------------------------------


def _relu_loss(p, x):
    h = jax.nn.relu(x @ p["w"])
    var = p["s"]
    return jnp.mean(h) * jnp.log(var)


def _relu_update(step):
    def update(p, x):
        loss, grads = step(p, x)
        return jax.tree_util.tree_map(lambda a, b: a - 0.2 * b, p, grads), x

    return update


def test_a_value_and_grad_through_relu_jitted_before_the_watch_stops(watch):
    """JAX's own check misses this NaN from its second call on: an eager custom_jvp
    rule turns it off for the thread. The watch keeps it on, whenever jitted."""
    step = jax.jit(jax.value_and_grad(_relu_loss))
    params = {"w": jnp.ones((3, 3)), "s": jnp.array(0.3)}
    x = jnp.ones((2, 3))
    step(params, x)  # compiled before the watch
    out = watch("p var; p p['s']; p x.shape; replay; n; n; p var; c; c")
    assert _train(_relu_update(step), (params, x)) == 1
    text = out.getvalue()
    line = _line_of(_relu_loss, "jnp.log(var)")
    assert _stops(text) == [f"Stopped at {__file__}:{line} in _relu_loss (NaN made by log)"], text
    assert "(jaxdbg) p var\nArray(-1.7" in text and "(jaxdbg) p p['s']\nArray(-1.7" in text, text
    assert "(jaxdbg) p x.shape\n(2, 3)" in text, text
    assert f"{line} ->" in text.split("(jaxdbg) replay")[1], text


def test_a_plain_jit_made_after_the_watch_stops_at_the_log(watch):
    step = jax.jit(jax.value_and_grad(_relu_loss))
    out = watch("p var; c")
    assert _train(_relu_update(step), ({"w": jnp.ones((3, 3)), "s": jnp.array(0.3)}, jnp.ones((2, 3)))) == 1
    assert _stops(out.getvalue()) == [
        f"Stopped at {__file__}:{_line_of(_relu_loss, 'jnp.log(var)')} in _relu_loss (NaN made by log)"
    ]


def test_jax_turning_its_checks_off_after_a_custom_jvp_is_undone_by_the_watch(watch):
    """The cause, alone: a thread-local ``debug_nans(False)`` context (as JAX enters for
    an eager ``custom_jvp``) leaves JAX's compiled-call checks off once it ends."""
    watch("c")
    f = jax.jit(lambda v: jnp.log(v))
    f(jnp.float32(1.0))  # compiled, on JAX's fast path from now on
    with jax.debug_nans(False):
        pass
    with pytest.raises(FloatingPointError):
        f(jnp.float32(-1.0))


# -- a script, at the real terminal ----------------------------------------------------

SCRIPT = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg

    def loss(w, x):
        var = jnp.mean(x * w) - 0.5
        return jnp.log(var)

    step = jax.jit(jax.value_and_grad(loss))
    jaxdbg.debug_nans()
    step(jnp.float32(0.2), jnp.ones(3))
""")


def test_a_script_stops_at_the_line_with_its_source_before_any_traceback(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1"}
    env.pop(scripted.ENV_VAR, None)
    done = subprocess.run(
        [sys.executable, str(script)],
        input="p var\np w\nc\n",
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    out, err = done.stdout, done.stderr
    assert done.returncode == 1, out + err
    assert f"Stopped at {script}:7 in loss (NaN made by log)" in out, out + err
    assert " 7 ->     return jnp.log(var)" in out, out  # the source window, as at a breakpoint
    assert "Array(-0.29999998, dtype=float32)" in out and "Array(0.2, dtype=float32" in out, out
    assert "Invalid nan value encountered" not in out + err  # JAX's re-run, silent
    assert err.count("FloatingPointError: invalid value (nan) encountered in log") == 1, err
    assert "jaxdbg" not in err.split("Traceback")[1], err  # the user's frames and JAX's line only


def test_a_nan_the_reruns_eager_call_does_not_make_is_located_in_the_program(watch):
    """Where JAX's op-by-op re-run makes no NaN (the compiled program made it; here the
    function computes otherwise when called eagerly), checkify's checks of the program
    find the line, and the stop opens there, its names saying why they have no value."""
    calls = iter(range(100))

    def f(x):
        eager_rerun = next(calls) == 1  # 0: traced for jit; 1: JAX's re-run; then checkify's
        shifted = x - 1.0
        return shifted if eager_rerun else jnp.log(shifted)

    out = watch("p shifted; c")
    with pytest.raises(FloatingPointError) as raised:
        jax.jit(f)(jnp.float32(0.5))
    text = out.getvalue()
    line = _line_of(f, "jnp.log(shifted)")
    assert _stops(text) == [f"Stopped at {__file__}:{line} in f (NaN made by log)"], text
    assert f"(jaxdbg) p shifted\n<unavailable: {nan_watch.NOT_REACHED.why}>" in text, text
    assert "de-optimized" in str(raised.value)  # JAX's own error, after the stop
