"""Speed of jaxdbg's prints, against jax.debug.print to stdout.

1. Notebook. A real ipykernel (``benchmarks/kernel_driver.py``). A jitted ``lax.scan``
   of N steps (default 10,000) prints once per step with ``jax.debug.print``.
   Baseline: the extension is not loaded, so the rows go to stdout as stream
   messages. jaxdbg: after ``%load_ext jaxdbg`` the same calls go to the cell's
   print log. Time: from sending the ``execute_request`` to the kernel's ``idle``
   status for it, as the client sees them (each flavour is traced and compiled in a
   warm-up run first). The two flavours run in two kernels started side by side,
   their cells interleaved. Messages: every iopub message the frontend receives for
   the cell's output. Goal: ratio <= 1.0.
2. Terminal. In this process, the same scan with ``jaxdbg.print`` and with
   ``jax.debug.print``, stdout pointed at /dev/null, interleaved. Goal: ratio <= 1.05.

Run: ``python benchmarks/bench_print.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_driver import Kernel
from measure import arguments, finish, interleave, ratio_row

CELL = "scan_prints(jnp.arange({steps})); None"

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    def body(c, x):
        jax.debug.print("step {{}} carry {{}}", x, c)
        return c + x, None
    scan_prints = jax.jit(lambda xs: jax.lax.scan(body, 0, xs)[0])
    {load}
    print("ready")
""")


def _cell_output_messages(kernel: Kernel, start: int, msg_id: str) -> int:
    """iopub messages a frontend renders for the cell: its streams, displays, and comms."""
    with kernel._lock:
        new = kernel.messages[start:]
    own = [
        m
        for m in new
        if m["_channel"] == "iopub"
        and m["parent_header"].get("msg_id") == msg_id
        and m["msg_type"] not in ("status", "execute_input")
    ]
    comm_ids = {m["content"]["comm_id"] for m in own if m["msg_type"] == "comm_open"}
    others = [
        m
        for m in new
        if m["_channel"] == "iopub"
        and m["msg_type"] in ("comm_msg", "comm_close")
        and m["content"].get("comm_id") in comm_ids
        and m["parent_header"].get("msg_id") != msg_id
    ]
    return len(own) + len(others)


def notebook(steps: int, repeats: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Execute -> idle of the scan's cell, per flavour, and its output messages."""
    counts: dict[str, int] = {}
    with Kernel(env={"XLA_FLAGS": ""}) as stdout_kernel, Kernel(env={"XLA_FLAGS": ""}) as log_kernel:
        kernels = {"stdout": stdout_kernel, "jaxdbg": log_kernel}
        for flavour, kernel in kernels.items():
            kernel.run(SETUP.format(load="%load_ext jaxdbg" if flavour == "jaxdbg" else ""), timeout=300)
            kernel.run(CELL.format(steps=steps), timeout=600)  # warm-up: trace and compile

        def one(flavour: str) -> float:
            kernel = kernels[flavour]
            start = kernel.mark()
            t0 = time.perf_counter()
            reply = kernel.run(CELL.format(steps=steps), timeout=600)  # returns on the idle status
            elapsed = time.perf_counter() - t0
            counts[flavour] = _cell_output_messages(kernel, start, reply["parent_header"]["msg_id"])
            return elapsed

        samples = interleave({flavour: (lambda f=flavour: one(f)) for flavour in kernels}, repeats, warmup=0)
    return samples, counts


def terminal(steps: int, repeats: int) -> dict[str, list[float]]:
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

    def one(fn) -> float:
        start = time.perf_counter()
        fn(xs).block_until_ready()
        jax.effects_barrier()
        return time.perf_counter() - start

    saved = sys.stdout
    with open(os.devnull, "w") as devnull:
        sys.stdout = devnull
        try:
            return interleave({name: (lambda fn=fn: one(fn)) for name, fn in runs.items()}, repeats)
        finally:
            sys.stdout = saved


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    steps, repeats = (200, 1) if args.quick else (10_000, 5)
    rows = []
    samples, counts = notebook(steps, repeats)
    rows.append(
        ratio_row(
            f"{steps:,} prints from a scan in a kernel, execute -> idle",
            samples["jaxdbg"],
            samples["stdout"],
            1.0,
            baseline_name="(jax.debug.print to stdout)",
            note=f"output messages: print log {counts['jaxdbg']:,}, stdout {counts['stdout']:,}",
        )
    )
    samples = terminal(steps, repeats)
    rows.append(
        ratio_row(
            f"{steps:,} prints from a scan, terminal",
            samples["jaxdbg"],
            samples["jax"],
            1.05,
            baseline_name="(jax.debug.print)",
        )
    )
    finish(rows, args.json)


if __name__ == "__main__":
    main()
