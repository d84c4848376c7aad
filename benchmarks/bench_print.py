"""Speed and message counts of jaxdbg's prints, against jax.debug.print.

1. Notebook. One real ipykernel (``tests/support/kernel_harness.py``). A jitted ``lax.scan``
   of N steps (default 10,000) prints once per step with ``jax.debug.print``.
   Baseline: the extension is not loaded, so the rows go to stdout as stream
   messages. jaxdbg: after ``%load_ext jaxdbg`` the same calls go to the cell's
   print log. Time: from sending the ``execute_request`` to the kernel's ``idle``
   status for it, as the client sees them (the function is traced and compiled in
   a warm-up run of each flavour first). Messages: every iopub message the
   frontend receives for the cell's output (stream messages for stdout; comm_open,
   widget updates, display and comm_close for the log). Target: ratio <= 1.5.
2. Terminal. In this process, the same scan with ``jaxdbg.print`` and with
   ``jax.debug.print``, stdout pointed at /dev/null; best of several runs after a
   warm-up. Target: ratio <= 1.05.

Numbers are medians / minima over repeats: other work may share the CPUs.
Run: ``.venv/bin/python benchmarks/bench_print.py [--steps N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.kernel_harness import KernelHarness  # noqa: E402

NOTEBOOK_TARGET = 1.5
TERMINAL_TARGET = 1.05

CELL = textwrap.dedent("""
    scan_prints(jnp.arange({steps}))
    None
""")

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    def body(c, x):
        jax.debug.print("step {{}} carry {{}}", x, c)
        return c + x, None
    scan_prints = jax.jit(lambda xs: jax.lax.scan(body, 0, xs)[0])
    {load}
    print("ready")
""")


def _cell_output_messages(kernel: KernelHarness, msg_id: str) -> list[dict]:
    """iopub messages a frontend renders for the cell: its streams, displays, and comms."""
    result = kernel.result(msg_id)
    own = [m for m in result.messages if m["msg_type"] not in ("status", "execute_input")]
    comm_ids = {m["content"]["comm_id"] for m in own if m["msg_type"] == "comm_open"}
    with kernel._lock:
        others = [m for m in kernel._all if m["msg_type"] in ("comm_msg", "comm_close")
                  and m["content"].get("comm_id") in comm_ids
                  and m["parent_header"].get("msg_id") != msg_id]
    return own + others


def notebook(steps: int, repeats: int) -> tuple[float, float, int, int]:
    timings: dict[str, list[float]] = {"stdout": [], "jaxdbg": []}
    counts: dict[str, int] = {}
    for flavour, load in (("stdout", ""), ("jaxdbg", "%load_ext jaxdbg")):
        with KernelHarness(env={"XLA_FLAGS": ""}) as kernel:
            ready = kernel.run(SETUP.format(load=load), timeout=180)
            assert "ready" in ready.stdout, ready
            kernel.run(CELL.format(steps=steps), timeout=600)  # warm-up: trace and compile
            for _ in range(repeats):
                start = time.perf_counter()
                msg_id = kernel.execute(CELL.format(steps=steps))
                _wait_idle(kernel, msg_id)
                timings[flavour].append(time.perf_counter() - start)
                result = kernel.wait_reply(msg_id, timeout=600)
                counts[flavour] = len(_cell_output_messages(kernel, msg_id))
                if flavour == "stdout":
                    assert result.stdout.count("\n") == steps, result
    base, ours = statistics.median(timings["stdout"]), statistics.median(timings["jaxdbg"])
    return base, ours, counts["stdout"], counts["jaxdbg"]


def _wait_idle(kernel: KernelHarness, msg_id: str, timeout: float = 600) -> None:
    """Return as soon as the client has the kernel's idle status for ``msg_id``."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        with kernel._lock:
            msgs = kernel._by_parent.get(msg_id, [])
            if any(m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                   for m in msgs[-3:]):
                return
        time.sleep(0.002)
    raise TimeoutError(f"no idle status for {msg_id}")


def terminal(steps: int, repeats: int) -> tuple[float, float]:
    import jax
    import jax.numpy as jnp

    import jaxdbg

    def program(show):
        def body(c, x):
            show("step {} carry {}", x, c)
            return c + x, None
        return jax.jit(lambda xs: jax.lax.scan(body, 0, xs)[0])

    runs = {"jax": program(jax.debug.print), "jaxdbg": program(jaxdbg.print)}
    xs = jnp.arange(steps)
    best = {name: float("inf") for name in runs}
    saved = sys.stdout
    with open(os.devnull, "w") as devnull:
        sys.stdout = devnull
        try:
            for fn in runs.values():
                fn(xs).block_until_ready()  # trace and compile
            for _ in range(repeats):
                for name, fn in runs.items():
                    start = time.perf_counter()
                    fn(xs).block_until_ready()
                    jax.effects_barrier()
                    best[name] = min(best[name], time.perf_counter() - start)
        finally:
            sys.stdout = saved
    return best["jax"], best["jaxdbg"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-notebook", action="store_true")
    args = parser.parse_args()

    base, ours = terminal(args.steps, max(args.repeats, 5))
    print(f"terminal, {args.steps:,} prints from a scan: jax.debug.print {base * 1e3:.0f} ms, "
          f"jaxdbg.print {ours * 1e3:.0f} ms, ratio {ours / base:.3f} (target <= {TERMINAL_TARGET})")
    if args.skip_notebook:
        return
    base, ours, base_msgs, our_msgs = notebook(args.steps, args.repeats)
    print(f"notebook, {args.steps:,} prints from a scan, execute to idle: "
          f"stdout {base:.2f} s in {base_msgs:,} messages, "
          f"print log {ours:.2f} s in {our_msgs:,} messages, "
          f"ratio {ours / base:.2f} (target <= {NOTEBOOK_TARGET})")


if __name__ == "__main__":
    main()
