"""jaxdbg.checkify as a drop-in for jax.experimental.checkify.checkify.

Each program runs with JAX's own checkify, with jaxdbg.checkify called directly, and
with ``checkify.checkify`` rebound to jaxdbg's (as a user or library may do). jaxdbg's
messages are JAX's with `` (at file:line in fn)`` added; everything else is JAX's.
"""

from __future__ import annotations

import logging

import re

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

import jaxdbg
from jaxdbg.capture import jax_routes

JAX_CHECKIFY = jax_routes.CHECKIFY.original()
LOCATION = re.compile(r" \(at (?P<file>.+):(?P<line>\d+) in (?P<fn>[^)]+)\)$")


@pytest.fixture(params=["jaxdbg", "rebound"])
def ours(request, monkeypatch):
    """jaxdbg's checkify, called directly or through JAX's rebound name."""
    if request.param == "jaxdbg":
        return jaxdbg.checkify
    monkeypatch.setattr(checkify, "checkify", jaxdbg.checkify)
    return lambda f, errors=checkify.user_checks: checkify.checkify(f, errors=errors)


def located(message):
    """(JAX's message, the location suffix's parts) of one of jaxdbg's messages."""
    match = LOCATION.search(message)
    assert match, f"no location in {message!r}"
    return message[:match.start()], (match["file"], int(match["line"]), match["fn"])


def line_of(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def floor_div(x, y):
    return x // y


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_integer_floor_division_by_zero_names_the_users_line(ours, jit):
    f = jax.jit(floor_div) if jit else floor_div
    args = (jnp.int32(7), jnp.int32(0))
    theirs, _ = JAX_CHECKIFY(f, errors=checkify.div_checks)(*args)
    err, out = ours(f, errors=checkify.div_checks)(*args)
    message, (file, line, fn) = located(err.get())
    assert message == theirs.get() == "division by zero"
    assert (file.endswith("test_parity_checkify.py"), line, fn) == (
        True, line_of(floor_div, "x // y"), "floor_div")
    assert int(out) == int(JAX_CHECKIFY(f, errors=checkify.div_checks)(*args)[1])


def test_each_floor_division_reports_its_own_line(ours):
    def f(x, y, z):
        a = y // x
        b = x // z
        return a + b + x // y

    for args, text in (((3, 0, 1), "x // y"), ((3, 1, 0), "x // z"), ((0, 1, 1), "y // x")):
        err, _ = ours(f, errors=checkify.div_checks)(*map(jnp.int32, args))
        assert located(err.get())[1][1] == line_of(f, text)


@jax.jit
def users_own_jitted(x):
    checkify.check(x > 0, "inner check")
    return x


def test_an_error_in_the_users_own_jitted_function_keeps_its_line(ours):
    def outer(x):
        return users_own_jitted(x) + 1

    err, _ = ours(outer)(jnp.float32(-1.0))
    _, (_, line, fn) = located(err.get())
    assert (line, fn) == (line_of(users_own_jitted, "inner check"), "users_own_jitted")


@pytest.mark.parametrize("program, errors", [
    (lambda x: checkify.check(x > 0, "x must be positive, got {}", x), checkify.user_checks),
    (lambda x: jnp.log(x) * jnp.nan, checkify.nan_checks),
    (lambda x: jnp.arange(3)[jnp.int32(x) + 5], checkify.index_checks),
    (lambda x: jax.lax.div(jnp.int32(x), jnp.int32(0)), checkify.div_checks),
], ids=["user", "nan", "index", "div"])
def test_messages_are_jaxs_with_a_location(ours, program, errors):
    for wrap in (lambda f: f, jax.jit):
        failing = jnp.float32(-1.0)
        theirs, _ = JAX_CHECKIFY(wrap(program), errors=errors)(failing)
        err, _ = ours(wrap(program), errors=errors)(failing)
        assert located(err.get())[0] == theirs.get()
        passing = jnp.float32(-5.0 if errors is checkify.index_checks else 2.0)
        passed, _ = ours(wrap(program), errors=errors)(passing)
        if errors in (checkify.user_checks, checkify.index_checks):
            assert passed.get() is None


def test_rebinding_checkify_does_not_recurse(monkeypatch):
    monkeypatch.setattr(checkify, "checkify", jaxdbg.checkify)

    def f(x):
        checkify.check(x > 0, "bad {}", x)
        return x

    err, _ = jax.jit(checkify.checkify(f))(-1.0)
    assert located(err.get())[0] == "bad -1.0 (`check` failed)"
    with pytest.raises(checkify.JaxRuntimeError):
        err.throw()
    mapped, _ = jax.vmap(checkify.checkify(f))(jnp.array([1.0, -2.0]))
    assert "at mapped index 1" in mapped.get()


def test_calling_a_checked_jitted_function_again_compiles_nothing(ours, caplog):
    # JAX logs every compilation with jax_log_compiles (a listener on jax.monitoring could
    # not be removed on every JAX, and would outlive the test)
    f = ours(jax.jit(lambda x: jnp.sin(x) ** 2 // 1))
    with jax.log_compiles(True), caplog.at_level(logging.DEBUG, logger="jax"):
        f(3.0)
        assert _compilations(caplog), "no compilation was logged"
        caplog.clear()
        f(3.0)
        assert _compilations(caplog) == []


def _compilations(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]


@pytest.mark.parametrize("errors", [{}, set(), frozenset(), list(checkify.user_checks)],
                         ids=["dict", "set", "frozenset", "list"])
def test_any_collection_of_error_classes_is_taken_as_jax_takes_it(ours, errors):
    def f(x):
        checkify.check(x > 0, "positive")
        return x

    theirs, _ = JAX_CHECKIFY(f, errors=errors)(jnp.float32(-1.0))
    err, _ = ours(f, errors=errors)(jnp.float32(-1.0))
    assert (err.get() is None) == (theirs.get() is None)
