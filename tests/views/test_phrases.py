"""The phrases every view shares are written once, in jaxdbg.runtime.phrases.

A view that spells one of them again (or the panel's browser code, which reads them
from the widget's ``phrases`` trait) fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxdbg.runtime import phrases

ROOT = Path(__file__).resolve().parents[2]
PHRASES_MODULE = ROOT / "jaxdbg" / "runtime" / "phrases.py"
# The literal text of each shared phrase, as another module would write it again.
WRITTEN_ONCE = ["(jaxdbg) ", "source not available", "(no locals)", "more characters"]
SOURCES = sorted(
    p
    for package in ("jaxdbg", "jaxdbg_widgets")
    for pattern in ("*.py", "*.js")
    for p in (ROOT / package).rglob(pattern)
)


def test_the_phrases_module_holds_each_phrase():
    text = PHRASES_MODULE.read_text(encoding="utf-8")
    assert all(phrase in text for phrase in WRITTEN_ONCE)


@pytest.mark.parametrize("phrase", WRITTEN_ONCE)
def test_no_other_module_writes_the_phrase_again(phrase):
    again = [
        str(p.relative_to(ROOT)) for p in SOURCES if p != PHRASES_MODULE and phrase in p.read_text(encoding="utf-8")
    ]
    assert not again, f"{phrase!r} is written again in {again}; use jaxdbg.runtime.phrases"


def test_the_default_context_is_defined_once():
    definitions = [
        str(p.relative_to(ROOT))
        for p in SOURCES
        if p.suffix == ".py"
        and re.search(r"^\s*def \w+\(.*\bcontext: int = \d", p.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert not definitions, f"a literal default context in {definitions}; use phrases.DEFAULT_CONTEXT"


def test_phrases_read_as_before():
    assert phrases.more_characters(1234) == "1,234 more characters"
    assert phrases.no_source("In[3]:4") == "(source not available for In[3]:4)"
    assert phrases.echo("p x") == "(jaxdbg) p x"
    browser = phrases.browser_phrases()
    assert browser["moreCharacters"].replace("{count}", "1,234") == phrases.more_characters(1234)


def test_array_statistics_read_the_same_in_every_view():
    import sys

    import numpy as np

    from jaxdbg.engine.frames import live_frame
    from jaxdbg.engine.session import Session
    from jaxdbg.frontends import colab_view
    from jaxdbg_widgets.panel import state

    many_nans = np.full(2000, np.nan, dtype=np.float32)  # the local shown
    many_nans[:500] = 1.0
    session = Session([live_frame(sys._getframe())])
    row = next(r for r in session.locals_table().locals if r.name == "many_nans")
    expected = "min=1 max=1 mean=1 of finite values nan=1,500 (nan at [500], nan at [501], nan at [502] and 1,497 more)"
    assert row.details() == expected
    assert expected in session.locals_table().text
    assert state.local_row("many_nans", many_nans)["summary"] == expected
    assert expected in colab_view.render_stop(session, [], "v", 1, live=False)
