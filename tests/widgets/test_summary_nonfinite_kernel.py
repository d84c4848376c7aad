"""The summary a stop leaves in the notebook never hides a NaN: after Continue, in a real
ipykernel, a small local drawn whole and a 64 x 32 local the thumbnail samples both say
the whole array's exact range, their NaN / Inf counts and where those are; the sampled
picture keeps the rows that hold them; the panel's locals rows said the same."""

from __future__ import annotations

import re

import pytest

from support.kernel_harness import kernel_fixture
from support.nonfinite_locals import STOP_CELL, finite_ranges
from support.panel_driver import SETUP, live_panel, press, state, static_outputs, static_texts, wait_panel

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP)


@pytest.mark.timeout(300)
def test_the_summary_after_continue_counts_and_places_every_nan_and_inf(kernel):
    ranges = finite_ranges()
    mid = kernel.execute(STOP_CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    rows = {r["name"]: r for r in state(kernel, cid)["locals_page"]["rows"]}
    assert "nan=1 inf=1 (nan at [41, 3], +inf at [57, 20])" in rows["big"]["summary"], rows["big"]
    assert "nan=1 inf=1 (nan at [1, 2], +inf at [3, 7])" in rows["small"]["summary"], rows["small"]

    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "done nan" in done.stdout, done
    text = static_texts(done)[-1]
    assert f"small: float32[4,8]  {ranges['small']}  nan=1  +inf=1  (nan at [1, 2], +inf at [3, 7])" in text, text
    assert (
        "big: float32[64,32]  sampled (evenly spaced): 32 of 64 rows; every NaN / Inf cell kept  "
        f"{ranges['big']}  nan=1  +inf=1  (nan at [41, 3], +inf at [57, 20])" in text
    ), text
    html = static_outputs(done)[-1]
    assert re.search(
        r'alt="float32\[64,32\]  sampled \(evenly spaced\): 32 of 64 rows; every NaN / Inf cell kept"', html
    ), html[:2000]
    assert f"{ranges['big']}  nan=1  +inf=1  (nan at [41, 3], +inf at [57, 20])" in html
