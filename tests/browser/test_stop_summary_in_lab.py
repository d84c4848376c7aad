"""The static summary a stop leaves in its cell stays compact after a long session.

Fifteen commands, most with long results, then Continue: the summary shows the banner,
the line, the last commands with their results cut to a few lines, and the earlier
commands and the rest of each result folded under ``<details>``; its height is measured
in the page, trusted and in an untrusted copy (styles stripped). Its text/plain twin
keeps every command. Screenshots go to test-artifacts/stop_summary_*.png.
"""

from __future__ import annotations

import json

import pytest

from support.lab_helpers import (
    ARTIFACTS,
    EXTENSION_SETUP_CELL,
    JITTED_STOP_CELL,
    cell,
    live_panel,
    open_notebook,
    run_cell,
    type_command,
    wait_for_output_text,
    wait_log,
)

pytestmark = pytest.mark.browser

SETUP_CELL = EXTENSION_SETUP_CELL

STOP_CELL = JITTED_STOP_CELL

# 15 commands: tables of 30 lines, a 3,000-character line, short ones.
COMMANDS = [f"p jnp.arange({n} * 120.0).reshape(30, {n} * 4)" for n in range(1, 6)] + [
    "p 'x' * 3000",
    "p alpha_value",
    "whatis alpha_value",
    "p list(range(400))",
    "p jnp.eye(12)",
    "p alpha_value * 3",
    "w",
    "p {'k%d' % i: i for i in range(60)}",
    "p jnp.ones((25, 3))",
    "p alpha_value.sum()",
]

# A compact summary: fits in the notebook area of a laptop screen.
MAX_HEIGHT_PX = 480


def test_summary_of_a_long_session_is_compact(lab_page, lab_server):
    page = lab_page
    open_notebook(page, lab_server, "long-session.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    for n, line in enumerate(COMMANDS, start=1):
        type_command(panel, line)
        page.wait_for_function(
            "(n) => document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished)"
            " .jaxdbg-entry:not(.jaxdbg-pending)').length >= n",
            arg=n,
            timeout=60_000,
        )
    wait_log(page, panel, r"p alpha_value\.sum\(\)\s+Array\(6\., dtype=float32\)")
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result 6.0", timeout_s=60)

    static = cell(page, 1).locator(".jaxdbg-static")
    check_compact(page, static, "stop_summary_trusted")
    text = static.inner_text()
    assert text.startswith("Stopped at In[2]:3 in inner") and "In[2]:3: jaxdbg.breakpoint()" in text
    assert "Continued." in text
    # the last commands (the last is the F8 continue) and their results' first lines
    assert "(jaxdbg) p alpha_value.sum()" in text and "Array(6., dtype=float32)" in text
    assert "(jaxdbg) p jnp.ones((25, 3))" in text
    # the earlier ones are folded: "N more" opens them
    folded = static.locator("details > summary", has_text="more commands")
    assert folded.count() == 1 and "11 more commands" in folded.inner_text()
    assert not static.get_by_text("(jaxdbg) p 'x' * 3000").is_visible()
    folded.click()
    assert static.get_by_text("(jaxdbg) p 'x' * 3000").is_visible()
    # a long result: its first lines, then "N more lines" that opens the rest
    assert static.locator("details > summary", has_text="more lines").count() >= 3

    # the text/plain twin keeps every command
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    saved = json.loads((lab_server.root_dir / "long-session.ipynb").read_text())
    summary = [o for o in saved["cells"][1]["outputs"] if "text/html" in o.get("data", {})]
    assert len(summary) == 1
    plain = "".join(summary[0]["data"]["text/plain"])
    assert all(f"(jaxdbg) {c}" in plain for c in COMMANDS), plain[:3000]
    assert plain.startswith("Stopped at") and plain.endswith("Continued.")

    # untrusted: the sanitizer keeps <details>, so the summary stays compact
    saved["metadata"]["changed"] = True
    (lab_server.root_dir / "long-untrusted.ipynb").write_text(json.dumps(saved))
    lab_server.shutdown_kernels()
    page.goto(lab_server.lab_url("long-untrusted.ipynb"), wait_until="domcontentloaded")
    out = cell(page, 1).locator(".jp-OutputArea-output").filter(has_text="Stopped at")
    out.wait_for(timeout=60_000)
    check_compact(page, out, "stop_summary_untrusted")
    assert "11 more commands" in out.inner_text()


def check_compact(page, element, name: str) -> None:
    element.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    element.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    height = element.evaluate("e => e.getBoundingClientRect().height")
    assert height <= MAX_HEIGHT_PX, height
