"""Watches and the breakpoints table in a real page (JupyterLab 4 and Notebook 7).

The Watch box adds a watch; after ``continue all`` through a scan and a second run, the
watch plot has one dot per hit, labelled axes and its first and last values and range
beside it (the summary left in the notebook too, each dot titled with its value), in the
light, dark and high-contrast themes; a pytree watch's leaves button plots each leaf's norm
over the hits, read the same way. A condition
typed into the breakpoints table's field is applied (the console's log says so). Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import json
import re

import pytest

from support.lab_helpers import (
    EXTENSION_SETUP_CELL,
    THEMES,
    WCAG_AA,
    cell,
    each_theme,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    text_contrast,
    type_command,
    wait_for_output_text,
    wait_log,
)

pytestmark = pytest.mark.browser

SCAN_CELL = """\
def body(carry, i):
    loss = carry * 0.5 + i
    jaxdbg.breakpoint()
    return loss, loss

train = jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(8.0))[0])
print("trained", train())
"""

AGAIN_CELL = 'print("again", train())'


def _dots(panel) -> int:
    return panel.locator('.jaxdbg-watch-row[data-expression="loss"] .jaxdbg-watch-plot circle').count()


def test_the_watch_plot_has_one_point_per_hit_and_a_condition_is_edited_in_place(page, server):
    # Behaviour only, so one theme; the tables' colours are checked in every theme below.
    _plot_and_condition(page, server, "light")


def _plot_and_condition(page, server, theme: str) -> None:
    open_notebook(page, server, f"watches-{server.app}-{theme}.ipynb", [EXTENSION_SETUP_CELL, SCAN_CELL, AGAIN_CELL])
    page.wait_for_function(f"() => document.body.dataset.jpThemeName === {json.dumps(THEMES[theme])}")
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    box = panel.locator(".jaxdbg-watch-input")
    box.click()
    box.fill("loss")
    box.press("Enter")
    wait_log(page, panel, r"1: loss = 0\.5")
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jaxdbg-watch-row[data-expression=\"loss\"] circle').length === n", arg=1
    )
    panel.get_by_role("button", name="Continue all", exact=True).click()
    wait_for_output_text(page, 1, "trained", timeout_s=120)

    run_cell(page, 2, wait=False)
    panel = live_panel(page, 2)
    panel.wait_for(state="visible", timeout=120_000)
    panel.locator(".jaxdbg-watch-plot circle").first.wait_for(timeout=60_000)
    assert _dots(panel) == 9  # 8 hits of the first run, passed or not, and this one
    title = panel.locator('.jaxdbg-watch-row[data-expression="loss"] circle').nth(1).locator("title")
    assert title.text_content().endswith(": 1.25")
    # read without hovering: the axes' labels, and the figures beside the plot
    row = panel.locator('.jaxdbg-watch-row[data-expression="loss"]')
    high, low, first, last = row.locator(".jaxdbg-watch-axis-label").all_text_contents()
    assert (high, low) == ("12.02", "0.5") and re.fullmatch(r"hit \d+", first), (high, low, first)
    assert int(last) == int(first.split()[1]) + 8
    assert row.locator(".jaxdbg-watch-overview").inner_text() == "first 0.5 · last 0.5\nrange 0.5 … 12.0195"
    save_screenshot(page, f"watches-plot-{server.app}-{theme}")

    panel.locator(".jaxdbg-breakpoints-title").click()
    condition = panel.locator(".jaxdbg-bp-condition").first
    condition.fill("i == 5")
    condition.press("Enter")
    wait_log(page, panel, r"New condition set for breakpoint \d+: i == 5")
    save_screenshot(page, f"watches-breakpoints-table-{server.app}-{theme}")
    log = panel.locator(".jaxdbg-log").inner_text()
    assert log.count("New condition set") == 1, log  # Enter, then leaving the field: once
    panel.get_by_role("button", name="Continue", exact=True).click()
    cell(page, 2).locator(".jaxdbg-static").first.wait_for(timeout=60_000)  # the first stop's summary
    assert cell(page, 2).locator(".jaxdbg-static svg.jaxdbg-watch-plot circle").count() == 9
    titles = cell(page, 2).locator(".jaxdbg-static svg.jaxdbg-watch-plot circle title").all_text_contents()
    assert len(titles) == 9 and titles[1].endswith(": 1.25"), titles  # as the live plot's
    assert cell(page, 2).locator(".jaxdbg-static .jaxdbg-watch-overview").first.inner_text().startswith("first 0.5")
    panel = live_panel(page, 2)
    panel.locator(".jaxdbg-input").wait_for(timeout=60_000)
    type_command(panel, "p i")
    wait_log(page, panel, r"Array\(5\., dtype=float32\)")
    assert panel.locator(".jaxdbg-breakpoints").get_attribute("open") is not None  # stays open
    panel.locator(".jaxdbg-bp-condition").first.fill("")
    panel.locator(".jaxdbg-bp-condition").first.press("Enter")
    wait_log(page, panel, r"is now unconditional")
    panel.get_by_role("button", name="Continue all", exact=True).click()
    wait_for_output_text(page, 2, "again", timeout_s=120)


TREE_CELL = """\
def tree_body(carry, i):
    params = {"b": jnp.array([i]), "w": jnp.full((3,), 2.0 * i)}
    jaxdbg.breakpoint()
    return carry, None

