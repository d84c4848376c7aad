"""The debugger panel as a pure view, without a kernel.

Sessions come from real breakpoints: a test backend builds the panel inside the stop
and drives it there, as the widget backend's loop would (with no channel, commands
posted by handlers run at once).
"""

from __future__ import annotations

import io
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.frames import live_frame
from jaxdbg.session import Session
from jaxdbg_widgets import panel as panel_mod
from jaxdbg_widgets.backend import run_widget_debugger
from jaxdbg_widgets.panel import DebuggerPanel

_script = {}


def _capture_backend(session, **_):
    """Build a panel for the stop and run the current test's script against it."""
    p = DebuggerPanel(session)
    _script["panel"] = p
    _script["fn"](p)
    if not session.finished:
        p.continue_button.click()


@pytest.fixture(autouse=True)
def _panel_backend(temporary_backend):
    temporary_backend("panel-test", _capture_backend)


def stop_in(fn, *args, script):
    """Run ``fn(*args)``, which hits a breakpoint with backend="panel-test"; return (result, panel)."""
    _script["fn"] = script
    result = fn(*args)
    return result, _script.pop("panel")


def g(x):
    y = x * 2
    z = {"sum": jnp.sum(y), "first": y[0], "label": "<b>not markup</b>"}
    jaxdbg.breakpoint(backend="panel-test")
    return y + 1


@jax.jit
def f(x):
    w = jnp.sin(x)
    return g(w)


def log_text(p: DebuggerPanel) -> str:
    return p.log_html.value


def current_lines(html_text: str) -> list[int]:
    return [int(n) for n in re.findall(r'class="jaxdbg-line jaxdbg-current" data-lineno="(\d+)"', html_text)]


# --------------------------------------------------------------------------- navigation


def test_frames_listed_innermost_first_and_click_selects():
    seen = {}

    def script(p):
        s = p.session
        seen["labels"] = [b.description for b in p.frame_buttons]
        seen["styles0"] = [b.button_style for b in p.frame_buttons]
        seen["down_disabled"] = p.down_button.disabled
        p.frame_buttons[1].click()
        seen["index"] = s.index
        seen["header"] = p.header.value
        seen["source"] = p.source.value
        seen["lineno1"] = s.frames[1].lineno
        seen["styles1"] = [b.button_style for b in p.frame_buttons]

    out, p = stop_in(f, jnp.arange(3.0), script=script)
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)) * 2 + 1, rtol=1e-6)
    assert seen["labels"][0].startswith("0  g  ") and seen["labels"][1].startswith("1  f  ")
    assert seen["styles0"][0] == "info" and seen["styles0"][1] == ""
    assert seen["down_disabled"]
    assert seen["index"] == 1 and seen["styles1"][1] == "info"
    assert "viewing frame 1: f" in seen["header"]
    assert current_lines(seen["source"]) == [seen["lineno1"]]
    assert "(jaxdbg) frame 1" in log_text(p)


def test_up_and_down_buttons_move_and_disable_at_the_ends():
    seen = {}

    def script(p):
        s = p.session
        last = len(s.frames) - 1
        p.up_button.click()
        seen["after_up"] = s.index
        for _ in range(last):
            p.up_button.click()
        seen["top"] = (s.index, p.up_button.disabled, last)
        p.down_button.click()
        seen["after_down"] = s.index

    _, p = stop_in(f, jnp.arange(3.0), script=script)
    assert seen["after_up"] == 1
    index, up_disabled, last = seen["top"]
    assert index == last and up_disabled
    assert "Oldest frame" in log_text(p)  # the extra click reached the session, which refused
    assert seen["after_down"] == last - 1


def test_source_pane_marks_the_current_line_in_a_centred_window():
    seen = {}

    def script(p):
        frame = p.session.frames[0]
        seen["html"] = p.source.value
        seen["lineno"] = frame.lineno
        seen["line"] = frame.line()

    stop_in(f, jnp.arange(3.0), script=script)
    html_text, lineno = seen["html"], seen["lineno"]
    assert current_lines(html_text) == [lineno]
    numbers = [int(n) for n in re.findall(r'data-lineno="(\d+)"', html_text)]
    assert numbers[0] >= lineno - panel_mod.CONTEXT_LINES and numbers[-1] <= lineno + panel_mod.CONTEXT_LINES
    assert "-&gt;" in html_text
    assert "breakpoint" in html_text and 'style="color:' in html_text  # pygments colours


# --------------------------------------------------------------------------- expression box


