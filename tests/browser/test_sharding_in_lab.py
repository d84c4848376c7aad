"""An inline 3-D sharding layout in JupyterLab 4 and Notebook 7, in the light and the
dark theme: one cell per device, each named by its device and slice.

Screenshots go to test-artifacts/sharding_3d_<lab|notebook>_<light|dark>.png.
"""

from __future__ import annotations

import re

import pytest

from support.lab_helpers import ARTIFACTS, _poll, cell_output, open_notebook, run_all_cells, wait_for_output_text

pytestmark = [pytest.mark.browser, pytest.mark.multidevice]

CELLS = [
    "import os\n"
    "os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
    "os.environ.setdefault('JAX_PLATFORMS', 'cpu')\n"
    "%load_ext jaxdbg",
    "import jax, numpy as np, jaxdbg\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 2, 2), ('a', 'b', 'c'))\n"
    "x = jax.device_put(np.zeros((4, 6, 8), np.float32), NamedSharding(mesh, P('a', 'b', 'c')))\n"
    "jaxdbg.visualize_sharding(x)",
]

CELL_COLOURS_JS = """() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jxs-cell')];
  return cells.map(c => [getComputedStyle(c).color, c.getAttribute('title'), c.textContent]);
}"""


def _luminance(css_colour: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def _shoot(page, name: str):
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    cell_output(page, 1).first.screenshot(path=str(path))
    return path


def _set_theme(page, theme: str, light: bool) -> None:
    page.evaluate(
        "(t) => { window.jupyterapp.commands.execute('apputils:change-theme', {theme: t}); return true; }", theme
    )
    want = "true" if light else "false"
    _poll(
        page,
        lambda: page.evaluate(
            "(w) => document.body.getAttribute('data-jp-theme-light') === w"
            " && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim() !== ''",
            want,
        ),
        60,
        f"the {theme} theme",
    )
    page.wait_for_load_state("networkidle")


def test_3d_layout_reads_in_light_and_dark(page, server):
    open_notebook(page, server, "sharding3d.ipynb", CELLS)
    run_all_cells(page)
    text = wait_for_output_text(page, 1, "[2:4, :, :]")
    assert "[0:2, :, :]" in text and "8 shards, one device each" in text

    _set_theme(page, "JupyterLab Light", light=True)
    light = page.evaluate(CELL_COLOURS_JS)
    # one cell per device, each device once, each cell titled with its slice
    devices = sorted(int(re.search(r"\d+", label).group()) for _, _, label in light)
    assert devices == list(range(8)), light
    assert all(re.match(r"\[\d:\d, \d:\d, \d:\d\]", title) for _, title, _ in light), light
    assert all(_luminance(colour) < 0.5 for colour, _, _ in light)  # dark text on a light page
    _shoot(page, f"sharding_3d_{server.app}_light")

    _set_theme(page, "JupyterLab Dark", light=False)
    dark = page.evaluate(CELL_COLOURS_JS)
    assert all(_luminance(colour) > 0.5 for colour, _, _ in dark)  # light text on a dark page
    _shoot(page, f"sharding_3d_{server.app}_dark")
    _set_theme(page, "JupyterLab Light", light=True)  # leave the shared settings as found
