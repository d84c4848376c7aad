"""Speed of the debugger panel in a real ipykernel, against the composite panel it replaced.

Everything runs in one real ipykernel started through jupyter_client
(``tests/support/kernel_harness.py``), so widget traffic is real comm traffic on real sockets.
The panel (one anywidget, ``jaxdbg_widgets.panel.panel``: the browser code draws it from
synced state and sends commands with ``model.send``) serves the stops below; the numbers
are printed beside those of the ipywidgets composite it replaced (Buttons and HTML
widgets), measured the same way at commit bed483f (``--quick``, the shared 2-core
machine) and recorded in :data:`COMPOSITE_AT_BED483F`.

Stops:

``20x50``     a jitted function recursing 20 levels deep, each frame holding 50 locals
              (``x``, ``d``, ``big`` and 47 traced arrays); in the innermost frame ``big``
              is a 10,000,000-element float32 array;
``200x1000``  200 levels of recursion above a frame holding 1,000 traced arrays.

Measured:

1. Pause -> panel fully sent. Start: the host callback starts serving the stop
   (``jaxdbg.capture.breakpoints.observe_host_arrivals`` records ``time.perf_counter()``
   in the kernel). End: the client's iopub reader receives the cell's
   ``display_data`` of the panel's widget view, which comes after the comm_open of
   every widget of the panel (with its whole state). Same machine, same clock.
2. Frame-click round trip (20x50). Start: just before the client sends the message for a
   frame row (a ``run`` custom message; the composite's was a Button click). End:
   the client receives the update that shows the clicked frame's source ("source") and
   the update that closes the redraw ("redraw"; the panel sends both in one message).
3. Comm messages per stop: comm_open and comm_msg the kernel sent from the cell's start
   to its reply (one frame click and Continue included), and comms left open after it.

Targets (issue 8): pause 50 ms, click 15 ms, 200x1000 300 ms. Medians: other work may
share the 2 CPUs, so single runs vary. At bed483f the same run gave the panel 51.7 ms,
7.6 ms, 8.2 ms and 28.5 ms; 2 comm_open and 15 comm messages per 20x50 stop, none left open.

Run: ``.venv/bin/python benchmarks/bench_panel.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.kernel_harness import KernelHarness  # noqa: E402

DEPTH = 20
N_TRACED = 47  # v0 .. v46; with x, d and big: 50 locals per frame
BIG = 10_000_000
WIDE_DEPTH, WIDE_LOCALS = 200, 1000
TARGETS_MS = {"pause": 50.0, "click": 15.0, "wide": 300.0}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PANEL_WIDGET = "jaxdbg_widgets.panel.widget.PanelWidget"
# The composite panel at commit bed483f (its last), medians of `--quick` on the shared
# 2-core machine: seconds for the timings, counts for the comm traffic.
COMPOSITE_AT_BED483F = {
    "pause": 0.2914, "click_source": 0.0164, "click_redraw": 0.0172, "wide_pause": 0.5315,
    "comm_opens": 162, "messages": 218, "left_open": 18, "wide_comm_opens": 441,
}


def stop_cell_code() -> tuple[str, int, int]:
    """The 20x50 stop, and the lines of its breakpoint and of its recursive call."""
    lines = ["def level(x, d):"]
    lines += [f"    v{i} = x + {float(i)}" for i in range(N_TRACED)]
    lines += [
        f"    big = jnp.full(({BIG},), 0.5, jnp.float32) * x[0] if d == 0 else None",
        "    if d == 0:",
        "        jaxdbg.breakpoint()",
        f"        return v0 + v{N_TRACED - 1} + big[:4]",
        f"    return level(x * 1.0, d - 1) + v{N_TRACED - 1}",
        "",
        "@jax.jit",
        "def run(x):",
        f"    return level(x, {DEPTH - 1})",
    ]
    bp_line = lines.index("        jaxdbg.breakpoint()") + 1
    call_line = next(i for i, l in enumerate(lines) if "return level(x * 1.0" in l) + 1
    return "\n".join(lines) + "\n", bp_line, call_line


def wide_cell_code() -> str:
    """The 200x1000 stop: 1,000 traced locals under 200 levels of recursion."""
    lines = ["def wide(x):"]
    lines += [f"    w{i} = x + {float(i)}" for i in range(WIDE_LOCALS)]
    lines += ["    jaxdbg.breakpoint()", "    return w0 + w999", "",
              "def deep(x, n):",
              "    return wide(x) if n == 0 else deep(x * 1.0, n - 1)", "",
              "@jax.jit",
              "def run_wide(x):",
              f"    return deep(x, {WIDE_DEPTH - 3})"]
    return "\n".join(lines) + "\n"


SETUP = textwrap.dedent("""
    import io, os, sys, time
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    from jaxdbg.capture import breakpoints as _bb
    from jaxdbg_widgets.panel import backend as _bwb

    BENCH = {"callback": []}
    _bb.observe_host_arrivals(lambda: BENCH["callback"].append(time.perf_counter()))

    jaxdbg.register_debugger("bench_panel", _bwb.run_widget_debugger, priority=-1000)
    x0 = jnp.arange(4, dtype=jnp.float32) + 1.0
    print("ready", jax.__version__)
