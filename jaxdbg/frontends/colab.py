"""The ``colab`` debugger backend: a stop drawn as HTML in the paused Colab cell.

Colab's kernel is ipykernel 6 with no widget comms reachable while a cell runs, but
its stdin channel stays open. So the view is plain HTML (:mod:`jaxdbg.frontends.colab_view`),
and each command comes back through ``google.colab.output.eval_js``: the script
returns a promise that a button click (frame, Up, Down, Continue, Quit, Skip) or
Enter in the view's command box resolves; Colab carries its value back over stdin.
If that fails (an older Colab, another frontend), the typed ``(jaxdbg)`` prompt,
read with ``input()``, works alone. When the HTML cannot be drawn (a rendering
error, no markupsafe) the stop is shown as text; it is never skipped.
"""

from __future__ import annotations

import importlib.util
import json
import uuid
from typing import Any

from jaxdbg.engine.outputs import Output
from jaxdbg.engine.session import Session
from jaxdbg.frontends import colab_view, driver
from jaxdbg.frontends.colab_view import log_entry
from jaxdbg.internals import ipykernel_kernel
from jaxdbg.runtime import interrupts, notices, phrases
from jaxdbg.runtime.phrases import PROMPT

OPTIONS = ("context",)  # run_colab's keyword options

# Waits until this render of the view is in the page (the display update and this
# request travel on different channels), then resolves with the first command.
_WAIT_FOR_COMMAND_JS = """
(() => new Promise((resolve) => {
  const selector = '[data-jaxdbg-view="%(view)s"][data-jaxdbg-render="%(sequence)d"]';
  const bind = (root) => {
    let done = false;
    const send = (command) => { if (!done) { done = true; resolve(command); } };
    root.querySelectorAll('[data-jaxdbg-command]').forEach((button) => {
      button.addEventListener('click', () => send(button.dataset.jaxdbgCommand));
    });
    const box = root.querySelector('input.jaxdbg-command');
    if (box) {
      box.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') { event.preventDefault(); send(box.value); }
      });
      box.focus();
    }
  };
  const found = document.querySelector(selector);
  if (found) { bind(found); return; }
  const observer = new MutationObserver(() => {
    const root = document.querySelector(selector);
    if (root) { observer.disconnect(); bind(root); }
  });
  observer.observe(document.documentElement, {childList: true, subtree: true});
}))()
"""


def importable() -> bool:
    """Whether ``google.colab`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def available() -> bool:
    """True inside a Colab runtime (``google.colab`` importable, in a kernel)."""
    if not importable():
        return False

    return ipykernel_kernel.current_kernel() is not None


class _View:
    """The stop's display in the cell: HTML when it can be drawn, else text."""

    def __init__(self, session: Session, context: int) -> None:
        self.session = session
        self.context = context
        self.view_id = uuid.uuid4().hex
        self.sequence = 0
        self.log: list[Any] = []
        self.handle: Any = None
        self.html_ok = True
        self.text_shown = 0  # log entries already printed in text mode

    def show(self, *, live: bool, note: str = "", final: bool = False) -> None:
        """Draw the stop: ``live`` with buttons and command box; ``final`` once it ended."""
        self.sequence += 1
        if self.html_ok:
            try:
                self._show_html(live, note, final)
                return
            except Exception as exc:  # never lose the stop over a drawing problem
                self.html_ok = False
                notices.notice(f"the HTML view failed ({type(exc).__name__}: {exc}); showing text instead.")
                self.text_shown = 0
        self._show_text(note)

    def _show_html(self, live: bool, note: str, final: bool) -> None:
        from IPython.display import HTML, display

        html: object  # what display() shows: a Rendered (HTML and text) or an HTML
        if final:
            html = colab_view.render_finished(self.session, self.log, self.view_id, self.sequence, note)
        else:
            html = HTML(
                colab_view.render_stop(
                    self.session, self.log, self.view_id, self.sequence, live=live, note=note, context=self.context
                )
            )
        if self.handle is None:
            self.handle = display(html, display_id=True)
        else:
            self.handle.update(html)

    def _show_text(self, note: str) -> None:

        if self.text_shown == 0:
            print(colab_view.render_text(self.session, self.context), flush=True)
        for entry in self.log[self.text_shown :]:
            print(f"{PROMPT}{entry.command}\n{entry.text}", flush=True)
        self.text_shown = len(self.log)
        if note:
            print(note, flush=True)

    def record(self, line: str, output: Any) -> None:

        self.log.append(log_entry(line, output))


def _command_from_page(view: _View) -> str:
    from google.colab import output  # the caller checked that it imports

    reply = output.eval_js(_WAIT_FOR_COMMAND_JS % {"view": view.view_id, "sequence": view.sequence})
    if not isinstance(reply, str):
        reply = "" if reply is None else json.dumps(reply)
    return reply


class ColabPage(driver.Frontend):
    """The stop as HTML in the cell; commands from its buttons and box, through
    ``eval_js``, or, when those cannot reach the paused cell, from ``input()``."""

    def __init__(self, context: int) -> None:
        self.context = context
        self.view: _View | None = None
        self.buttons = False  # whether commands come from the page

    def open(self, session: Session) -> None:
        if not driver.interactive_input_available():
            raise driver.NoInput(driver.no_input_reason())
        self.view = view = _View(session, self.context)
        self.buttons = view.html_ok
        view.show(live=True)

    def read(self, session: Session) -> str:
        # Off the main thread (a pmap stop) the interrupt is raised here, where the page's
        # reply and input() are polled for in Python: the main thread may be inside XLA
        # waiting for this very stop.
        with interrupts.running_command():
            return self._read()

    def _read(self) -> str:
        view = self.view
        assert view is not None
        if self.buttons and view.html_ok:
            try:
                return _command_from_page(view)
            except KeyboardInterrupt:
                raise
            except Exception as exc:
                self.buttons = False
                notices.notice(
                    f"the view's buttons cannot reach the paused cell here "
                    f"({type(exc).__name__}: {exc}); type debugger commands at the "
                    "prompt below instead (help lists them)."
                )
                view.show(live=False)  # no buttons that nothing would hear
        try:
            return input(PROMPT)
        except EOFError:
            raise  # the driver runs quit, as pdb does at end of input
        except Exception as exc:
            if not driver.is_stdin_unsupported(exc):
                raise
            raise driver.NoInput(driver.no_input_reason()) from exc

    def show(self, session: Session, line: str, output: Output) -> None:
        assert self.view is not None
        self.view.record(line, output)
        if not session.finished:
            self.view.show(live=self.buttons)

    def close(self, session: Session, fell_back: str | None = None) -> None:
        assert self.view is not None
        self.view.show(live=False, final=True)


def run_colab(session: Session, *, context: int = phrases.DEFAULT_CONTEXT) -> None:
    """Serve one stop in a Colab cell until the user continues, skips or quits."""
    driver.drive(session, ColabPage(context))
