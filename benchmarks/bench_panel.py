"""Speed of the widget debugger panel in a real ipykernel, against the terminal view.

Everything runs in one real ipykernel started through jupyter_client
(``tests/kernel_harness.py``), so widget traffic is real comm traffic on real sockets.
The stop: a jitted function recursing 20 levels deep (``level``), each frame holding
50 locals (``x``, ``d``, ``big`` and 47 traced arrays ``v0`` .. ``v46``); in the
innermost frame ``big`` is a 10,000,000-element float32 array. Two shallow frames sit
above the recursion (the jitted ``run`` and the cell's ``<module>``).

1. Pause latency. Start: the moment the host callback starts serving the stop
   (``jaxdbg.breakpoints._Site.on_host`` is wrapped in the kernel to record
   ``time.perf_counter()`` on entry; everything after it counts: rebuilding the
   frames, the Session, the panel, its comm_open messages, ``display``). End: the
   client's iopub reader receives the cell's ``display_data`` carrying the panel's
   widget view, which the kernel publishes after the comm_open of every widget of the
   panel. Both ends read CLOCK_MONOTONIC (``perf_counter``) of the same machine.
   A kernel-side breakdown is printed too (callback entry to backend entry, to the
   panel built, to ``display()`` returned). Each stop is left with a Continue click;
   the first stop (trace, compile, imports) is a warm-up and is not counted.
2. Frame-click round trip. Start: just before the client sends the ``comm_msg``
   (``{"event": "click"}``) for a frame button. End: the client receives the widget
   ``update`` of the source pane that shows the clicked frame's current line
   ("source"), and the ``update`` of the log that closes the redraw ("redraw").
   Clicks alternate between frame 0 and frame k = 1, 2, ...: clicks to k show a frame
   for the first time in this stop (its 50 locals are summarised then), clicks back
   to frame 0 show a frame already seen.
3. Baseline, same kernel, same stop: the terminal backend (``jaxdbg.cli.run_cli``,
   rich rendering forced on, to a StringIO). Measured from callback entry to
   ``run_cli`` returning, with stdin ``"c\\n"`` (banner + source, what a terminal
   shows at a stop) and with ``"locals\\nc\\n"`` (plus the locals table, about what
   the panel shows). Ratios panel / terminal are printed.

Targets on the 2-core development machine: panel sent within 150 ms, click round trip
within 30 ms. Numbers are medians: other work (browser tests) may share the CPUs, so
single runs are noisy.

Run: ``.venv/bin/python benchmarks/bench_panel.py [--quick] [--profile]``.
``--profile`` prints a cProfile of one stop's panel path inside the kernel.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from kernel_harness import KernelHarness  # noqa: E402

DEPTH = 20
N_TRACED = 47  # v0 .. v46; with x, d and big: 50 locals per frame
BIG = 10_000_000
PAUSE_TARGET_MS = 150.0
CLICK_TARGET_MS = 30.0

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stop_cell_code() -> tuple[str, int, int]:
    """The cell that defines the recursion, and the lines of its breakpoint and its call."""
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


SETUP = textwrap.dedent("""
    import io, os, time
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    from jaxdbg import breakpoints as _bb, cli as _bcli
    from jaxdbg_widgets import backend as _bwb, panel as _bpanel
    import IPython.display as _bdisplay

    BENCH = {"callback": [], "backend": [], "built": [], "displayed": [], "cli": []}

    _b_on_host = _bb._Site.on_host
    def _bench_on_host(self, *a, **k):
        BENCH["callback"].append(time.perf_counter())
        return _b_on_host(self, *a, **k)
    _bb._Site.on_host = _bench_on_host  # before tracing: the callback binds it then

    _b_init = _bpanel.DebuggerPanel.__init__
    def _bench_init(self, *a, **k):
        _b_init(self, *a, **k)
        BENCH["built"].append(time.perf_counter())
    _bpanel.DebuggerPanel.__init__ = _bench_init

    _b_display = _bdisplay.display
    def _bench_display(*a, **k):
        out = _b_display(*a, **k)
        BENCH["displayed"].append(time.perf_counter())
        return out
    _bdisplay.display = _bench_display

    PROFILE = None
    def bench_panel(session, **options):
        BENCH["backend"].append(time.perf_counter())
        if PROFILE is not None:
            PROFILE.enable()
        return _bwb.run_widget_debugger(session, **options)

    CLI_INPUT = "c\\n"
    def bench_cli(session, **options):
        _bcli.run_cli(session, stdin=io.StringIO(CLI_INPUT), stdout=io.StringIO(), color=True)
        BENCH["cli"].append(time.perf_counter())

    jaxdbg.register_debugger("bench_panel", bench_panel, priority=-1000)
    jaxdbg.register_debugger("bench_cli", bench_cli, priority=-1000)
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


