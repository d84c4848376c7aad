"""The Colab stop view as HTML: escaped, themed, and readable without pygments or source."""

from __future__ import annotations

import jax.numpy as jnp
from markupsafe import escape

from jaxdbg.engine.command_table import TABLE as COMMANDS
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.frontends import colab_view


def _session(source: list[str] | None = None, **local_values) -> Session:
    src = source if source is not None else ["def f(x):\n", "    y = x + 1\n", "    stop()\n", "    return y\n"]
    frame = Frame("<cell-1>", 3, "f<script>", dict(local_values), {}, src, 1)
    outer = Frame("outer.py", 10, "outer", {}, {}, [], 1)
    return Session([frame, outer], StopInfo(batch_index=(1,), batch_size=(3,)))


def test_every_user_string_is_escaped():
    s = _session(name="<img src=x onerror=alert(1)>", y=jnp.arange(3.0))
    log = [colab_view.log_entry('p "<script>"', s.execute('p "<script>"'))]
    html = colab_view.render_stop(s, log, "v1", 1, live=True)
    assert "<img" not in html and "<script>" not in html.replace("<style>", "")
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "f&lt;script&gt;" in html  # a function name too
    assert "&#39;&lt;script&gt;&#39;" in html or "&#34;&lt;script&gt;&#34;" in html


def test_live_view_has_buttons_and_theme_variables():
    html = colab_view.render_stop(_session(y=jnp.arange(3.0)), [], "abc", 4, live=True)
    for command in ("frame 0", "frame 1", "up", "down", "continue", "skip", "quit"):
        assert f'data-jaxdbg-command="{command}"' in html
    assert 'data-jaxdbg-view="abc" data-jaxdbg-render="4"' in html
    assert "var(--colab-primary-text-color" in html and "var(--colab-primary-surface-color" in html
    assert "html[theme=dark] .jaxdbg-colab .highlight" in html  # dark token colours
    assert 'class="hll"' in html and "float32[3]" in html
    assert "batch 2/3" in html


def test_each_button_says_what_its_command_does():
    html = colab_view.render_stop(_session(y=jnp.arange(3.0)), [], "abc", 4, live=True)
    for command in ("up", "down", "continue", "skip", "quit"):
        help_text = COMMANDS.summary_of(command)
        assert help_text
        assert f'data-jaxdbg-command="{command}" title="{escape(help_text)}"' in html


def test_finished_view_has_no_buttons_and_a_text_twin():
    s = _session(y=jnp.arange(3.0))
    log = [colab_view.log_entry("p y", s.execute("p y"))]
    s.execute("c")
    done = colab_view.render_finished(s, log, "abc", 2)
    bundle = done._repr_mimebundle_()
    assert "data-jaxdbg-command" not in bundle["text/html"] and "<input" not in bundle["text/html"]
    assert "Continued." in bundle["text/html"] and "var(--colab-border-color" in bundle["text/html"]
    assert "(jaxdbg) p y\nArray([0., 1., 2.], dtype=float32)" in bundle["text/plain"]


def test_a_frame_without_source_says_so():
    html = colab_view.render_stop(_session(source=[]), [], "abc", 1, live=True)
    assert "(source not available for &lt;cell-1&gt;:3)" in html


def test_long_results_are_truncated_in_the_log():
    s = _session()
    log = [colab_view.log_entry("p 'x' * 100000", s.execute("p 'x' * 100000"))]
    html = colab_view.render_stop(s, log, "abc", 1, live=True)
    assert "more characters" in html and len(html) < 60_000


def test_the_live_view_plots_a_watched_scalar_with_one_point_per_hit():
    from jaxdbg.engine import watches

    frame = Frame("<cell-1>", 3, "f", {"loss": jnp.float32(2.0)}, {}, ["def f():\n", "    pass\n", "    stop()\n"], 1)
    s = Session([frame], StopInfo(breakpoint_id=7, hit=3))
    s.watch_book = watches.WatchBook()
    s.watch_book.add(7, "loss")
    for hit in (1, 2, 3):
        s.watch_book.record(7, hit, [frame])
    s.watch_book.add(7, "loss<1")  # no value yet; its expression is escaped
    html = colab_view.render_stop(s, [], "abc", 1, live=True)
    assert html.count('<svg class="jaxdbg-watch-plot"') == 1 and html.count("<circle") == 3
    assert ">loss</code>" in html and "3 hits" in html and "loss over 3 hits" in html
    assert ">loss&lt;1</code>" in html and "loss<1" not in html


def test_the_live_view_has_no_watch_table_without_watches():
    html = colab_view.render_stop(_session(y=jnp.arange(3.0)), [], "abc", 1, live=True)
    assert "jaxdbg-watches" not in html
