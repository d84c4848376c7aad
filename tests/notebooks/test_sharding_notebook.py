"""notebooks/sharding.ipynb runs top to bottom in a real kernel (nbclient), and its
outputs carry the layouts it promises, not just a clean exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.notebook_run import ipc_kernel_manager

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "sharding.ipynb"


def _outputs_by_cell(nb) -> list[tuple[str, str, str]]:
    """(source, all text/plain + stream text, all text/html) per code cell."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        plain, html = [], []
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                plain.append(out.text)
            elif out.output_type in ("display_data", "execute_result"):
                plain.append(out.data.get("text/plain", ""))
                html.append(out.data.get("text/html", ""))
            elif out.output_type == "error":
                raise AssertionError(f"cell failed: {cell.source}\n{out.ename}: {out.evalue}")
        cells.append((cell.source, "\n".join(plain), "\n".join(html)))
    return cells


def test_sharding_notebook_runs_and_shows_layouts(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=240, km=ipc_kernel_manager(tmp_path),
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    cells = {source: (plain, html) for source, plain, html in _outputs_by_cell(nb)}

    def outputs_of(fragment: str) -> tuple[str, str]:
        matches = [v for k, v in cells.items() if fragment in k]
        assert len(matches) == 1, fragment
        return matches[0]

    assert "8 devices" in outputs_of("len(jax.devices())")[0]
    plain, html = outputs_of('("data", "model"))\nmesh')
    assert "data" in plain and "model" in plain and "jaxdbg-sharding" in html
    plain, html = outputs_of('NamedSharding(mesh, P("data")))')
    assert "replicated ×4" in plain and "jaxdbg-sharding" in html
    plain, html = outputs_of("jnp.zeros((4, 4, 4))")
    assert "[0:2, :, :]" in plain and "[2:4, :, :]" in plain and "[2:4, 2:4, 2:4]" in plain
    plain, _ = outputs_of("shape=(6, 8)")
    assert "6" in plain and "model" in plain
    # inspect_sharding: once at compile time and once more on the cached call.
    _, html = outputs_of("jaxdbg.inspect_sharding(a * 2)")
    assert html.count('class="jaxdbg-sharding') == 2
    _, html = outputs_of("jax.debug.visualize_array_sharding(x2)")
    assert "jaxdbg-sharding" in html
    plain, html = outputs_of("%jaxdbg")
    assert "jax_debug_nans" in plain + html