def _is_panel_display(msg: dict) -> bool:
    return (msg["msg_type"] == "display_data" and WIDGET_VIEW in msg["content"].get("data", {}))


def _update_value(msg: dict) -> str | None:
    if msg["msg_type"] != "comm_msg":
        return None
    data = msg["content"].get("data", {})
    if data.get("method") not in ("update", "echo_update"):
        return None
    value = data.get("state", {}).get("value")
    return value if isinstance(value, str) else None


_CURRENT = re.compile(r'class="jaxdbg-line jaxdbg-current" data-lineno="(\d+)"')
_FIRST_ENTRY = re.compile(r'class="jaxdbg-in"[^>]*>\(jaxdbg\) ([^<]*)</div>')


def _source_shows(line: int):
    def check(msg: dict) -> bool:
        value = _update_value(msg)
        return (value is not None and "jaxdbg-source-heading" in value
                and [int(n) for n in _CURRENT.findall(value)] == [line])
    return check


def _log_starts_with(command: str):
    def check(msg: dict) -> bool:
        value = _update_value(msg)
        if value is None or "jaxdbg-entry" not in value:
            return False
        first = _FIRST_ENTRY.search(value)
        return first is not None and first.group(1) == command
    return check


def _frame_buttons(k: KernelHarness) -> dict[int, str]:
    out = {}
    for cid, st in k.widgets().items():
        m = re.match(r"(\d+)  level ", str(st.get("description", "")))
        if st.get("_model_name") == "ButtonModel" and m:
            out[int(m.group(1))] = cid
    return out


