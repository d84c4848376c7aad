"""One source window model: every view numbers and marks the same lines."""

from __future__ import annotations

import re

from markupsafe import Markup

from jaxdbg.engine import source_window as source
from jaxdbg.engine.outputs import SourceView
from jaxdbg.frontends import colab_view
from jaxdbg.views import theme

VIEW = SourceView("f.py", 8, ["a = 1", "b = '<b>'", "c = 3"], current_lineno=9)


def test_lines_are_numbered_to_one_width_and_the_current_one_marked():
    lines = source.window_lines(VIEW)
    assert [(line.number_text, line.current) for line in lines] == [(" 8", False), (" 9", True), ("10", False)]
    assert [line.plain for line in lines] == [" 8    a = 1", " 9 -> b = '<b>'", "10    c = 3"]


def test_the_plain_text_is_the_heading_and_the_numbered_lines():
    assert source.plain_text(VIEW, "f.py:9") == "f.py:9\n 8    a = 1\n 9 -> b = '<b>'\n10    c = 3"
    assert source.plain_text(SourceView("f.py", 1, [], 1), "h") == "h\n(source not available)"


def test_the_html_views_number_the_same_lines():
    html = str(theme.highlighted_lines(VIEW.lines, VIEW.first_lineno, VIEW.current_lineno))
    assert re.findall(r">(\s*\d+) </span>", html) == [" 8", " 9", "10"]
    assert html.count("jaxdbg-current-line") == 1
    plain = colab_view._plain_source(VIEW)
    assert isinstance(plain, Markup)
    assert '<span class="jaxdbg-current"> 9 -&gt; b = &#39;&lt;b&gt;&#39;</span>' in plain
