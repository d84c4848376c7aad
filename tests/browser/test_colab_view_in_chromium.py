"""The Colab stop view's buttons and command box in a real Chromium page.

Colab cannot run here, so this checks the page side of the eval_js round trip: the
script that ``jaxdbg.frontends.colab`` hands to ``google.colab.output.eval_js`` returns a promise
that a click on a frame or command button, or Enter in the command box, resolves with
the command — also when the script starts before the view's render reaches the page.
Screenshots of the light and dark views go to test-artifacts/.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxdbg.engine.frames import Frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.frontends import colab, colab_view
from support.lab_helpers import save_screenshot

# Colab's theme variables, as its dark theme sets them in an output frame.
DARK = """<style>html[theme=dark] { --colab-primary-text-color: #e3e3e3;
  --colab-primary-surface-color: #1f1f1f; --colab-secondary-surface-color: #2d2d2d;
  --colab-border-color: #5f6368; --colab-highlighted-surface-color: #3c4043; }
html[theme=dark] body { background: #1f1f1f; }</style>"""


def _session() -> Session:
    source = ["def loss(w, x):\n", "    h = jnp.tanh(x @ w)\n", "    jaxdbg.breakpoint()\n", "    return h.sum()\n"]
    inner = Frame("<cell In[3]>", 3, "loss", {"h": jnp.ones((2, 3)), "note": "<b>x</b>"}, {}, source, 1)
    outer = Frame("train.py", 10, "step", {"w": jnp.zeros((3, 3))}, {}, [], 1)
    return Session([inner, outer], StopInfo(batch_index=(0,), batch_size=(2,)))


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def _show(page, html: str) -> None:
    """Replace the output area's content, as a display update does in the same page."""
    page.evaluate("(h) => { document.body.innerHTML = h; }", html)


def _start_waiting(page, view_id: str, sequence: int) -> None:
    script = colab._WAIT_FOR_COMMAND_JS % {"view": view_id, "sequence": sequence}
    page.evaluate("(s) => { window.__reply = undefined; eval(s).then((v) => { window.__reply = v; }); }", script)


def _reply(page) -> str:
    page.wait_for_function("window.__reply !== undefined")
    return page.evaluate("window.__reply")


def test_buttons_and_enter_resolve_the_pending_command(page):
    s = _session()
    page.set_content(colab_view.render_stop(s, [], "v1", 1, live=True))
    _start_waiting(page, "v1", 1)
    page.click('button[data-jaxdbg-command="frame 1"]')
    assert _reply(page) == "frame 1"
    log = [colab_view.log_entry("p note", s.execute("p note"))]
    s.execute("frame 1")

    _show(page, colab_view.render_stop(s, log, "v1", 2, live=True))
    _start_waiting(page, "v1", 2)
    page.fill("input.jaxdbg-command", "p w.shape")
    page.press("input.jaxdbg-command", "Enter")
    assert _reply(page) == "p w.shape"
    assert page.locator(".jaxdbg-log").inner_text().count("<b>x</b>") == 1  # shown, not markup
    save_screenshot(page, "colab-view-light")


def test_script_started_before_the_render_arrives(page):
    s = _session()
    page.set_content(colab_view.render_stop(s, [], "v2", 1, live=True))
    _start_waiting(page, "v2", 2)  # render 2 is not in the page yet
    page.click('button[data-jaxdbg-command="up"]')  # a click on the old render is not it
    page.wait_for_timeout(200)
    assert page.evaluate("window.__reply") is None
    _show(page, colab_view.render_stop(s, [], "v2", 2, live=True))
    page.click('button[data-jaxdbg-command="continue"]')
    assert _reply(page) == "continue"


def test_dark_theme_view(page):
    s = _session()
    page.set_content(DARK + colab_view.render_stop(s, [], "v3", 1, live=True))
    page.evaluate("document.documentElement.setAttribute('theme', 'dark')")
    colour = page.evaluate("getComputedStyle(document.querySelector('.jaxdbg-colab')).backgroundColor")
    assert colour == "rgb(31, 31, 31)"
    text = page.evaluate("getComputedStyle(document.querySelector('.jaxdbg-banner')).color")
    assert text == "rgb(227, 227, 227)"
    save_screenshot(page, "colab-view-dark")
