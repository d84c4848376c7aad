"""A notebook with prints and a checkify error, run by nbclient in a real kernel, saved and
converted by nbconvert: the print log is kept as static HTML with every row, no widget."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.notebook_run import ipc_kernel_manager

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    "%load_ext jaxdbg\nimport jax, jax.numpy as jnp, jaxdbg",
    "def body(c, x):\n    jax.debug.print('step {} <&>', x)\n    return c + x, None\n"
    "jax.jit(lambda xs: jax.lax.scan(body, 0, xs))(jnp.arange(100))\nNone",
    "err, _ = jaxdbg.checkify(lambda x: x / x[0], errors='div')(jnp.arange(3.0))\nerr",
]


def test_saved_and_converted_notebook_keeps_the_log(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nbconvert = pytest.importorskip("nbconvert")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbclient.NotebookClient(nb, timeout=240, km=ipc_kernel_manager(tmp_path),
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    path = tmp_path / "prints.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)

    outputs = saved.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs
    data = outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" not in data
    lines = data["text/plain"].splitlines()
    assert lines[0] == "jaxdbg print log (In[2] print log, 100 rows)"
    assert [line.rsplit("| ", 1)[1] for line in lines[1:]] == [f"step {i} <&>" for i in range(100)]

    html, _ = nbconvert.HTMLExporter().from_notebook_node(saved)
    assert "In[2] print log" in html and "60 more rows" in html
    assert "step 99 &lt;&amp;&gt;" in html and "All 100 rows as text" in html
    assert "checkify error: division by zero" in html and "jaxdbg-checkify" in html
