"""notebooks/replay.ipynb runs top to bottom in a real kernel, its stops answered at the
typed prompt with the commands its text tells the reader to type: a replay of the 437th
scan iteration, of one shard_map shard stepped into a helper, a NaN under shard_map
stopped at its line on the device that made it, and one made in the backward pass of a
shard_map, named at its forward line."""

from __future__ import annotations

import json

import pytest

from support.notebook_run import NOTEBOOKS, CellRun, cell_with, run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice, pytest.mark.timeout(400)]

SCAN = ["replay", "next", "next", "p i", "p total", "continue", "continue"]
SHARD = ["replay", "step", "step", "p mid", "where", "continue", "continue", "continue"]
NAN = ["where", "c"]
GRAD = ["where", "c"]


@pytest.fixture(scope="module")
def runs() -> list[CellRun]:
    return run_notebook("replay.ipynb", env={"JAXDBG_BACKEND": "cli"},
                        answers={"def body(carry, x)": SCAN, "def normalise(v)": SHARD,
                                 "def root(block)": NAN, "def safe_root(w)": GRAD})


def _markdown() -> str:
    cells = json.loads((NOTEBOOKS / "replay.ipynb").read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())


def test_the_notebook_tells_the_reader_the_commands_answered():
    text = _markdown()
    assert "type `replay`" in text and "`next` twice" in text and "`p i` shows 437 and `p total`" in text
    assert "`step` goes into `normalise`" in text and "`p mid`" in text and "`where`" in text
    assert "type `where`, then `c`" in text
    assert "At the stop type `where`, then `c`." in text.split("gradient of a shard_map")[1]


def test_the_scan_replay_runs_the_437th_iteration(runs):
    run = cell_with(runs, "def body(carry, x)")
    assert "This runs your Python again" in run.text
    assert "\nArray(437, dtype=int32)\n" in run.text
    assert "\nArray(95703., dtype=float32)\n" in run.text
    assert "The replay of body returned" in run.text and "Back at the stop" in run.text
    assert "final 499500.0" in run.text


def test_the_shard_map_replay_steps_into_the_helper(runs):
    run = cell_with(runs, "def normalise(v)")
    assert "in normalise  [replay]" in run.text
    assert "\nArray([-0.5,  0.5], dtype=float32)\n" in run.text
    assert "(device 3)" in run.text
    assert "[0.75 1.25 0.75 1.25 0.75 1.25 0.75 1.25]" in run.text


def test_the_nan_stops_at_its_line_on_its_device(runs):
    run = cell_with(runs, "def root(block)")
    line = run.line_of("jnp.sqrt(shifted)")
    assert f"Stopped at {run.name}:{line} in root (device 5; NaN made by sqrt)" in run.text
    assert run.errors == ["FloatingPointError"]


def test_the_gradients_nan_stops_at_the_forward_line_on_its_device(runs):
    run = cell_with(runs, "def safe_root(w)")
    line = run.line_of("jnp.where(w > 0, jnp.sqrt(w), 0.0)")
    assert (f"Stopped at {run.name}:{line} in safe_root (device 5; NaN made by mul in the "
            "backward pass (the gradient) of this line)") in run.text
    assert run.errors == ["FloatingPointError"]


def test_the_notebook_runs_under_nbclient_with_scripted_commands():
    """As CI's docs build runs it: no stdin, JAXDBG_COMMANDS answering every stop."""
    pytest.importorskip("nbclient")
    from support.notebook_run import run_with_nbclient

    commands = "; ".join(SCAN + SHARD + NAN + GRAD)
    cells = run_with_nbclient("replay.ipynb", commands)
    scan, shard, nan, grad = cells[1], cells[2], cells[4], cells[5]
    assert "(jaxdbg) p i\nArray(437, dtype=int32)" in scan and "final 499500.0" in scan
    assert "(jaxdbg) p mid\nArray([-0.5,  0.5], dtype=float32)" in shard
    assert "(device 5; NaN made by sqrt)" in nan and "FloatingPointError" in nan
    assert "(device 5; NaN made by mul in the backward pass" in grad and "FloatingPointError" in grad
    assert "ran out" not in "".join(cells)  # every stop was answered by the script
