"""A jitted stop whose two locals hold one NaN and one Inf each, a small one and one the
picture samples, and the exact finite range of each: the summary tests of a kernel and
of a page run the same cell."""

from __future__ import annotations

import numpy as np

# Rows 41 and 57 are odd: an even stride of 32 of the 64 rows passes over both.
STOP_CELL = """\
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
"""


def finite_ranges() -> dict[str, str]:
    """``{"small": "MIN .. MAX", "big": ...}``: each local's finite range, as the summary prints it."""
    rng = np.random.default_rng(7)
    small = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    big = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    small[1, 2], small[3, 7] = np.nan, np.inf
    big[41, 3], big[57, 20] = np.nan, np.inf
    return {
        name: f"{x[np.isfinite(x)].min():.4g} .. {x[np.isfinite(x)].max():.4g}"
        for name, x in (("small", small), ("big", big))
    }
