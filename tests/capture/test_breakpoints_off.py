"""`%jaxdbg breakpoints off` and $JAXDBG_BREAKPOINTS=off: breakpoints are left out of the
programs traced from then on, which hold no host callback and run as if they were not there."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg import config
from jaxdbg.ipython import magics
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def _breakpoints_on_after(monkeypatch):
    monkeypatch.delenv(config.BREAKPOINTS.name, raising=False)
    yield
    config.BREAKPOINTS.set(None)
    jax.clear_caches()


def _holds_a_host_callback(compiled_text: str) -> bool:
    return "callback" in compiled_text


def _step(t: Transcript):
    """A jitted step with every flavour of breakpoint in it."""

    @jax.jit
    def step(x):
        y = jnp.tanh(x) * 2
        jaxdbg.breakpoint(**t.options)
        jaxdbg.breakpoint_if(y[0] > -10, **t.options)
        jaxdbg.breakpoint_on_nonfinite(y / 0.0, **t.options)
        return y

    return step


def test_switched_off_the_breakpoints_of_a_compiled_function_leave_its_next_call_and_come_back_on(capsys):
    t = Transcript("p y[0]", "c", "c", "c", "p y[0]", "c", "c", "c")
    step = _step(t)
    x = jnp.ones(3)
    step(x)
    assert len(t.stops()) == 3
    assert _holds_a_host_callback(step.lower(x).compile().as_text())

    magics.jaxdbg_magic("breakpoints off")
    said = capsys.readouterr().out
    assert "jaxdbg breakpoints: off" in said and "traced and compiled again at its next call" in said, said
    assert float(step(x)[0]) == pytest.approx(2 * float(jnp.tanh(1.0)))
    assert len(t.stops()) == 3  # no stop: the program was compiled again without them
    assert not _holds_a_host_callback(step.lower(x).compile().as_text())
    row = next(r for r in magics.status_table().rows if r.item == "breakpoints")
    assert row.value == "off" and config.BREAKPOINTS.name in row.detail

    magics.jaxdbg_magic("breakpoints on")
    assert "jaxdbg breakpoints: on" in capsys.readouterr().out
    step(x)
    assert len(t.stops()) == 6 and t.answers("p y[0]")[-1].startswith("Array(1.52")
    assert next(r for r in magics.status_table().rows if r.item == "breakpoints").value == "on"


def test_the_environment_variable_leaves_out_eager_breakpoints_and_jax_debug_breakpoint_too(monkeypatch):
    monkeypatch.setenv(config.BREAKPOINTS.name, "OFF")
    t = Transcript("c")
    jaxdbg.breakpoint(**t.options)  # eager: returns at once
    token = jnp.arange(2.0)
    assert jaxdbg.breakpoint_if(True, token=token, **t.options) is token
    jaxdbg.install_jax_hook()
    try:
        out = jax.jit(lambda x: (jax.debug.breakpoint(**t.options), x + 1)[1])(jnp.float32(1))
    finally:
        jaxdbg.uninstall_jax_hook()
    assert float(out) == 2.0 and t.stops() == []
    monkeypatch.setenv(config.BREAKPOINTS.name, "on")
    jaxdbg.breakpoint(**t.options)
    assert len(t.stops()) == 1


def test_switching_to_what_it_is_already_clears_nothing_and_a_bad_word_changes_nothing(monkeypatch, capsys):
    cleared = []
    monkeypatch.setattr(jax, "clear_caches", lambda: cleared.append(True))
    magics.jaxdbg_magic("breakpoints on")
    magics.jaxdbg_magic("breakpoints maybe")
    out = capsys.readouterr().out
    assert "jaxdbg breakpoints: on, they stop" in out
    assert "expected on or off, not 'maybe'" in out and "usage: %jaxdbg breakpoints on|off" in out
    assert cleared == [] and config.breakpoints_on()


def test_in_a_distributed_job_the_switch_is_refused_since_every_process_must_compile_alike(monkeypatch, capsys):
    from jaxdbg.job import membership

    monkeypatch.setattr(membership, "current", lambda: object())
    magics.jaxdbg_magic("breakpoints off")
    out = capsys.readouterr().out
    assert "every process of a jax.distributed job must compile the same program" in out, out
    assert "$JAXDBG_BREAKPOINTS=off in each before it starts" in out and config.breakpoints_on()