def _one_panel_stop(k: StampedHarness, clicks: int, bp_line: int, call_line: int,
                    results: dict) -> None:
    """Run the stop once with the panel: pause latency, ``clicks`` frame clicks, Continue."""
    start = k.mark()
    mid = k.execute("run(x0).block_until_ready(); None")
    shown = k.wait_message(start, lambda m: _is_panel_display(m)
                           and m["parent_header"].get("msg_id") == mid, 120, "the panel")
    comm_opens = sum(1 for m in k.since(start) if m["msg_type"] == "comm_open")
    buttons = k.wait_for(lambda: (b := _frame_buttons(k)) and len(b) >= DEPTH and b,
                         30, "frame buttons")
    for i in range(clicks):
        frame = 0 if i % 2 else (i // 2) % (DEPTH - 1) + 1
        line = bp_line if frame == 0 else call_line
        mark = k.mark()
        t0 = time.perf_counter()
        k.click(buttons[frame])
        src = k.wait_message(mark, _source_shows(line), 30, f"source of frame {frame}")
        log = k.wait_message(mark, _log_starts_with(f"frame {frame}"), 30, f"log of frame {frame}")
        kind = "revisit" if frame == 0 else "new"
        results[f"click_source_{kind}"].append(src["_t"] - t0)
        results[f"click_redraw_{kind}"].append(log["_t"] - t0)
    k.click(k.find_widget("ButtonModel", description="Continue"))
    done = k.wait_reply(mid, timeout=120)
    if done.status != "ok":
        raise RuntimeError(f"stop cell failed: {done}")
    t = k.kernel_value("{key: v[-1] for key, v in BENCH.items() if v}")
    results["pause"].append(shown["_t"] - t["callback"])
    results["to_backend"].append(t["backend"] - t["callback"])
    results["to_built"].append(t["built"] - t["callback"])
    results["to_displayed"].append(t["displayed"] - t["callback"])
    results["comm_opens"].append(comm_opens)


def _one_cli_stop(k: StampedHarness, stdin: str) -> float:
    k.run(f"CLI_INPUT = {stdin!r}")
    done = k.run("run(x0).block_until_ready(); None", timeout=120)
    if done.status != "ok":
        raise RuntimeError(f"cli stop failed: {done}")
    t = k.kernel_value('(BENCH["callback"][-1], BENCH["cli"][-1])')
    return t[1] - t[0]


def _ms(x: float) -> str:
    return f"{x * 1e3:8.1f} ms"


def _profile(k: StampedHarness, bp_line: int, call_line: int) -> None:
    """cProfile of one stop's panel path (backend entry to Continue), printed from the kernel."""
    k.run("import cProfile; PROFILE = cProfile.Profile()")
    results: dict = {key: [] for key in ("pause", "to_backend", "to_built", "to_displayed",
                                         "comm_opens", "click_source_new", "click_source_revisit",
                                         "click_redraw_new", "click_redraw_revisit")}
    _one_panel_stop(k, 0, bp_line, call_line, results)
    out = k.run(textwrap.dedent("""
        PROFILE.disable()
        import pstats
        pstats.Stats(PROFILE, stream=__import__("sys").stdout).sort_stats("cumulative").print_stats(45)
        PROFILE = None
    """))
    print(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats (CI smoke run)")
    parser.add_argument("--profile", action="store_true", help="cProfile one stop inside the kernel")
    args = parser.parse_args()
    stops = 3 if args.quick else 10
    clicks = 8 if args.quick else 20
    cli_repeats = 3 if args.quick else 10

    code, bp_line, call_line = stop_cell_code()
    with StampedHarness(name="jaxdbg-bench") as k:
        ready = k.run(SETUP, timeout=180)
        if ready.status != "ok":
            raise SystemExit(f"kernel setup failed: {ready}")
        defined = k.run(code)
        if defined.status != "ok":
            raise SystemExit(f"defining the stop failed: {defined}")
        k.run('os.environ["JAXDBG_BACKEND"] = "bench_panel"')
        results: dict = {key: [] for key in ("pause", "to_backend", "to_built", "to_displayed",
                                             "comm_opens", "click_source_new",
                                             "click_source_revisit", "click_redraw_new",
                                             "click_redraw_revisit")}
        _one_panel_stop(k, 2, bp_line, call_line, {key: [] for key in results})  # warm-up
        for _ in range(stops):
            _one_panel_stop(k, clicks, bp_line, call_line, results)
        if args.profile:
            _profile(k, bp_line, call_line)

        k.run('os.environ["JAXDBG_BACKEND"] = "bench_cli"')
        _one_cli_stop(k, "c\n")  # warm-up
        cli_stop = [_one_cli_stop(k, "c\n") for _ in range(cli_repeats)]
        cli_locals = [_one_cli_stop(k, "locals\nc\n") for _ in range(cli_repeats)]

    med = statistics.median
    pause = med(results["pause"])
    term, term_locals = med(cli_stop), med(cli_locals)
    n_clicks = len(results["click_source_new"]) + len(results["click_source_revisit"])
    print(f"stop: {DEPTH} frames x 50 locals (+2 shallow frames), one {BIG:,}-element float32 local;"
          f" {results['comm_opens'][0]} comm_open messages per panel")
    print(f"pause latency, callback entry -> panel display_data at the client (median of {stops}):")
    print(f"  terminal, banner + source         {_ms(term)}   1.00x")
    print(f"  terminal, + locals table          {_ms(term_locals)}   {term_locals / term:.2f}x")
    print(f"  widget panel                      {_ms(pause)}   {pause / term:.2f}x"
          f"  ({pause / term_locals:.2f}x the terminal with locals)  target <= {PAUSE_TARGET_MS:.0f} ms")
    print("    kernel side: to backend entry "
          f"{med(results['to_backend']) * 1e3:.1f} ms, panel built {med(results['to_built']) * 1e3:.1f} ms,"
          f" display() returned {med(results['to_displayed']) * 1e3:.1f} ms")
    print(f"frame-click round trip, comm_msg sent -> update received (median of {n_clicks}):")
    for kind, label in (("new", "frame not yet shown"), ("revisit", "frame shown before")):
        src, redraw = med(results[f"click_source_{kind}"]), med(results[f"click_redraw_{kind}"])
        print(f"  {label:<20} source pane {_ms(src)}   whole redraw {_ms(redraw)}"
              f"   target <= {CLICK_TARGET_MS:.0f} ms")
    all_src = results["click_source_new"] + results["click_source_revisit"]
    print(f"  all clicks           source pane {_ms(med(all_src))}"
          f"   ({med(all_src) / term:.2f}x the terminal's whole stop)")
    print("(medians; other processes share the 2 CPUs, so single runs vary)")


if __name__ == "__main__":
    main()
