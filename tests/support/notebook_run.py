"""Run a notebook's code cells top to bottom in a real kernel, two ways.

:func:`run_notebook` drives the cells through :mod:`kernel_harness` and keeps each cell's
outputs as a saved notebook would hold them. Stops are answered at the typed prompt: run
the kernel with ``JAXDBG_BACKEND=cli`` and give the answers for a cell by a fragment of
its source. Every answer given for a cell must be asked for by that cell, so a stop that
never came fails the run.

:func:`run_with_nbclient` executes the notebook with nbclient, a client without stdin
like papermill: stops are answered by a ``JAXDBG_COMMANDS`` script, and a stop the
script does not answer continues with a one-line notice instead of waiting. Its kernel
starts from a temporary kernelspec for the given Python (the checkout first on its
PYTHONPATH), so a notebook can run in any venv of the test matrix.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS, ROOT, KernelHarness

NOTEBOOKS = ROOT / "notebooks"


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
        return "\n".join(
            o["text"] if o["output_type"] == "stream" else o.get("data", {}).get("text/plain", "") for o in self.outputs
        )

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
            if outputs and outputs[-1]["output_type"] == "stream" and outputs[-1]["name"] == content["name"]:
                outputs[-1]["text"] += content["text"]
            else:
                outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
        elif kind in ("display_data", "execute_result"):
            out = {"output_type": kind, "data": dict(content["data"])}
            outputs.append(out)
            if display_id:
                by_display.setdefault(display_id, []).append(out)
        elif kind == "update_display_data":
            for out in by_display.get(display_id, []):
                out["data"] = dict(content["data"])
        elif kind == "error":
            outputs.append({"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]})
        elif kind == "clear_output":
            outputs.clear()
    return outputs


def run_notebook(
    name: str, *, env: dict[str, str] | None = None, answers: dict[str, list[str]] | None = None, timeout: float = 240
) -> list[CellRun]:
    """Run ``notebooks/<name>``'s code cells in order; the cells with their outputs.

    A cell fails the run with an error unless it is tagged ``raises-exception`` (the tag
    nbclient honours), and every cell so tagged must raise.
    """
    cells = [c for c in json.loads((NOTEBOOKS / name).read_text())["cells"] if c["cell_type"] == "code"]
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
            run = CellRun(
                source,
                result.reply["content"]["execution_count"],
                _final_outputs(result.messages),
                [e["ename"] for e in result.errors],
            )
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


def ipc_kernel_manager(folder: Path, kernel_name: str = "python3", **options: Any) -> Any:
    """A KernelManager for ``kernel_name`` (``options``: its other traits) whose kernel
    listens on Unix sockets in ``folder``, not on TCP ports it could find taken
    (kernel_harness.py)."""
    from jupyter_client.manager import KernelManager

    return KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(Path(folder) / "kernel"), **options)


def run_with_nbclient(
    name: str, commands: str, python: str = sys.executable, timeout: int = 240, env: dict[str, str] | None = None
) -> list[str]:
    """Execute ``notebooks/<name>`` with nbclient, stops answered by ``commands``; the
    text of each code cell's outputs, in order (:func:`cell_text`).

    Raises nbclient's CellExecutionError when a cell fails.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    with tempfile.TemporaryDirectory(prefix="jaxdbg-nb-") as tmp:
        spec_dir = Path(tmp) / "kernels" / "jaxdbg-nb"
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "jaxdbg notebook test",
                    "language": "python",
                }
            )
        )
        km = ipc_kernel_manager(
            Path(tmp),
            "jaxdbg-nb",
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(Path(tmp) / "kernels")], ensure_native_kernel=False),
        )
        kernel_env = dict(os.environ)
        kernel_env.pop("JPY_PARENT_PID", None)
        kernel_env.update(
            {
                "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
                "XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS,
                "JAX_PLATFORMS": "cpu",
                "JAXDBG_COMMANDS": commands,
                **(env or {}),
            }
        )
        client = NotebookClient(
            nb, km=km, timeout=timeout, allow_errors=False, resources={"metadata": {"path": str(NOTEBOOKS)}}
        )
        client.execute(env=kernel_env, cwd=str(NOTEBOOKS))
    return [cell_text(cell) for cell in nb.cells if cell.cell_type == "code"]


def cell_text(cell: Any) -> str:
    """Streams, plain-text results and the text/plain or text/html of displays."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            data = out.get("data", {})
            parts.append(data.get("text/plain", "") + "\n" + data.get("text/html", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}\n")
    return "".join(parts)
