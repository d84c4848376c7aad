"""Run a notebook top to bottom with nbclient in a real kernel, stops answered by a script.

nbclient is a client without stdin, like papermill: a stop that the script does not
answer continues with a one-line notice instead of waiting. The kernel is started from
a temporary kernelspec for the given Python (the checkout first on its PYTHONPATH), so a
notebook can run in any venv of the test matrix.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
MULTI_DEVICE_XLA_FLAGS = "--xla_force_host_platform_device_count=8"


def run_notebook(name: str, commands: str, python: str = sys.executable,
                 timeout: int = 240, env: dict[str, str] | None = None) -> list[str]:
    """Execute ``notebooks/<name>``; the text of each code cell's outputs, in order.

    Raises nbclient's CellExecutionError when a cell fails.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    with tempfile.TemporaryDirectory(prefix="jaxdbg-nb-") as tmp:
        spec_dir = Path(tmp) / "kernels" / "jaxdbg-nb"
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(json.dumps({
            "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "jaxdbg notebook test", "language": "python"}))
        km = KernelManager(kernel_name="jaxdbg-nb", kernel_spec_manager=KernelSpecManager(
            kernel_dirs=[str(Path(tmp) / "kernels")], ensure_native_kernel=False))
        kernel_env = dict(os.environ)
        kernel_env.pop("JPY_PARENT_PID", None)
        kernel_env.update({
            "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS,
            "JAX_PLATFORMS": "cpu",
            "JAXDBG_COMMANDS": commands,
            **(env or {}),
        })
        client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=False,
                                resources={"metadata": {"path": str(NOTEBOOKS)}})
        client.execute(env=kernel_env, cwd=str(NOTEBOOKS))
    return [cell_text(cell) for cell in nb.cells if cell.cell_type == "code"]


def cell_text(cell) -> str:
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
