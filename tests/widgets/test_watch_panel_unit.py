"""The panel's watch table and breakpoints table as the browser receives them, without a kernel."""

import jax.numpy as jnp

from jaxdbg.engine import breakpoint_state, watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg_widgets.panel.panel import DebuggerPanel


def _panel() -> tuple[DebuggerPanel, int]:
    number = breakpoint_state.register(__file__, 10_001, "step")
    frame = Frame(
        __file__,
        1,
        "step",
        {"loss": jnp.float32(0.25), "grads": jnp.array([1.0, jnp.nan])},
        {},
        ["jaxdbg.breakpoint()\n"],
        1,
    )
    session = Session([frame], StopInfo(breakpoint_id=number, hit=3))
    session.watch_book = watches.WatchBook()
    return DebuggerPanel(session), number


def _run(panel: DebuggerPanel, line: str) -> None:
    panel.send({"type": "run", "id": "t:1", "line": line, "typed": False})


def test_the_watch_box_line_fills_the_watch_table_with_numbers_and_statistics():
    panel, number = _panel()
    assert panel.widget.watches == {"breakpoint": number, "watches": []}
    _run(panel, "watch loss")
    _run(panel, "watch grads")
    _run(panel, "watch nope")
    loss, grads, nope = panel.widget.watches["watches"]
    assert loss["values"] == [{"hit": 3, "text": "0.25", "error": "", "number": 0.25, "stats": None}]
    assert grads["values"][0]["number"] is None
    assert grads["values"][0]["stats"] == {"min": 1.0, "max": 1.0, "mean": 1.0, "nan": 1, "inf": 0}
    assert nope["values"][0]["error"].startswith("NameError")
    _run(panel, "unwatch loss")
    assert [w["expression"] for w in panel.widget.watches["watches"]] == ["grads", "nope"]


def test_the_breakpoints_table_shows_what_its_fields_edit():
    panel, number = _panel()
    _run(panel, f"condition {number} loss > 1")
    _run(panel, f"ignore {number} 2")
    _run(panel, f"log {number} loss={{loss:.2f}}")
    _run(panel, f"disable {number}")
    row = next(r for r in panel.widget.breakpoints if r["number"] == number)
    assert row == {**row, "condition": "loss > 1", "ignore": 2, "log": "loss={loss:.2f}", "enabled": False}
    for line in (f"condition {number}", f"ignore {number} 0", f"log {number}", f"enable {number}"):
        _run(panel, line)
    row = next(r for r in panel.widget.breakpoints if r["number"] == number)
    assert (row["condition"], row["ignore"], row["log"], row["enabled"]) == ("", 0, "", True)