def test_expression_box_p_pp_statements_and_commands():
    seen = {}

    def script(p):
        p.expression.value = "y"
        p.submit()
        seen["cleared"] = p.expression.value
        p.pretty.value = True
        p.submit("{'a' * 30: list(range(30)), 'b': 1}")
        p.pretty.value = False
        p.submit("w2 = y + 1")
        p.submit("w2")
        p.submit("p y")                       # a debugger command typed in the box
        p.submit("c = 5")                     # Python, not `continue`
        p.submit("c")                         # now a name: shows 5, does not continue
        seen["finished"] = p.session.finished
        p.submit("where")
        seen["log"] = log_text(p)

    stop_in(f, jnp.arange(3.0), script=script)
    log = seen["log"]
    assert seen["cleared"] == ""
    assert re.search(r"\(jaxdbg\) y</div><pre[^>]*>Array\(\[0\. +, 1\.68\d*, 1\.81\d*\], dtype=float32\)", log)
    assert "&#x27;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa&#x27;: [0,\n" in log  # pprint went multi-line
    assert re.search(r"\(jaxdbg\) w2</div><pre[^>]*>Array\(\[1\. +, 2\.68\d*, 2\.81\d* *\], dtype=float32\)", log)
    assert "(jaxdbg) p y</div>" in log
    assert "(jaxdbg) c</div><pre class=\"jaxdbg-out\" style=\"margin:0;white-space:pre-wrap;\">5</pre>" in log
    assert not seen["finished"]
    assert "&gt;  0  g" in log  # where


def test_errors_are_escaped_and_marked():
    seen = {}

    def script(p):
        p.submit("raise ValueError('<img src=x onerror=alert(1)>')")
        p.submit("p z['label']")
        p.submit("undefined_name + 1")
        seen["log"] = log_text(p)

    stop_in(f, jnp.arange(3.0), script=script)
    log = seen["log"]
    assert "<img" not in log and "<b>not markup" not in log
    assert "&lt;img src=x onerror=alert(1)&gt;" in log
    assert "&#x27;&lt;b&gt;not markup&lt;/b&gt;&#x27;" in log
    errors = re.findall(r'<pre class="jaxdbg-out jaxdbg-error" style="[^"]*color:#c62828;[^"]*">([^<]*)</pre>', log)
    assert any("ValueError" in e for e in errors) and any("NameError" in e for e in errors)


def test_huge_result_is_truncated_with_show_more():
    seen = {}

    def script(p):
        p.submit("'x' * 100_000")
        seen["log"] = log_text(p)
        seen["more_visible"] = p.more_button.layout.display
        p.more_button.click()
        seen["expanded"] = log_text(p)
        seen["more_after"] = p.more_button.layout.display

    stop_in(f, jnp.arange(3.0), script=script)
    assert len(seen["log"]) < panel_mod.LOG_CHARS + 2_000
    assert "more characters (Show more)" in seen["log"]
    assert seen["more_visible"] is None and seen["more_after"] == "none"
    # expanded: everything the session kept (it cuts at 20k and says so)
    assert "x" * 19_000 in seen["expanded"] and "output truncated" in seen["expanded"]
    assert len(seen["expanded"]) < 25_000


# --------------------------------------------------------------------------- locals


def test_locals_table_columns_and_click_shows_value():
    seen = {}

    def script(p):
        seen["rows"] = {r[0]: r for r in p.locals_cells()}
        seen["widgets"] = len(p.locals_grid.children)
        seen["grid_text"] = " ".join(getattr(c, "value", "") for c in p.locals_grid.children)
        names = {b.description: b for b, _ in p._local_rows}
        names["y"].click()
        seen["log"] = log_text(p)

    stop_in(f, jnp.arange(3.0), script=script)
    row = seen["rows"]["y"]
    assert row[1:3] == ["Array", "float32[3]"]  # the engine's one shape notation
    assert "min=0 max=1.819 mean=1.167" in row[4]
    for column in panel_mod.LOCAL_COLUMNS:
        assert f"<b>{column}</b>" in seen["grid_text"]
    assert "min=0 max=1.819 mean=1.167" in seen["grid_text"]
    # two widgets a row (name button, details), plus the two column heads
    assert seen["widgets"] == 2 + 2 * len(seen["rows"])
    assert "(jaxdbg) pp y" in seen["log"]


def _frame_with_big_local():
    big = np.ones(10_000_000, dtype=np.float32)
    big[:3] = np.nan
    big[3] = np.inf
    small = 3
    return Session([live_frame(sys._getframe())])


