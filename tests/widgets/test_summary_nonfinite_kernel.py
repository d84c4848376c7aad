"""The summary a stop leaves in the notebook never hides a NaN: after Continue, in a real
ipykernel, a small local drawn whole and a 64 x 32 local the thumbnail samples both say
the whole array's exact range, their NaN / Inf counts and where those are; the sampled
picture keeps the rows that hold them; the panel's locals rows said the same."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import SETUP, live_panel, press, state, static_outputs, static_texts, wait_panel

pytestmark = [pytest.mark.kernel]

kernel = kernel_fixture(SETUP)

# Rows 41 and 57 are odd: an even stride of 32 of the 64 rows passes over both.
CELL = textwrap.dedent("""
    import numpy as np
    rng = np.random.default_rng(7)
    small_host = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    small_host[1, 2], small_host[3, 7] = np.nan, np.inf
    big_host = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    big_host[41, 3], big_host[57, 20] = np.nan, np.inf

    @jax.jit
    def layer(small, big):
        jaxdbg.breakpoint()
        return small.sum() + big.sum()
    print("done", layer(small_host, big_host))
""")


def _expected():
    """The exact ranges, drawn as the cell draws them."""
    rng = np.random.default_rng(7)
    small = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    big = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    small[1, 2], small[3, 7] = np.nan, np.inf
    big[41, 3], big[57, 20] = np.nan, np.inf
    return {name: f"{x[np.isfinite(x)].min():.4g} .. {x[np.isfinite(x)].max():.4g}"
            for name, x in (("small", small), ("big", big))}


@pytest.mark.timeout(300)
def test_the_summary_after_continue_counts_and_places_every_nan_and_inf(kernel):
    ranges = _expected()
    mid = kernel.execute(CELL)
    wait_panel(kernel, mid)
    cid = live_panel(kernel)
    rows = {r["name"]: r for r in state(kernel, cid)["locals_page"]["rows"]}
    assert "nan=1 inf=1 (nan at [41, 3], +inf at [57, 20])" in rows["big"]["summary"], rows["big"]
    assert "nan=1 inf=1 (nan at [1, 2], +inf at [3, 7])" in rows["small"]["summary"], rows["small"]

    press(kernel, "continue", cid=cid)
    done = kernel.wait_reply(mid, timeout=60)
    assert done.status == "ok" and "done nan" in done.stdout, done
    text = static_texts(done)[-1]
    assert (f"small: float32[4,8]  {ranges['small']}  nan=1  +inf=1  (nan at [1, 2], +inf at [3, 7])"
            in text), text
    assert ("big: float32[64,32]  sampled (evenly spaced): 32 of 64 rows; every NaN / Inf cell kept  "
            f"{ranges['big']}  nan=1  +inf=1  (nan at [41, 3], +inf at [57, 20])" in text), text
    html = static_outputs(done)[-1]
    assert re.search(r'alt="float32\[64,32\]  sampled \(evenly spaced\): 32 of 64 rows; every NaN / Inf cell kept"',
                     html), html[:2000]
    assert f"{ranges['big']}  nan=1  +inf=1  (nan at [41, 3], +inf at [57, 20])" in html