""")


class StampedHarness(KernelHarness):
    """The test harness, with every iopub message stamped with its arrival time."""

    def start(self, timeout: float = 120) -> "StampedHarness":
        super().start(timeout)
        plain = self.kc.get_iopub_msg

        def stamped(*args, **kwargs):
            msg = plain(*args, **kwargs)
            msg["_t"] = time.perf_counter()
            return msg

        self.kc.get_iopub_msg = stamped  # the reader thread looks it up on every call
        return self

    def mark(self) -> int:
        with self._lock:
            return len(self._all)

    def since(self, start: int) -> list[dict]:
        with self._lock:
            return self._all[start:]

    def wait_message(self, start: int, predicate, timeout: float = 60, what: str = "message") -> dict:
        deadline = time.monotonic() + timeout
        seen = start
        while time.monotonic() < deadline:
            new = self.since(seen)
            for msg in new:
                if predicate(msg):
                    return msg
            seen += len(new)
            time.sleep(0.001)
        raise TimeoutError(f"timed out waiting for {what}")

    def kernel_value(self, expr: str):
        result = self.run(f"print(repr({expr}))")
        if result.status != "ok":
            raise RuntimeError(f"{expr}: {result}")
        import ast
        return ast.literal_eval(result.stdout.strip())


def _update_state(msg: dict) -> dict | None:
    if msg["msg_type"] != "comm_msg":
        return None
    data = msg["content"].get("data", {})
    return data.get("state") if data.get("method") == "update" else None


# -- how each panel is driven and read -----------------------------------------------


class Panel:
    """The one-widget panel: commands are custom messages, state arrives as updates."""

    backend = "bench_panel"

    def __init__(self, k: StampedHarness) -> None:
        self.k = k
        self.cid = k.wait_for(lambda: next((c for c, st in k.widgets().items()
                                            if st.get("_anywidget_id") == PANEL_WIDGET
                                            and not st.get("status", {}).get("finished")), None),
                              30, "the panel widget")
        self.n = 0

    def send(self, line: str) -> None:
        self.n += 1
        self.k.send_custom(self.cid, {"type": "run", "id": f"bench:{self.n}", "line": line})

    def click_frame(self, frame: int, line: int):
        self.send(f"frame {frame}")
        ident = f"bench:{self.n}"

        def source(msg):
            st = _update_state(msg)
            return bool(st) and msg["content"]["comm_id"] == self.cid and \
                st.get("source", {}).get("current") == line and st.get("selected") == frame

        def redraw(msg):
            st = _update_state(msg)
            return bool(st) and msg["content"]["comm_id"] == self.cid and st.get("done") == ident
        return source, redraw

    def resume(self) -> None:
        self.send("continue")


def one_stop(k: StampedHarness, kind: type, cell: str, clicks: list[tuple[int, int]], results: dict) -> None:
    """Run a stop with one panel kind: pause latency, the clicks, Continue; message counts."""
    k.run(f'os.environ["JAXDBG_BACKEND"] = "{kind.backend}"')
    before = set(k.widgets())
    start = k.mark()
    mid = k.execute(cell)
    shown = k.wait_message(start, lambda m: m["msg_type"] == "display_data" and WIDGET_VIEW in
                           m["content"].get("data", {}) and m["parent_header"].get("msg_id") == mid,
                           120, "the panel")
    panel = kind(k)
    for frame, line in clicks:
        mark = k.mark()
        t0 = time.perf_counter()
        source, redraw = panel.click_frame(frame, line)
        results["click_source"].append(k.wait_message(mark, source, 30, f"source of {frame}")["_t"] - t0)
        results["click_redraw"].append(k.wait_message(mark, redraw, 30, f"redraw of {frame}")["_t"] - t0)
    panel.resume()
    done = k.wait_reply(mid, timeout=120)
    if done.status != "ok":
        raise RuntimeError(f"stop cell failed: {done}")
    callback = k.kernel_value('BENCH["callback"][-1]')
    results["pause"].append(shown["_t"] - callback)
    sent = [m for m in k.since(start) if m["msg_type"] in ("comm_open", "comm_msg")]
    results["comm_opens"].append(sum(m["msg_type"] == "comm_open" for m in sent))
    results["messages"].append(len(sent))
    results["left_open"].append(len(set(k.widgets()) - before))


def _ms(x: float) -> str:
    return f"{x * 1e3:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    args = parser.parse_args()
    stops = 3 if args.quick else 8
    clicks = 6 if args.quick else 12
    wide_stops = 2 if args.quick else 4

    code, bp_line, call_line = stop_cell_code()
    click_plan = [(0 if i % 2 else (i // 2) % (DEPTH - 1) + 1, bp_line if i % 2 else call_line)
                  for i in range(clicks)]
    keys = ("pause", "click_source", "click_redraw", "comm_opens", "messages", "left_open")
    p: dict[str, list] = {key: [] for key in keys}
    pw: dict[str, list] = {key: [] for key in keys}
    with StampedHarness(name="jaxdbg-bench") as k:
        for step, code_cell in (("setup", SETUP), ("20x50", code), ("200x1000", wide_cell_code())):
            ready = k.run(code_cell, timeout=300)
            if ready.status != "ok":
                raise SystemExit(f"{step} failed: {ready}")
        stop = "run(x0).block_until_ready(); None"
        wide_stop = "run_wide(x0).block_until_ready(); None"
        # warm-ups: trace, compile, imports
        one_stop(k, Panel, stop, click_plan[:2], {key: [] for key in keys})
        one_stop(k, Panel, wide_stop, [], {key: [] for key in keys})
        for _ in range(stops):
            one_stop(k, Panel, stop, click_plan, p)
        for _ in range(wide_stops):
            one_stop(k, Panel, wide_stop, [], pw)

    med = statistics.median
    c = COMPOSITE_AT_BED483F

    def row(label: str, new: float, old: float, target: float | None) -> None:
        goal = f"   target <= {target:.0f} ms" if target else ""
        print(f"  {label:<34} panel {_ms(new)}   composite {_ms(old)}   ratio {new / old:5.2f}x{goal}")

    print(f"20x50 stop: {DEPTH} frames x 50 locals (+2 shallow frames), one {BIG:,}-element float32 local;"
          f" {WIDE_DEPTH}x{WIDE_LOCALS} stop: {WIDE_DEPTH} frames, {WIDE_LOCALS:,} locals in the innermost")
    print(f"medians of {stops} (20x50) and {wide_stops} (200x1000) stops, {clicks} clicks each;"
          " the composite's from bed483f:")
    row("pause -> panel fully sent, 20x50", med(p["pause"]), c["pause"], TARGETS_MS["pause"])
    row("frame click -> source shown", med(p["click_source"]), c["click_source"], TARGETS_MS["click"])
    row("frame click -> whole redraw", med(p["click_redraw"]), c["click_redraw"], TARGETS_MS["click"])
    row("pause -> panel fully sent, 200x1000", med(pw["pause"]), c["wide_pause"], TARGETS_MS["wide"])
    print("comm traffic per 20x50 stop (cell start to reply, with the clicks and Continue):")
    print(f"  comm_open   panel {med(p['comm_opens']):6.0f}   composite {c['comm_opens']:6.0f}")
    print(f"  comm messages (open + msg), per stop with {clicks} clicks:"
          f" panel {med(p['messages']):.0f}, composite (6 clicks) {c['messages']:.0f}")
    print(f"  comms left open after the stop: panel {max(p['left_open'])}, composite {c['left_open']}")
    print(f"  200x1000 stop: comm_open panel {med(pw['comm_opens']):.0f}, composite {c['wide_comm_opens']:.0f}")
    print("(the composite showed 100 locals at most; the panel sends 20 and the rest on demand)")


if __name__ == "__main__":
    main()
