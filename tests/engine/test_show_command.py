"""``show EXPR`` at a real stop in the terminal: the picture of an array, of each array
of a pytree, and clear errors for what cannot be drawn (the session goes on)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jaxdbg
from jaxdbg.engine import command_table as commands
from support.transcript import Transcript


def stopped(x, t):
    act = jnp.log(x)  # NaN below 0, -inf at 0
    params = {"w": x.astype(jnp.bfloat16), "on": x > 0}
    label = "layer"  # noqa: F841
    jaxdbg.breakpoint(**t.options)
    return act.sum() + params["w"].sum()


def run(*lines):
    t = Transcript(*lines)
    jax.jit(lambda x: stopped(x, t))(jnp.array([[-1.0, 0.0, 1.0], [2.0, 3.0, 4.0]]))
    return t


def test_show_draws_the_array_with_its_marked_cells():
    t = run("show act", "c")
    lines = t.answers("show act")[0].splitlines()
    assert lines[0] == "act: float32[2,3]"  # plain text: not a terminal
    assert lines[1] == "Ni0" and lines[2][-1] == "@"  # NaN, -inf, log(1) == 0; the maximum
    assert lines[3] == "0 .. 1.386  nan=1  -inf=1  zero=1  (nan at [0, 0], -inf at [0, 1])"


def test_show_draws_each_array_of_a_pytree():
    t = run("show params", "c")
    text = t.answers("show params")[0]
    assert "params['on']:" in text and "bool[2,3]" in text
    assert "params['w']:" in text and "bfloat16[2,3]" in text


def test_show_says_what_it_cannot_draw_and_the_session_goes_on():
    t = run("show label", "show nope", "show", "p 1 + 1", "c")
    assert t.answers("show label") == ["*** label holds no array to show (its type is str)"]
    assert "NameError" in t.answers("show nope")[0]
    assert t.answers("show")[0].startswith("*** show needs an expression")
    assert t.answers("p 1 + 1") == ["2"]


def test_show_is_in_the_command_table_and_draws_in_colour_at_a_terminal():
    import io

    from rich.console import Console

    from jaxdbg.frontends import cli

    assert "heatmap" in commands.TABLE.summary_of("show")
    outputs = []

    def backend(session, **_):
        outputs.append(session.execute("show act"))
        session.execute("continue")

    jaxdbg.register_debugger("show-test", backend, priority=-1000)
    try:

        @jax.jit
        def f(x):
            act = jnp.log(x)
            jaxdbg.breakpoint(backend="show-test")
            return act

        f(jnp.array([-1.0, 1.0, 2.0]))
    finally:
        jaxdbg.unregister_debugger("show-test")
    out = io.StringIO()
    cli.render(Console(file=out, force_terminal=True, color_system="truecolor", width=80), outputs[0])
    assert "▀" in out.getvalue() and "38;2;213;94;0" in out.getvalue()  # NaN's vermilion


def test_show_of_a_pytree_names_each_picture_by_its_path_and_draws_a_tiny_leaf_small():
    import re

    import pytest

    nnx = pytest.importorskip("flax.nnx", reason="the test extra installs flax")
    from jaxdbg.commands import show as show_command
    from jaxdbg.engine.frames import live_frame
    from jaxdbg.engine.session import Session

    model = nnx.Linear(4, 16, rngs=nnx.Rngs(0))  # noqa: F841 (shown from the frame)
    tiny = {"scale": jnp.ones(1), "w": jnp.ones((16, 4))}  # noqa: F841
    import sys

    session = Session([live_frame(sys._getframe())])
    shown = show_command.run(session, "model")
    assert "model.kernel: float32[4,16]" in shown.text and ".value" not in shown.text
    page = shown.pictures._repr_html_()
    assert re.findall(r"<figcaption[^>]*>([^<]*)</figcaption>", page) == ["model.bias", "model.kernel"]
    page = show_command.run(session, "tiny").pictures._repr_html_()
    sizes = dict(
        zip(
            re.findall(r"<figcaption[^>]*>([^<]*)</figcaption>", page),
            re.findall(r'width="(\d+)" height="(\d+)"', page),
        )
    )
    assert sizes["tiny['scale']"] == ("8", "8")  # one cell: a small square, not a 64-pixel block
    assert sizes["tiny['w']"] == ("16", "64")  # 4 pixels a cell, as before


def test_show_draws_a_column_as_one_row_and_says_so():
    """A Dense layer's (n, 1) kernel: one line across, not one cell a line."""
    t = Transcript("show column", "show column[:3]", "show row", "c")

    @jax.jit
    def f(x):
        column = x.reshape(-1, 1)  # noqa: F841
        row = x.reshape(1, -1)  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x

    f(jnp.arange(100.0))
    lines = t.answers("show column")[0].splitlines()
    assert (
        lines[0] == "column: float32[100,1]  transposed: its rows drawn across; sampled (evenly spaced): 64 of 100 rows"
    )
    assert len(lines) == 3 and len(lines[1]) == 64 and lines[1][0] == "0" and lines[1][-1] == "@", lines
    assert t.answers("show column[:3]")[0].splitlines()[1] == "0+@"  # zero, the middle of the ramp, its top
    assert t.answers("show row")[0].splitlines()[0] == "row: float32[1,100]  sampled (evenly spaced): 64 of 100 columns"
