"""The HTML and text renderers of the engine's data (jaxdbg.views)."""

import re

import jax
import jax.numpy as jnp
from markupsafe import Markup

import jaxdbg
from jaxdbg.engine.outputs import LogEntry, Resume, SourceView, StopSummary
from jaxdbg.views import html, text


def test_source_is_numbered_marks_the_current_line_and_takes_theme_colours():
    view = SourceView("f.py", 10, ["a = 1", "b = '<b>'", "c = 3"], current_lineno=11)
    out = html.source(view, "> f.py:11 in <module>")
    assert isinstance(out, Markup)
    assert "&gt; f.py:11 in &lt;module&gt;" in out  # the engine's heading, escaped
    code = re.search(r'<pre class="jaxdbg-code-lines"[^>]*>(.*)</pre>', out, re.S).group(1)
    lines = code.rstrip("\n").split("\n")  # one line of markup per source line
    assert len(lines) == 3 and all(line.startswith('<span class="jaxdbg-line') for line in lines)
    plain = [re.sub(r"<[^>]+>", "", line) for line in lines]
    assert plain[0].startswith("10 ") and plain[2].startswith("12 ")
    assert plain[1].startswith("11 → ") and "jaxdbg-current-line" in lines[1]  # marked in words
    assert "&lt;b&gt;" in lines[1] and "<b>" not in out.split("</div>", 1)[1]  # code is escaped
    # colours only through theme variables: no literal colour survives an untrusted
    # notebook's sanitizer to clash with a dark page (#ffffcc was pygments' highlight)
    styles = " ".join(re.findall(r'style="([^"]*)"', out))
    assert "--jp-mirror-editor-" in styles and "--jp-brand-color1" in styles
    assert not re.search(r"(?<![-\w])(color|background(-color)?):\s*(#|rgb)", styles), styles
    assert "(source not available)" in html.source(SourceView("f.py", 1, [], 1), "h")


def _summary(log=()):
    return StopSummary(
        "Stopped at x.py:3 in f (mesh x=8)",
        "x.py:3",
        "jaxdbg.breakpoint(label='<i>')",
        tuple(log),
        Resume.CONTINUE.outcome,
    )


def test_stop_summary_escapes_by_type_and_has_a_text_twin():
    entries = [
        LogEntry("p '<script>'", "'<script>'"),
        LogEntry("p 1/0", "*** ZeroDivisionError", error=True),
        LogEntry("sharding of y", "", html=Markup("<table><tr><td>ok</td></tr></table>")),
        LogEntry("p big", "x" * 5_000),
    ]
    shown = html.stop_summary_display(_summary(entries), limit=100)
    bundle = shown._repr_mimebundle_()
    page = bundle["text/html"]
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "label=&#39;&lt;i&gt;&#39;" in page  # the stopped-at line, escaped
    assert "<table><tr><td>ok</td></tr></table>" in page  # markup made by a view stays markup
    assert "jaxdbg-error" in page and "4,900 more characters" in page
    assert page.rstrip("</div>").endswith("Continued.")
    plain = bundle["text/plain"]
    assert plain.splitlines()[:3] == [
        "Stopped at x.py:3 in f (mesh x=8)",
        "x.py:3: jaxdbg.breakpoint(label='<i>')",
        "(jaxdbg) p '<script>'",
    ]
    assert plain.endswith("Continued.") and "... 4,900 more characters" in plain
    assert str(shown) == plain


def test_session_summary_uses_the_engine_phrases(temporary_backend):
    seen = {}

    def backend(session):
        out = session.execute("p y")
        session.execute("c")
        seen["summary"] = session.summary([LogEntry("p y", out.text)])
        seen["heading"] = session.heading()

    temporary_backend("summary-test", backend)

    @jax.jit
    def f(x):
        y = x * 2
        jaxdbg.breakpoint(backend="summary-test")
        return y

    f(jnp.float32(2))
    summary = seen["summary"]
    assert summary.banner.startswith("Stopped at ") and " in f (breakpoint " in summary.banner
    assert summary.line == 'jaxdbg.breakpoint(backend="summary-test")'
    assert summary.outcome == "Continued." == Resume.CONTINUE.outcome
    assert seen["heading"] == f"> {summary.location} in f"
    assert text.stop_summary(summary).splitlines()[2:4] == ["(jaxdbg) p y", "Array(4., dtype=float32)"]