tree_train = jax.jit(lambda: jax.lax.scan(tree_body, 0.0, jnp.arange(4.0))[0])
print("tree", tree_train())
"""


def test_a_pytree_watchs_leaves_button_plots_each_leafs_norm_in_the_console(page, lab_server):
    open_notebook(page, lab_server, "watch-leaves.ipynb", [EXTENSION_SETUP_CELL, TREE_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    type_command(panel, "watch params")
    type_command(panel, "watch carry")
    wait_log(page, panel, r"2: carry = 0\.0")
    carry = panel.locator('.jaxdbg-watch-row[data-expression="carry"]')
    assert carry.locator(".jaxdbg-watch-leaves").count() == 0  # no pytree: no leaves button
    value, hit = carry.locator(".jaxdbg-watch-axis-label").all_text_contents()  # one point: one label each
    assert value == "0" and re.fullmatch(r"hit \d+", hit), (value, hit)
    type_command(panel, "ignore 2")  # hits 2 and 3 pass, taking their values; hit 4 stops
    wait_log(page, panel, r"\(jaxdbg\) ignore 2")
    panel.get_by_role("button", name="Continue", exact=True).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jaxdbg-panel:not(.jaxdbg-finished) .jaxdbg-banner')]"
        ".some(b => /hit 4\\b/.test(b.textContent))",
        timeout=90_000,
    )
    panel = live_panel(page, 1)
    panel.get_by_role("button", name="leaf norms of params").click()
    wait_log(page, panel, r"params at hit 4, 2 float leaves")
    log = panel.locator(".jaxdbg-log").inner_text()
    assert "(jaxdbg) watch 1 leaves" in log and "['w']" in log, log
    # a plot per leaf, a dot per hit, on labelled axes, its first, last and range beside it
    rows = panel.locator(".jaxdbg-leaf-plots .jaxdbg-leaf")
    assert rows.count() == 2
    for i, (path, high) in enumerate([("['b']", "3"), ("['w']", "10.3923")]):
        row = rows.nth(i)
        assert row.locator("code").inner_text() == path
        plot = row.locator("svg.jaxdbg-watch-plot")
        assert plot.is_visible() and plot.locator("circle").count() == 4
        labels = plot.locator("text").all_text_contents()
        assert labels == [f"{float(high):.4g}", "0", "hit 1", "4"], labels
        overview = row.locator(".jaxdbg-watch-overview")
        assert overview.is_visible() and overview.inner_text() == f"first 0 · last {high}\nrange 0 … {high}"
    save_screenshot(page, "watch-leaves-lab")
    panel.get_by_role("button", name="Continue all", exact=True).click()
    wait_for_output_text(page, 1, "tree", timeout_s=120)


WATCH_TEXT = (
    ".jaxdbg-watch-table td, .jaxdbg-breakpoints-table td, .jaxdbg-breakpoints-table th,"
    " .jaxdbg-breakpoints-title, .jaxdbg-watch-add"
)


def test_the_watch_and_breakpoints_tables_read_in_every_theme(page, lab_server):
    """The tables are drawn once; the page then switches theme live, as a user does."""
    open_notebook(page, lab_server, "watches-themes.ipynb", [EXTENSION_SETUP_CELL, SCAN_CELL])
    run_cell(page, 0)
    run_cell(page, 1, wait=False)
    panel = live_panel(page, 1)
    panel.wait_for(state="visible", timeout=120_000)
    type_command(panel, "watch loss")
    type_command(panel, "watch undefined_name")
    wait_log(page, panel, r"2: undefined_name = \*\*\* NameError")
    panel.locator(".jaxdbg-breakpoints-title").click()
    page.mouse.move(0, 0)
    for theme in each_theme(page, lab_server):
        found = text_contrast(page, ".jaxdbg-panel:not(.jaxdbg-finished)", WATCH_TEXT)
        save_screenshot(page, f"watches_theme_{theme}")
        assert len(found) >= 6, found
        low = [r for r in found if r["ratio"] < WCAG_AA]
        assert not low, (theme, low)
    panel.get_by_role("button", name="Continue all", exact=True).click()
    wait_for_output_text(page, 1, "trained", timeout_s=120)
