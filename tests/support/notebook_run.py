"""Run a notebook's code cells top to bottom in a real kernel (:mod:`kernel_harness`) and
keep each cell's outputs as a saved notebook would hold them.

Stops are answered at the typed prompt: run the kernel with ``JAXDBG_BACKEND=cli`` and
give the answers for a cell by a fragment of its source. Every answer given for a cell
must be asked for by that cell, so a stop that never came fails the run.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from support.kernel_harness import KernelHarness

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@dataclasses.dataclass
class CellRun:
    """One code cell after it ran."""

    source: str
    execution_count: int
    outputs: list[dict]  # nbformat-like: stream / display_data / execute_result / error
    errors: list[str]  # exception names

    @property
    def name(self) -> str:
        """What jaxdbg calls the cell in locations, e.g. ``In[3]``."""
        return f"In[{self.execution_count}]"

    @property
    def text(self) -> str:
        """Streams and the ``text/plain`` of every display and result, in order."""
        return "\n".join(o["text"] if o["output_type"] == "stream"
                         else o.get("data", {}).get("text/plain", "") for o in self.outputs)

    @property
    def html(self) -> str:
        return "\n".join(o.get("data", {}).get("text/html", "") for o in self.outputs)

    def line_of(self, fragment: str) -> int:
        """The 1-based line of this cell that holds ``fragment``."""
        for number, line in enumerate(self.source.splitlines(), start=1):
            if fragment in line:
                return number
        raise AssertionError(f"{fragment!r} not in cell:\n{self.source}")


def _final_outputs(messages: list[dict]) -> list[dict]:
    """The cell's outputs after ``update_display_data`` replaced what it names."""
    outputs: list[dict] = []
    by_display: dict[str, list[dict]] = {}
    for msg in messages:
        kind, content = msg["msg_type"], msg["content"]
        display_id = content.get("transient", {}).get("display_id")
        if kind == "stream":
            if outputs and outputs[-1]["output_type"] == "stream" \
                    and outputs[-1]["name"] == content["name"]:
                outputs[-1]["text"] += content["text"]
            else:
                outputs.append({"output_type": "stream", "name": content["name"],
                                "text": content["text"]})
        elif kind in ("display_data", "execute_result"):
            out = {"output_type": kind, "data": dict(content["data"])}
            outputs.append(out)
            if display_id:
                by_display.setdefault(display_id, []).append(out)
        elif kind == "update_display_data":
            for out in by_display.get(display_id, []):
                out["data"] = dict(content["data"])
        elif kind == "error":
            outputs.append({"output_type": "error", "ename": content["ename"],
                            "evalue": content["evalue"]})
        elif kind == "clear_output":
            outputs.clear()
    return outputs


def run_notebook(name: str, *, env: dict[str, str] | None = None,
                 answers: dict[str, list[str]] | None = None,
                 timeout: float = 240) -> list[CellRun]:
    """Run ``notebooks/<name>``'s code cells in order; the cells with their outputs.

    A cell fails the run with an error unless it is tagged ``raises-exception`` (the tag
    nbclient honours), and every cell so tagged must raise.
    """
    cells = [c for c in json.loads((NOTEBOOKS / name).read_text())["cells"]
             if c["cell_type"] == "code"]
    answers = dict(answers or {})
    harness = KernelHarness(env=env)
    runs = []
    try:
        harness.start()
        for cell in cells:
            source = "".join(cell["source"])
            lines: list[str] = []
            for fragment in [f for f in answers if f in source]:
                lines += answers.pop(fragment)
            asked_before = len(harness.input_requests)
            for line in lines:
                harness.answer_input(line)
            result = harness.run(source, timeout=timeout)
            asked = len(harness.input_requests) - asked_before
            assert asked == len(lines), (source, lines, asked, result)
            run = CellRun(source, result.reply["content"]["execution_count"],
                          _final_outputs(result.messages), [e["ename"] for e in result.errors])
            expected_error = "raises-exception" in cell.get("metadata", {}).get("tags", [])
            assert bool(run.errors) == expected_error, (source, result, harness.kernel_log()[-3000:])
            runs.append(run)
    finally:
        harness.shutdown()
    assert not answers, f"no cell matched {list(answers)}"
    return runs


def cell_with(runs: list[CellRun], fragment: str) -> CellRun:
    """The one cell whose source holds ``fragment``."""
    matches = [run for run in runs if fragment in run.source]
    assert len(matches) == 1, (fragment, [m.source for m in matches])
    return matches[0]
