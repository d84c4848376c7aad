"""notebooks/checkify.ipynb runs top to bottom in a real kernel; its checkify views name
the user's lines, the mapped table the failing indices, and a NaN stops at the line that
made it, during the call, with real values (answered at the typed prompt)."""

from __future__ import annotations

import json

import pytest

from support.notebook_run import NOTEBOOKS, CellRun, cell_with, run_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

# What the notebook tells the reader to type at the post-mortem stop.
POST_MORTEM = ["p ratio", "up", "p x", "c"]


@pytest.fixture(scope="module")
def runs() -> list[CellRun]:
    return run_notebook("checkify.ipynb", env={"JAXDBG_BACKEND": "cli"},
                        answers={"def log_ratio": POST_MORTEM})


def test_the_post_mortem_instructions_are_the_ones_answered():
    text = " ".join("".join("".join(c["source"]) for c in json.loads(
        (NOTEBOOKS / "checkify.ipynb").read_text())["cells"] if c["cell_type"] == "markdown").split())
    assert "stops in `log_ratio` at `log_r = jnp.log(ratio)`: type `p ratio`" in text
    assert "`up` to reach `score` and `p x`" in text


def test_error_message_names_the_users_line(runs):
    run = cell_with(runs, "def safe_log(x)")
    assert run.text.strip() == ("safe_log needs positive inputs, got -1.0 (`check` failed) "
                                f"(at {run.name}:{run.line_of('checkify.check')} in safe_log)")


def test_show_draws_the_error_once_with_its_source(runs):
    defined = cell_with(runs, "def safe_log(x)")
    run = cell_with(runs, "jaxdbg.show(err)")
    assert len(run.outputs) == 1, run.outputs  # shown, not shown again as the cell's result
    [out] = run.outputs
    line = defined.line_of("checkify.check")
    assert f"at {defined.name}:{line} in safe_log" in out["data"]["text/plain"]
    assert f"->    {line} |     checkify.check(jnp.all(x > 0)" in out["data"]["text/plain"]
    assert 'class="jaxdbg-checkify"' in out["data"]["text/html"]


def test_an_error_as_the_cells_result(runs):
    run = cell_with(runs, "def pick(table, i)")
    [out] = run.outputs
    assert out["output_type"] == "execute_result"
    plain = out["data"]["text/plain"]
    assert plain.startswith("checkify error: out-of-bounds indexing for array of shape (4,): index 7")
    assert f"at {run.name}:{run.line_of('table[i]')} in pick" in plain
    assert 'class="jaxdbg-checkify"' in out["data"]["text/html"]


def test_checkify_cell_stops_at_the_first_failing_call(runs):
    defined = cell_with(runs, "def ratios(a, b)")
    run = cell_with(runs, "%%checkify --errors div,nan")
    assert "[0.5  0.25]" in run.text and "not reached" not in run.text
    [result] = [o for o in run.outputs if o["output_type"] == "execute_result"]
    plain = result["data"]["text/plain"]
    assert plain.startswith("checkify error: division by zero"), plain
    assert f"at {defined.name}:{defined.line_of('return a / b')} in ratios" in plain


def test_mapped_error_lists_the_failing_indices(runs):
    run = cell_with(runs, "def check_row(row)")
    [out] = run.outputs
    lines = out["data"]["text/plain"].splitlines()
    where = f"({run.name}:{run.line_of('checkify.check')} in check_row)"
    assert lines[0] == "checkify errors at 2 of 4 mapped indices"
    assert lines[1].split() == ["index", "error", "(where)"]
    assert lines[2].split()[0] == "1" and "negative entry -1.0" in lines[2] and where in lines[2]
    assert lines[3].split()[0] == "3" and "negative entry -9.0" in lines[3] and where in lines[3]
    assert not lines[4].strip()[:1].isdigit()  # indices 0 and 2 passed
    html = out["data"]["text/html"]
    assert "<th" in html and "<td" in html and "negative entry -9.0" in html


def test_nan_post_mortem_stops_at_the_line_with_real_values(runs):
    run = cell_with(runs, "def log_ratio(a, b)")
    assert run.errors == ["FloatingPointError"]
    out = run.text
    line = run.line_of("log_r = jnp.log(ratio)")
    assert f"Stopped at {run.name}:{line} in log_ratio (NaN made by log)" in out, out
    assert f"{line} ->     log_r = jnp.log(ratio)" in out
    after_p_ratio = out.split("Stopped at", 1)[1]
    assert "Array([ 2.       , -1.       ,  1.3333334], dtype=float32)" in after_p_ratio  # ratio
    assert f"> {run.name}:{run.line_of('return log_ratio')} in score" in after_p_ratio  # up
    assert "Array([2. , 0.5, 4. ], dtype=float32)" in after_p_ratio  # x in score
    assert "Continuing." in after_p_ratio
    off = cell_with(runs, "%jaxdbg nans off")
    assert not off.errors and "Array(nan, dtype=float32)" in off.text
