"""One source window model: every view numbers and marks the same lines."""

from __future__ import annotations

import re

from jaxdbg.engine import source_window as source
from jaxdbg.engine.outputs import SourceView
from jaxdbg.frontends import colab_view
from jaxdbg.views import source_tokens, theme
from jaxdbg_widgets.panel import state as panel_state

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
    colab = str(colab_view.highlighted_source(VIEW))
    assert re.findall(r'<span class="linenos">(\s*\d+)</span>', colab) == [" 8", " 9", "10"]
    assert re.findall(r'<span class="hll"><span class="linenos">(\s*\d+)</span>', colab) == [" 9"]
    assert "&lt;b&gt;" in colab and "<b>" not in colab


def test_every_highlighted_view_gets_one_row_of_tokens_per_line():
    lines = ['s = """one', 'two"""', "", "y = f(s)  # done"]
    rows = source_tokens.token_lines(lines)
    assert ["".join(text for _, text in row) for row in rows] == lines
    assert {str(kind) for kind, _ in rows[1]} == {"Token.Literal.String.Double"}  # the string's second line
    assert ("Token.Comment.Single", "# done") in [(str(kind), text) for kind, text in rows[3]]
    # The panel joins neighbouring runs of one class; the notebook HTML colours each run.
    panel = panel_state.highlight_lines(lines)
    assert panel[1] == [["s2", 'two"""']] and panel[2] == []
    html = str(theme.highlighted_lines(lines, 1, 4))
    assert html.count("jaxdbg-line") == 4 and "# done</span>" in html
