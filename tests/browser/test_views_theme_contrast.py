"""Every jaxdbg view reads in JupyterLab's Light, Dark and High Contrast themes.

One notebook shows each view: the `%jaxdbg` status table, the live print log and the
static log it leaves, a mapped checkify error with its source, a sharding layout, and a
stop's static summary. For every piece of text in them the WCAG contrast against what
is painted behind it is computed from the page; all must reach AA (4.5:1). The views are
drawn once, in Light, and measured in each theme after the page switches to it live (as a
user switches from Settings > Theme; the live print log is measured so while it is live).
In Dark the
notebook is then saved and opened as an untrusted copy (styles stripped by Lab's
sanitizer): the static views must still read. The live panel's own colours are covered
in test_panel_console.py. Screenshots go to test-artifacts/views_theme_<theme>*.png.
"""

from __future__ import annotations

import json

import pytest

from support.lab_helpers import (
    ARTIFACTS,
    CURRENT_NOTEBOOK,
    JITTED_STOP_CELL,
    WCAG_AA,
    cell,
    each_theme,
    in_theme,
    live_panel,
    open_notebook,
    run_cell,
    save_screenshot,
    text_contrast,
    type_command,
    wait_for_output_text,
    wait_log,
)

pytestmark = [pytest.mark.browser, pytest.mark.multidevice]

TIMEOUT_MS = 120_000

SETUP_CELL = """\
import os, time
os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=4')
os.environ.setdefault('JAX_PLATFORMS', 'cpu')
%load_ext jaxdbg
import jax, jax.numpy as jnp, numpy as np
import jaxdbg
"""

STATUS_CELL = "%jaxdbg"

PRINT_CELL = """\
def body(carry, x):
    jax.debug.print("step {} loss {:.4f}", x, carry)
    return carry * 0.9 + x, None

jax.jit(lambda xs: jax.lax.scan(body, 1.0, xs))(jnp.arange(30.0))
while not os.path.exists(FLAG):
    time.sleep(0.05)
"""

CHECKIFY_CELL = """\
from jax.experimental import checkify

def normalise(x):
    checkify.check(jnp.all(x >= 0), "normalise needs non-negative values, got {}", x)
    return x / x.sum()

xs = jnp.array([[1.0, 2.0], [-1.0, 3.0], [0.0, 0.0]])
err, _ = jax.vmap(jaxdbg.checkify(normalise, errors="all"))(xs)
err
"""

SHARDING_CELL = """\
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ('data', 'model'))
x = jax.device_put(np.zeros((4, 6), np.float32), NamedSharding(mesh, P('data', 'model')))
jaxdbg.visualize_sharding(x)
"""

STOP_CELL = JITTED_STOP_CELL

# Each view by the class its root carries.
VIEWS = {
    "status": ".jaxdbg-status",
    "print log": ".jaxdbg-print-log.jaxdbg-static",
    "checkify": ".jaxdbg-checkify",
    "sharding": ".jaxdbg-sharding",
    "stop summary": ".jaxdbg-static:not(.jaxdbg-print-log)",
}
OUTPUTS = f"{CURRENT_NOTEBOOK} .jp-OutputArea-output"


