"""The array view in real JupyterLab 4 and Notebook 7 pages: each array row's
small picture is drawn, a click opens the large heatmap, whose canvas pixels show the
palette's NaN colour at the NaN cell and the ramp's colour at a normal one; hovering
shows the index and the value; the N-D slider changes the slice. The text around the
picture then reads in every theme (JupyterLab: light, dark and high contrast, the page
switched live as a user does; Notebook 7: light).

Screenshots go to test-artifacts/array_view_<lab|notebook>_<theme>.png.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxdbg.engine.values import array_picture
from jaxdbg.views import array_picture_view
from support.lab_helpers import (
    WCAG_AA,
    each_theme,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    text_contrast,
    wait_for_output_text,
)

pytestmark = [pytest.mark.browser]

SETUP_CELL = "%load_ext jaxdbg\nimport jax, jax.numpy as jnp, jaxdbg\n"

STOP_CELL = """\
@jax.jit
def step(x):
    grid = x.at[2, 3].set(jnp.nan)
    cube = jnp.arange(3 * 4 * 5.0).reshape(3, 4, 5)
    jaxdbg.breakpoint()
    return grid.sum() + cube.sum()

print("result", float(step(jnp.arange(64.0).reshape(8, 8))))
"""

GRID = np.arange(64.0).reshape(8, 8)
GRID[2, 3] = np.nan

PIXEL_JS = """([canvas, r, c, rows, cols]) => {
  const ctx = canvas.getContext("2d");
  const x = Math.floor((c + 0.5) * canvas.width / cols), y = Math.floor((r + 0.5) * canvas.height / rows);
  return Array.from(ctx.getImageData(x, y, 1, 1).data.slice(0, 3));
}"""


def cell_centre(canvas, r: int, c: int, rows: int, cols: int) -> dict:
    box = canvas.bounding_box()
    return {"x": (c + 0.5) * box["width"] / cols, "y": (r + 0.5) * box["height"] / rows}


def open_view(panel, name: str, by_key: bool = False) -> None:
    row = panel.locator(".jaxdbg-local", has_text=name).first
    thumb = row.locator("canvas.jaxdbg-thumb")
    thumb.wait_for(timeout=60_000)
    row.locator("canvas.jaxdbg-thumb[data-drawn='1']").wait_for(timeout=60_000)  # asked for when shown
    view = panel.locator(".jaxdbg-array-view")
    before = int(view.get_attribute("data-drawn") or 0)
    if by_key:  # the picture is a button for the keyboard too
        thumb.focus()
        thumb.press("Enter")
    else:
        thumb.click()
    panel.locator(f".jaxdbg-array-view[data-drawn='{before + 1}']").wait_for(timeout=60_000)


def test_the_heatmap_is_drawn_hovered_and_sliced(page, server):
    page.set_viewport_size({"width": 1280, "height": 1800})
    open_notebook(page, server, f"array_view_{server.app}.ipynb", [SETUP_CELL, STOP_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)

    open_view(panel, "grid")
    heat = panel.locator(".jaxdbg-array-heatmap")
    handle = heat.element_handle()
    nan_pixel = page.evaluate(PIXEL_JS, [handle, 2, 3, 8, 8])
    assert tuple(nan_pixel) == array_picture_view.palette.PICTURE_CLASSES["nan"], nan_pixel
    # A normal cell: the ramp's colour for its value on the whole array's finite range.
    expected = array_picture.picture(GRID, value_range=(0.0, 63.0)).codes[5, 6]
    normal_pixel = page.evaluate(PIXEL_JS, [handle, 5, 6, 8, 8])
    assert tuple(normal_pixel) == tuple(int(v) for v in array_picture_view.colour_table()[expected])
    heat.hover(position=cell_centre(heat, 2, 3, 8, 8))
    hover = panel.locator(".jaxdbg-array-hover")
    page.wait_for_function("(el) => el.textContent.includes('grid[2, 3] = nan')", arg=hover.element_handle())
    heat.hover(position=cell_centre(heat, 5, 6, 8, 8))
    page.wait_for_function("(el) => el.textContent.includes('grid[5, 6] = 46')", arg=hover.element_handle())
    assert "nan 1" in panel.locator(".jaxdbg-array-legend").inner_text()
    assert "nan=1" in panel.locator(".jaxdbg-array-stats").inner_text()

    open_view(panel, "cube", by_key=True)
    slider = panel.locator(".jaxdbg-array-slider input[data-axis='0']")
    assert slider.get_attribute("max") == "2"
    view = panel.locator(".jaxdbg-array-view")
    drawn = int(view.get_attribute("data-drawn"))
    slider.evaluate("(s) => { s.value = '2'; s.dispatchEvent(new Event('input')); }")
    panel.locator(f".jaxdbg-array-view[data-drawn='{drawn + 1}']").wait_for(timeout=60_000)
    assert "slice [2, :, :]" in panel.locator(".jaxdbg-array-note").inner_text()
    heat.hover(position=cell_centre(heat, 1, 2, 4, 5))
    page.wait_for_function("(el) => el.textContent.includes('cube[2, 1, 2] = 47')", arg=hover.element_handle())
    view.scroll_into_view_if_needed()
    for theme in each_theme(page, server):  # switched live, as a user does
        save_screenshot(page, f"array_view_{server.app}_{theme}")
        # The text around the picture (title, note, legend, hover, statistics) reads in the theme.
        found = text_contrast(page, ".jaxdbg-array-view")
        assert found and not [(r["text"], r["ratio"]) for r in found if r["ratio"] < WCAG_AA], (theme, found)
    page.keyboard.press("F8")
    wait_for_output_text(page, 1, "result", timeout_s=60)