def test_ten_million_element_local_is_summarised():
    p = DebuggerPanel(_frame_with_big_local())
    row = {r[0]: r for r in p.locals_cells()}["big"]
    assert row[1:3] == ["ndarray", "float32[10000000]"]
    assert "nan=3" in row[4] and "inf=1" in row[4] and "min=1 max=1 mean=1" in row[4]
    assert sum(len(getattr(c, "value", "")) for c in p.locals_grid.children) < 4_000
    # clicking it shows numpy's own summarised repr, not ten million numbers
    names = {b.description: b for b, _ in p._local_rows}
    names["big"].click()
    assert "..." in p.log_html.value and len(p.log_html.value) < 5_000


def test_sharded_local_click_shows_sharding_table():
    if jax.device_count() < 8:
        pytest.skip("needs 8 host devices (XLA_FLAGS)")
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
    sharded = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))

    def host_fn(a):
        jaxdbg.breakpoint(backend="panel-test")  # eager: the local keeps its sharding
        return a

    seen = {}

    def script(p):
        names = {b.description: b for b, _ in p._local_rows}
        names["a"].click()
        seen["log"] = log_text(p)
        seen["sharding_cell"] = {r[0]: r for r in p.locals_cells()}["a"][3]

    stop_in(host_fn, sharded, script=script)
    assert "P(&#x27;x&#x27;,) on mesh x=8" in seen["sharding_cell"]
    log = seen["log"]
    assert 'class="jaxdbg-sharding"' in log
    assert log.count("<tr><td>") == 8 and "[0:2]" in log and "[14:16]" in log


# --------------------------------------------------------------------------- buttons and the end


def test_skip_button_only_when_batched():
    seen = {}

    def script(p):
        seen.setdefault("skip", []).append(p.skip_button)
        seen.setdefault("info", []).append(p.session.info.batch_label())
        if p.skip_button is not None:
            seen["in_bar"] = p.skip_button in p.buttons.children
            p.skip_button.click()
            seen["resume"] = p.session.resume

    def h(x):
        jaxdbg.breakpoint(backend="panel-test")
        return x + 1

    out, _ = stop_in(jax.jit(jax.vmap(h)), jnp.arange(3.0), script=script)
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0])
    assert seen["skip"][0] is not None and seen["in_bar"] and seen["resume"] == "skip"
    assert seen["info"] == ["batch 1/3"]  # skip served no further element
    _, p = stop_in(f, jnp.arange(3.0), script=lambda p: None)
    assert p.skip_button is None and "Skip batch" not in [b.description for b in p.buttons.children]


def test_continue_collapses_to_static_summary():
    kept = {}

    def script(p):
        p.submit("p y")
        kept["widgets"] = [p.up_button, p.expression, p.source, *p.frame_buttons]
        p.continue_button.click()

    _, p = stop_in(f, jnp.arange(3.0), script=script)
    assert p.session.resume == "continue"
    assert len(p.widget.children) == 1
    static = p.widget.children[0].value
    assert static == p.finished_html
    assert "Stopped at" in static and "in g" in static
    assert "jaxdbg.breakpoint(backend=&#34;panel-test&#34;)" in static  # the stop line
    assert "(jaxdbg) p y" in static and "(jaxdbg) continue" in static and "Continued." in static
    assert all(w.comm is None for w in kept["widgets"])  # live widgets were closed
    p.up_button.click()  # a late click is ignored, not an error
    assert p.session.resume == "continue"


def test_quit_from_the_panel_stops_the_computation():
    with pytest.raises(Exception) as info:
        stop_in(f, jnp.arange(3.0), script=lambda p: p.quit_button.click())
    assert "DebuggerQuit" in repr(info.value) or "DebuggerQuit" in str(info.value)


def test_backend_falls_back_to_prompt_outside_a_kernel(capsys):
    session = _frame_with_big_local()
    out = io.StringIO()
    run_widget_debugger(session, stdin=io.StringIO("p small + 1\nc\n"), stdout=out)
    text = out.getvalue()
    assert session.resume == "continue"
    assert "panel cannot receive clicks here (not running in an IPython kernel)" in capsys.readouterr().out
    assert "(jaxdbg) p small + 1\n4\n" in text


def test_panel_handles_unknown_commands_without_raising():
    p = DebuggerPanel(_frame_with_big_local())
    p.handle(("bogus",))
    assert "unknown panel command" in p.log_html.value and "jaxdbg-error" in p.log_html.value


def _module_like_frame():
    import jax.numpy as jnp_module  # has .shape and .dtype attributes, like an array
    value = 1.5
    return Session([live_frame(sys._getframe())])


def test_locals_table_survives_values_that_cannot_be_summarised():
    p = DebuggerPanel(_module_like_frame())
    rows = {r[0]: r for r in p.locals_cells()}
    assert rows["value"][4] == "1.5"
    assert "jnp_module" in rows
