"""A 400 MB local at a stop: what a breakpoint costs against a plain host callback.

In one real ipykernel (``benchmarks/kernel_driver.py``), interleaved repeats of one
jitted call on a 100,000,000-element float32 array (``big``, 400 MB) in five ways:

``no stop``    the call alone;
``callback``   with a plain ``jax.debug.callback`` receiving ``big``;
``reading cb`` the same callback, which also reads the value (``np.asarray(value)``): a
               callback operand is materialized on the host when first read (JAX
               measured: 0.26 s and 381 MB for 400 MB, ``did_copy`` False), which a
               stop does when it takes the value's statistics;
``terminal``   with ``jaxdbg.breakpoint()`` served by the terminal prompt
               (``JAXDBG_BACKEND=cli``), answered ``c`` on stdin;
``panel``      with ``jaxdbg.breakpoint()`` served by the widget panel; the client asks
               for the statistics of each row sent ``pending`` (as the panel's browser
               code does when it draws the row), waits for them, then sends Continue
               through the panel's comm.

Measured per run, on the client's clock:

- execute -> shown: from sending the execute_request until the stop is shown (the
  ``input_request`` of the terminal prompt; the ``display_data`` of the panel's
  widget view), until the plain callback has the value (it records
  ``time.perf_counter()``, the machine's monotonic clock, as the client's is), or,
  without a stop, until the execute_reply;
- for the panel, execute -> statistics shown: until the last pending row's statistics
  arrive;
- resident memory of the kernel process (``/proc/<pid>/status`` VmRSS, sampled every
  2 ms): before the cell (after a collection, so not what the previous run left), the
  peak during it, and 1 s after its reply. The reading callback's row shows what JAX
  itself keeps: a callback's operands are freed from a queue that only a collection or
  the next dispatch empties.

Rows: the terminal's and the panel's execute -> shown against the plain callback's (goal
1.1x), and the resident memory 1 s after the stop ended against before the cell (goal
+50 MB).

Run: ``python benchmarks/bench_big_local.py [--python PY] [--repeats N] [--quick] [--json PATH]``.
"""

from __future__ import annotations

import statistics
import sys
import textwrap
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_driver import Kernel
from measure import arguments, delta_row, finish, ratio_row

N = 100_000_000  # float32: 400 MB
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PANEL_WIDGET = "jaxdbg_widgets.panel.widget.PanelWidget"

SETUP = textwrap.dedent("""
    import os, time
    import jax, jax.numpy as jnp, numpy as np
    import jaxdbg, jaxdbg_widgets

    def _big(s):
        return jnp.arange({n}, dtype=jnp.float32) * s  # not foldable: really 400 MB

    @jax.jit
    def no_stop(s):
        big = _big(s)
        return big[:4] + big.sum()

    @jax.jit
    def callback(s):
        big = _big(s)
        jax.debug.callback(lambda value: RECEIVED.append(time.perf_counter()), big)
        return big[:4] + big.sum()

    @jax.jit
    def reading_callback(s):
        big = _big(s)
        jax.debug.callback(lambda value: (RECEIVED.append(time.perf_counter()), np.asarray(value)), big)
        return big[:4] + big.sum()

    @jax.jit
    def stop(s):
        big = _big(s)
        jaxdbg.breakpoint()
        return big[:4] + big.sum()

    RECEIVED = []  # when the plain callback got the value (perf_counter: one clock per machine)
    s0 = jnp.float32(1.5)
    print("ready", jax.__version__)
""")

MODES = {  # name -> (backend, function)
    "no stop": (None, "no_stop"),
    "callback": (None, "callback"),
    "reading cb": (None, "reading_callback"),
    "terminal": ("cli", "stop"),
    "panel": ("widgets", "stop"),
}


