"""Scripted sessions: JAXDBG_COMMANDS and the commands= option answer stops without a person."""

from __future__ import annotations

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.frontends import scripted

pytestmark = pytest.mark.usefixtures("fresh_scripted_queues")


def test_split_commands_keeps_semicolons_inside_expressions():
    assert scripted.split_commands("p x; up; p y; c") == ["p x", "up", "p y", "c"]
    assert scripted.split_commands('p "a;b"; p f(1; 2)\nc;;') == ['p "a;b"', "p f(1; 2)", "c"]
    assert scripted.split_commands("p {'k': 'v;w'}[\"k\"]; c") == ["p {'k': 'v;w'}[\"k\"]", "c"]
    assert scripted.split_commands("  ;  ") == []


def _two_level(out: io.StringIO, **options):
    @jax.jit
    def outer(x):
        y = x * 2

        def inner(z):
            jaxdbg.breakpoint(backend="cli", stdout=out, stdin=io.StringIO(""), **options)
            return z + 1

        return inner(y)

    return outer


def test_env_commands_are_consumed_in_order_across_stops(monkeypatch):
    monkeypatch.setenv(scripted.ENV_VAR, "p z; up; p y; c; p z + 100; c")
    out = io.StringIO()
    f = _two_level(out)
    assert f(jnp.float32(1)) == 3
    assert f(jnp.float32(5)) == 11  # the second call's stop takes the rest of the queue
    text = out.getvalue()
    assert text.count("Stopped at") == 2
    assert "(jaxdbg) p z\nArray(2., dtype=float32)\n(jaxdbg) up\n" in text
    assert "(jaxdbg) p y\nArray(2., dtype=float32)\n(jaxdbg) c\nContinuing.\n" in text
    assert "(jaxdbg) p z + 100\nArray(110., dtype=float32)\n(jaxdbg) c\nContinuing.\n" in text
    # nothing fell through to the prompt, whose stdin is empty (that would have quit)
    assert "Quitting" not in text


def test_commands_option_as_string_and_list():
    out = io.StringIO()
    assert _two_level(out, commands="p z; pp z.shape; c")(jnp.float32(1)) == 3
    assert "(jaxdbg) pp z.shape\n()\n(jaxdbg) c\nContinuing." in out.getvalue()

    out = io.StringIO()
    assert _two_level(out, commands=["p z; 1", "c"])(jnp.float32(2)) == 5
    # a list holds whole lines: the ';' is Python's here
    assert "(jaxdbg) p z; 1\n" in out.getvalue()
    assert "Continuing." in out.getvalue()


def test_commands_option_is_consumed_across_the_stops_of_its_breakpoint():
    out = io.StringIO()

    def f(x):
        jaxdbg.breakpoint(
            backend="cli", stdout=out, stdin=io.StringIO(""), commands="p x; c; p x * 10; c; p x * 100; c"
        )
        return x

    jax.vmap(f)(jnp.arange(3.0))
    text = out.getvalue()
    assert "batch 1/3" in text and "batch 3/3" in text
    assert "(jaxdbg) p x\nArray(0., dtype=float32)" in text
    assert "(jaxdbg) p x * 10\nArray(10., dtype=float32)" in text
    assert "(jaxdbg) p x * 100\nArray(200., dtype=float32)" in text


def test_errors_in_a_script_are_echoed_and_the_script_goes_on(monkeypatch):
    monkeypatch.setenv(scripted.ENV_VAR, "p nosuch; frame 99; p z; c")
    out = io.StringIO()
    assert _two_level(out)(jnp.float32(1)) == 3
    text = out.getvalue()
    assert "(jaxdbg) p nosuch\n*** NameError: name 'nosuch' is not defined" in text
    assert "(jaxdbg) p z\nArray(2., dtype=float32)" in text


def test_quit_in_a_script_stops_the_computation(monkeypatch):
    monkeypatch.setenv(scripted.ENV_VAR, "q")
    out = io.StringIO()
    with pytest.raises(Exception) as info:
        jax.block_until_ready(_two_level(out)(jnp.float32(1)))
    assert "DebuggerQuit" in repr(info.value) or isinstance(info.value, jaxdbg.DebuggerQuit)
    assert "(jaxdbg) q\nQuitting" in out.getvalue()


def test_when_the_script_runs_out_the_interactive_backend_takes_over(monkeypatch):
    monkeypatch.setenv(scripted.ENV_VAR, "p z")
    out = io.StringIO()

    @jax.jit
    def f(x):
        z = x + 1
        jaxdbg.breakpoint(backend="cli", stdout=out, stdin=io.StringIO("p z * 2\nc\n"))
        return z

    assert f(jnp.float32(1)) == 2
    text = out.getvalue()
    assert text.index("(jaxdbg) p z\nArray(2.") < text.index("(jaxdbg) p z * 2\nArray(4.")


def test_every_backend_is_answered_by_the_script(monkeypatch):
    served = []
    jaxdbg.register_debugger(
        "probe-scripted", lambda session, **kw: served.append(kw) or session.execute("c"), priority=-1000
    )
    try:
        monkeypatch.setenv(scripted.ENV_VAR, "p x; c")
        # Under CI a script that ran out continues on its own (see the CI test below);
        # here a person is at hand, so the backend must serve.
        monkeypatch.delenv("CI", raising=False)
        out = io.StringIO()

        @jax.jit
        def f(x):
            jaxdbg.breakpoint(backend="probe-scripted", stdout=out, marker=1)
            return x

        f(jnp.float32(3))
        assert served == []  # the script answered; the backend never ran
        assert "(jaxdbg) p x\nArray(3., dtype=float32)" in out.getvalue()

        f(jnp.float32(4))  # the script is used up: the backend serves, without commands=
        assert served == [{"stdout": out, "marker": 1}]

        @jax.jit
        def g(x):
            jaxdbg.breakpoint(backend="probe-scripted", commands="p x + 1; c")
            return x

        g(jnp.float32(3))
        assert len(served) == 1
    finally:
        jaxdbg.unregister_debugger("probe-scripted")


def test_without_any_input_a_stop_continues_with_one_line(monkeypatch, capsys):
    """stdin closed and no script: the computation goes on, with one line saying why."""
    monkeypatch.setattr("sys.stdin", None)

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(backend="cli")
        return x * 2

    assert f(jnp.float32(2)) == 4
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert lines[0].startswith("jaxdbg: continuing past ") and "stdin is closed" in lines[0]
    assert "JAXDBG_COMMANDS" in lines[0]


def test_script_that_runs_out_under_ci_continues_with_one_line(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv(scripted.ENV_VAR, "p x; c")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    out = io.StringIO()

    def f(x):
        jaxdbg.breakpoint(backend="cli", stdout=out)
        return x

    jax.vmap(f)(jnp.arange(2.0))
    text = out.getvalue()
    assert "(jaxdbg) p x\nArray(0., dtype=float32)" in text
    notices = [line for line in text.splitlines() if line.startswith("jaxdbg: continuing past")]
    assert len(notices) == 1 and "batch 2/2" in notices[0] and "scripted commands ran out" in notices[0]