def shoot(page, selector: str, name: str) -> None:
    """A screenshot of the first element matching ``selector``, in test-artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    element = page.locator(selector).first
    element.scroll_into_view_if_needed()
    element.screenshot(path=str(ARTIFACTS / (name.replace(" ", "_") + ".png")))


def low_contrast(found: list[dict]) -> list[dict]:
    return [r for r in found if r["ratio"] < WCAG_AA]


def show_every_view(page, server, name: str) -> None:
    flag = server.root_dir / f"{name}.flag"
    cells = [SETUP_CELL + f"FLAG = {str(flag)!r}\n", STATUS_CELL, PRINT_CELL, CHECKIFY_CELL, SHARDING_CELL, STOP_CELL]
    open_notebook(page, server, f"{name}.ipynb", cells)
    run_cell(page, 0)
    run_cell(page, 1)
    wait_for_output_text(page, 1, "jaxdbg status")

    run_cell(page, 2, wait=False)
    live_log = cell(page, 2).locator(".jaxdbg-print-log")
    live_log.get_by_text("30 rows").wait_for(timeout=TIMEOUT_MS)
    page.mouse.move(0, 0)
    live_rows = f"{CURRENT_NOTEBOOK} .jaxdbg-print-log:not(.jaxdbg-static)"
    for theme in each_theme(page, server):  # the live log, in every theme while it is live
        # The page lays itself out again after a theme switch: measure once the rows show.
        page.locator(live_rows).get_by_text("step 29.0").first.wait_for(state="visible", timeout=TIMEOUT_MS)
        live = text_contrast(page, live_rows)
        assert live and any("step 29.0" in r["text"] for r in live), live
        assert not low_contrast(live), (theme, "live print log", low_contrast(live))
    flag.write_text("")
    cell(page, 2).locator(".jaxdbg-static").wait_for(timeout=TIMEOUT_MS)

    run_cell(page, 3)
    wait_for_output_text(page, 3, "checkify errors at 2 of 3 mapped indices", 60)
    run_cell(page, 4)
    wait_for_output_text(page, 4, "4 shards")

    run_cell(page, 5, wait=False)
    panel = live_panel(page, 5)
    panel.wait_for(state="visible", timeout=TIMEOUT_MS)
    type_command(panel, "p alpha_value")
    wait_log(page, panel, r"Array\(\[0\., 2\., 4\.\]")
    page.keyboard.press("F8")
    wait_for_output_text(page, 5, "result 6.0", timeout_s=60)
    page.mouse.move(0, 0)  # no hover colours


def test_every_view_reads_in_every_theme(page, lab_server):
    """The views are drawn once; the page then switches theme live, as a user does."""
    page.set_viewport_size({"width": 1280, "height": 2400})
    show_every_view(page, lab_server, "views")
    for theme in each_theme(page, lab_server):
        save_screenshot(page, f"views_theme_{theme}")
        low = {}
        for view, selector in VIEWS.items():
            found = text_contrast(page, f"{CURRENT_NOTEBOOK} {selector}")
            assert found, f"no {view} view on the page"
            low[view] = [(r["text"], r["colour"], r["ratio"]) for r in low_contrast(found)]
            shoot(page, f"{CURRENT_NOTEBOOK} {selector}", f"views_theme_{theme}_{view}")
        assert not any(low.values()), (theme, low)
    # the checkify view marks the failing line in words too, not only by colour
    failing = cell(page, 3).locator(".jaxdbg-current-line")
    assert failing.count() >= 1 and "→     checkify.check(" in failing.first.inner_text()

    with in_theme(lab_server, "dark"):
        # Saved, then opened (in Dark) as an untrusted copy: Lab strips the styles.
        page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
        saved = json.loads((lab_server.root_dir / "views.ipynb").read_text())
        saved["metadata"]["changed"] = True  # the signature no longer matches
        (lab_server.root_dir / "views-untrusted.ipynb").write_text(json.dumps(saved))
        lab_server.shutdown_kernels()
        page.goto(lab_server.lab_url("views-untrusted.ipynb"), wait_until="domcontentloaded")
        page.wait_for_function("() => document.body.dataset.jpThemeName === 'JupyterLab Dark'")
        wait_for_output_text(page, 3, "checkify errors at 2 of 3 mapped indices", 60)
        wait_for_output_text(page, 5, "Continued.", 60)
        page.mouse.move(0, 0)
        save_screenshot(page, "views_theme_dark_untrusted")
        found = text_contrast(page, OUTPUTS)
        texts = " ".join(r["text"] for r in found)
        for needle in ("jaxdbg status", "print log", "normalise needs non-negative", "4 shards", "Stopped at"):
            assert needle in texts, (needle, texts[:2000])
        low = [(r["text"], r["colour"], r["ratio"]) for r in low_contrast(found)]
        assert not low, low
        # the source keeps its indentation without styles
        assert "4 →     checkify.check(" in cell(page, 3).inner_text()