class MemorySampler:
    """The kernel's peak resident memory while it runs."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.peak = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, self.kernel.rss_mb())
            time.sleep(0.002)

    def __enter__(self) -> "MemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()


def _is_panel_view(msg: dict, msg_id: str) -> bool:
    return (
        msg["msg_type"] == "display_data"
        and msg["parent_header"].get("msg_id") == msg_id
        and WIDGET_VIEW in msg["content"].get("data", {})
    )


def _panel_opened(k: Kernel, start: int, msg_id: str) -> dict:
    return k.wait(
        start,
        lambda m: (
            m["msg_type"] == "comm_open"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"]["data"].get("state", {}).get("_anywidget_id") == PANEL_WIDGET
        ),
        60,
        "the panel's comm_open",
    )


def _show_pending_rows(k: Kernel, opened: dict) -> float | None:
    """What the browser does on drawing the locals table: ask for each pending row's
    statistics. Returns when the last arrived (None when no row was pending)."""
    comm_id = opened["content"]["comm_id"]
    page = opened["content"]["data"]["state"]["locals_page"]
    pending = [r["name"] for r in page["rows"] if r.get("pending")]
    mark = k.mark()
    for name in pending:
        k.send_custom(comm_id, {"type": "stats", "frame": page["frame"], "path": [name]})
    arrived = None
    for name in pending:
        arrived = k.wait(
            mark,
            lambda m, name=name: (
                m["msg_type"] == "comm_msg"
                and m["content"]["comm_id"] == comm_id
                and m["content"]["data"].get("content", {}).get("path") == [name]
            ),
            120,
            f"the statistics of {name}",
        )["_t"]
    return arrived


def one_run(k: Kernel, mode: str) -> dict:
    backend, function = MODES[mode]
    # A collection first: JAX frees the previous run's callback operands only then (its gc
    # callback), so "before" is the kernel's own memory, not what the last run left.
    k.run(f"os.environ['JAXDBG_BACKEND'] = {backend or 'cli'!r}; import gc; gc.collect()")
    time.sleep(0.3)  # let the previous run's memory settle
    before = k.rss_mb()
    start = k.mark()
    with MemorySampler(k) as memory:
        t0 = time.perf_counter()
        stats_shown = None
        msg_id = k.execute(f"{function}(s0).block_until_ready(); None")
        if backend == "cli":
            k.answers.put("c")
            shown = k.wait(start, lambda m: m["msg_type"] == "input_request", 120, "the prompt")["_t"]
        elif backend is not None:
            shown = k.wait(start, lambda m: _is_panel_view(m, msg_id), 120, "the panel")["_t"]
            opened = _panel_opened(k, start, msg_id)
            stats_shown = _show_pending_rows(k, opened)
            k.send_custom(opened["content"]["comm_id"], {"type": "run", "id": "bench", "line": "continue"})
        reply = k.reply(start, msg_id)
        if function == "no_stop":
            shown = reply["_t"]
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{mode}: {reply['content']}")
    if function in ("callback", "reading_callback"):
        shown = float(k.stdout(k.run("print(RECEIVED[-1])")["parent_header"]["msg_id"]))
    time.sleep(1.0)
    return {
        "shown": shown - t0,
        "stats": None if stats_shown is None else stats_shown - t0,
        "before": before,
        "peak": memory.peak,
        "after_1s": k.rss_mb(),
    }


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the kernel's interpreter")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n, repeats = (1_000_000, 1) if args.quick else (N, args.repeats)
    results: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with Kernel(args.python) as k:
        k.run(SETUP.format(n=n))
        for mode in MODES:  # warm-up: compile, import the backends
            one_run(k, mode)
        for _ in range(repeats):  # interleaved, so all see the same machine load
            for mode in MODES:
                results[mode].append(one_run(k, mode))
    size = f"{n * 4 / 1e6:,.0f} MB local"
    callback = [r["shown"] for r in results["callback"]]
    reading = [r["shown"] for r in results["reading cb"]]
    bound = (
        f"a callback that reads the value (as a stop's statistics do) takes "
        f"{statistics.median(reading) / statistics.median(callback):.2f}x the plain one"
    )
    rows = []
    for mode, shown in (("terminal", "pause -> prompt"), ("panel", "pause -> panel shown")):
        runs = results[mode]
        rows.append(
            ratio_row(
                f"{size}: {shown} ({mode})",
                [r["shown"] for r in runs],
                callback,
                1.1,
                baseline_name="(plain jax.debug.callback)",
                note=bound,
            )
        )
    for mode in ("reading cb", "terminal", "panel"):
        runs = results[mode]
        peak = statistics.median(r["peak"] for r in runs)
        what = "the stop" if mode != "reading cb" else "a reading jax.debug.callback"
        rows.append(
            delta_row(
                f"{size}: resident memory 1 s after {what} ({mode})",
                [r["after_1s"] for r in runs],
                [r["before"] for r in runs],
                50,
                baseline_name="(before the cell)",
                note=f"peak during the stop {peak:,.0f} MB",
            )
        )
    stats = [r["stats"] for r in results["panel"] if r["stats"] is not None]
    if stats:
        print(f"panel: execute -> statistics of the big row shown, median {statistics.median(stats):.3f} s")
    finish(rows, args.json)


if __name__ == "__main__":
    main()
