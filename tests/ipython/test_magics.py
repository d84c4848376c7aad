"""The %jaxdbg subcommand table, outside a kernel (the kernel tests drive the magic itself)."""

from __future__ import annotations

import io
import re

import jax
import pytest

from jaxdbg.ipython import magics


@pytest.fixture
def recorded():
    calls = []

    def handler(args: str) -> None:
        if args == "bad":
            raise magics.UsageError("bad is not a level")
        calls.append(args)

    magics.register_subcommand("level", "level N", handler)
    yield calls
    magics.unregister_subcommand("level")


def test_registered_subcommand_gets_its_arguments_and_is_listed(recorded, capsys):
    magics.jaxdbg_magic("level  3 ")
    assert recorded == ["3"]
    magics.jaxdbg_magic("nonsense")
    assert "%jaxdbg level N" in capsys.readouterr().out


def test_usage_error_prints_the_usage_and_the_handler_changed_nothing(recorded, capsys):
    magics.jaxdbg_magic("level bad")
    assert capsys.readouterr().out == "%jaxdbg level: bad is not a level\nusage: %jaxdbg level N\n"
    assert recorded == []


def test_unknown_subcommand_changes_no_flag(capsys):
    before = {flag: getattr(jax.config, flag) for flag in magics.FLAGS}
    magics.jaxdbg_magic("nans")  # no on/off
    magics.jaxdbg_magic("frobnicate on")
    out = capsys.readouterr().out
    assert "usage: %jaxdbg nans on|off" in out and "unknown subcommand 'frobnicate'" in out
    assert {flag: getattr(jax.config, flag) for flag in magics.FLAGS} == before


@pytest.mark.parametrize("asked", ["help", "-h", "--help", "?"])
def test_asking_for_help_prints_the_usage_alone(asked, capsys):
    magics.jaxdbg_magic(asked)
    out = capsys.readouterr().out
    assert out == magics.usage() + "\n" and "unknown" not in out


def test_parse_switch():
    assert magics.parse_switch(" ON ") is True and magics.parse_switch("off") is False
    with pytest.raises(magics.UsageError):
        magics.parse_switch("maybe")


def test_status_table_outside_a_kernel_prints_with_rich():
    from rich.console import Console

    table = magics.status_table()
    text = str(table)
    assert re.search(r"panel clicks +typed prompt +not running in an IPython kernel", text)
    assert "cpu ×" in text and re.search(r"jax_log_compiles +off", text)
    buffer = io.StringIO()
    Console(file=buffer, width=140).print(table)
    assert "jaxdbg status" in buffer.getvalue() and "typed prompt" in buffer.getvalue()
    html = table._repr_html_()
    assert "<th" in html and "&lt;" not in html


def test_infs_and_nans_switch_their_own_flag_and_the_watch_stays_while_either_is_on(capsys):
    from jaxdbg.capture import nan_watch

    try:
        magics.jaxdbg_magic("infs on")
        assert jax.config.jax_debug_infs and not jax.config.jax_debug_nans and nan_watch.enabled()
        assert "an Inf opens the debugger where it was made" in capsys.readouterr().out
        magics.jaxdbg_magic("nans on")
        magics.jaxdbg_magic("infs off")
        assert nan_watch.enabled() and jax.config.jax_debug_nans and not jax.config.jax_debug_infs
        magics.jaxdbg_magic("nans off")
        assert not nan_watch.enabled()
    finally:
        nan_watch.set_enabled(False, infs=True)
        nan_watch.set_enabled(False)


def test_unload_keeps_library_frames_typed_at_a_stop_after_the_magic(monkeypatch, capsys):
    """%unload_ext puts back what %jaxdbg changed, not what the user chose since."""
    import jax.numpy as jnp

    import jaxdbg
    from jaxdbg import config
    from jaxdbg.engine import breakpoint_state, library_frames
    from support.transcript import Transcript

    monkeypatch.delenv(config.LIBRARY_FRAMES.name, raising=False)
    magics.jaxdbg_magic("library_frames off")
    t = Transcript("library_frames on", "c")
    try:
        jax.jit(lambda x: (jaxdbg.breakpoint(**t.options), x + 1)[1])(jnp.ones(2))
    finally:
        breakpoint_state.reset()
    assert t.stops() and library_frames.shown(), t.text
    magics._restore_environment()  # what %unload_ext does to the settings
    assert library_frames.shown()  # the choice typed at the stop stands

    magics.jaxdbg_magic("library_frames on")
    magics._restore_environment()  # what %unload_ext does to the settings
    assert config.LIBRARY_FRAMES.raw() == "on"  # as it was before the magic changed it
    monkeypatch.delenv(config.LIBRARY_FRAMES.name)
    magics.jaxdbg_magic("library_frames on")
    magics._restore_environment()  # what %unload_ext does to the settings
    assert not library_frames.shown()
