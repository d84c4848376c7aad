"""The local names of the function around a line, read from its source: what a stop
known only by its traced line lists in its locals table."""

from __future__ import annotations

import textwrap

from jaxdbg.capture.source_locals import local_names

SOURCE = textwrap.dedent("""\
    import jax.numpy as jnp

    def outer(x, /, scale, *rest, key=None, **options):
        shifted = x - scale
        total, count = shifted.sum(), 3
        def helper(h):
            inner_only = h
            return inner_only
        squash = lambda v: v * 2
        evens = [e for e in range(4) if e % 2 == 0]
        for step in range(count):
            total += step
        return jnp.sqrt(shifted)

    value = outer(1.0, 2.0)
    """).splitlines(keepends=True)


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


def test_parameters_then_the_names_the_body_assigns_in_order():
    assert local_names(SOURCE, _line("jnp.sqrt(shifted)")) == [
        "x",
        "scale",
        "key",
        "rest",
        "options",
        "shifted",
        "total",
        "count",
        "helper",
        "squash",
        "evens",
        "step",
    ]


def test_a_nested_function_has_its_own_names():
    assert local_names(SOURCE, _line("inner_only = h")) == ["h", "inner_only"]


def test_a_lambda_on_the_line_is_the_innermost_function():
    assert local_names(SOURCE, _line("squash = lambda")) == ["v"]


def test_module_code_or_source_that_does_not_parse_has_no_names():
    assert local_names(SOURCE, _line("value = outer")) == []
    assert local_names(["%jaxdbg nans on\n", "def f(x):\n", "    return x\n"], 3) == []
