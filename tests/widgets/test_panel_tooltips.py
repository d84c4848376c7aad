"""The panel's buttons take their tooltips from the command table."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jaxdbg
from jaxdbg.engine.command_table import TABLE, CommandTable
from jaxdbg.engine.frames import live_frame
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg_widgets.panel import state
from jaxdbg_widgets.panel.panel import DebuggerPanel

PANEL_JS = Path(state.__file__).resolve().parents[1] / "static" / "panel.js"


def _panel() -> DebuggerPanel:
    return DebuggerPanel(jaxdbg.Session([live_frame(sys._getframe())], StopInfo()))


def test_every_button_tooltip_is_its_commands_help():
    tips = _panel().widget.tooltips
    assert set(tips) == set(state.BUTTON_COMMANDS)
    for line in ("continue", "up", "down", "skip", "quit", "disable", "ignore"):
        assert tips[line] == TABLE.get(line).summary, line
    assert tips["continue all"] == TABLE.get("continue").sub_word("all").summary


def test_the_browser_code_runs_the_lines_it_has_tooltips_for():
    source = PANEL_JS.read_text(encoding="utf-8")
    assert 'model.get("tooltips")' in source
    ran = set(re.findall(r'run\("([a-z ]+)"\)', source)) | {"ignore"}  # ignore runs `ignore ${n}`
    assert ran == set(state.BUTTON_COMMANDS)
    assert set(re.findall(r'tip\("([a-z ]+)"\)', source)) == set(state.BUTTON_COMMANDS)


def test_a_button_whose_command_is_missing_is_hidden(monkeypatch):
    without = CommandTable()
    for command in TABLE.commands():
        if command.name != "disable":
            without.add(command)
    monkeypatch.setattr(state, "COMMANDS", without)
    p = _panel()
    assert "disable" not in p.widget.tooltips
    monkeypatch.undo()
    assert "disable" in _panel().widget.tooltips
    # The browser hides the many-stops group unless the table has each of its commands.
    source = PANEL_JS.read_text(encoding="utf-8")
    group = re.search(r"const MANY_STOPS = \[([^\]]*)\];", source)
    assert group and set(re.findall(r'"([a-z ]+)"', group.group(1))) == {"continue all", "disable", "ignore"}
    assert "manyStops.hidden = !MANY_STOPS.every((line) => tips[line])" in source
