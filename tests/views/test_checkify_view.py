"""jaxdbg.checkify / show outside a notebook: locations, mapped tables, JAX's behaviour kept."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import checkify

import jaxdbg
from jaxdbg.capture.checkify_errors import CheckifyView, LocatedError, parse_errors

THIS_FILE = __file__


def positive_log(x):
    checkify.check(jnp.all(x > 0), "need positive values, got {}", x)
    return jnp.log(x) / x[0]


def caller(x):
    return positive_log(x).sum()


CHECK_LINE = positive_log.__code__.co_firstlineno + 1
DIVIDE_LINE = CHECK_LINE + 1
CALL_LINE = caller.__code__.co_firstlineno + 1


def test_get_adds_the_users_file_line_and_function():
    err, out = jaxdbg.checkify(jax.jit(caller))(jnp.array([-1.0, 2.0]))
    assert isinstance(err, LocatedError)
    assert err.get() == (
        f"need positive values, got [-1.  2.] (`check` failed) (at {THIS_FILE}:{CHECK_LINE} in positive_log)"
    )
    plain_err, plain_out = checkify.checkify(jax.jit(caller))(jnp.array([-1.0, 2.0]))
    assert err.get().startswith(plain_err.get())
    assert float(out) == pytest.approx(float(plain_out), nan_ok=True)


def test_throw_is_unchanged():
    err, _ = jaxdbg.checkify(caller)(jnp.array([-1.0, 2.0]))
    with pytest.raises(checkify.JaxRuntimeError, match=r"need positive values, got \[-1.  2.\]"):
        err.throw()
    ok, _ = jaxdbg.checkify(caller)(jnp.array([1.0, 2.0]))
    assert ok.get() is None
    ok.throw()


def test_show_prints_message_location_source_and_callers(capsys):
    err, _ = jaxdbg.checkify(caller, errors="all")(jnp.array([0.0, 2.0]))
    view = jaxdbg.show(err)
    text = capsys.readouterr().out
    assert text == str(view) + "\n"
    lines = text.splitlines()
    assert lines[0] == "checkify error: need positive values, got [0. 2.] (`check` failed)"
    assert lines[1] == f"at {THIS_FILE}:{CHECK_LINE} in positive_log"
    assert f"-> {CHECK_LINE:>4} |     checkify.check(jnp.all(x > 0)" in text
    assert f"called from {THIS_FILE}:{CALL_LINE} in caller" in text


def test_automatic_checks_point_at_the_operation():
    err, _ = jaxdbg.checkify(jax.jit(lambda x: positive_log(x)), errors="div")(jnp.array([0.0, 1.0]))
    assert err.get() == f"division by zero (at {THIS_FILE}:{DIVIDE_LINE} in positive_log)"


def test_mapped_error_table():
    xs = jnp.array([[1.0, 2.0], [-1.0, 2.0], [2.0, 3.0], [-5.0, 1.0]])
    err, _ = jax.vmap(jaxdbg.checkify(caller))(xs)
    view = CheckifyView.of(err)
    assert view.shape == (4,)
    assert [s.index for s in view.sites] == [(1,), (3,)]
    text = str(view)
    assert text.splitlines()[0] == "checkify errors at 2 of 4 mapped indices"
    assert "  1      need positive values, got [-1.  2.]" in text
    assert err.get().splitlines()[0].startswith("at mapped index 1: need positive values")
    html = view._repr_html_()
    assert html.count("<tr>") == 3 and "need positive values, got [-5.  1.]" in html


def test_html_source_keeps_blank_lines_in_place():
    err, _ = jaxdbg.checkify(jax.jit(lambda x: positive_log(x)), errors="div")(jnp.array([0.0, 1.0]))
    html = CheckifyView.of(err)._repr_html_()
    import re

    numbered = re.findall(r'<span class="jaxdbg-line[^"]*"[^>]*><span[^>]*>\s*(\d+) </span>', html)  # line numbers
    assert [int(n) for n in numbered] == list(range(DIVIDE_LINE - 3, DIVIDE_LINE + 4)), numbered


def test_html_escapes_messages():
    err, _ = jaxdbg.checkify(lambda x: checkify.check(x > 0, "<script>bad</script> {}", x))(jnp.float32(-1.0))
    html = CheckifyView.of(err)._repr_html_()
    assert "<script>bad" not in html and "&lt;script&gt;bad" in html


def test_error_names_and_bad_input():
    assert parse_errors("nan,div") == checkify.nan_checks | checkify.div_checks
    assert parse_errors("all") == checkify.all_checks
    with pytest.raises(ValueError, match="unknown checkify error set 'nope'; choose from user"):
        jaxdbg.checkify(caller, errors="nope")


@pytest.mark.multidevice
def test_pmapped_error_table():
    xs = jnp.array([[1.0, 2.0], [-1.0, 2.0], [2.0, 3.0], [0.0, 1.0]])
    err, _ = jax.pmap(jaxdbg.checkify(caller, errors="all"))(xs)
    view = CheckifyView.of(err)
    assert view.shape == (4,)
    assert [(s.index, s.message.split(",")[0]) for s in view.sites] == [
        ((1,), "need positive values"),
        ((3,), "need positive values"),
    ]
    assert all(s.where.lineno == CHECK_LINE for s in view.sites)
