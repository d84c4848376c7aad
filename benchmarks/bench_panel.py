"""Pause -> panel shown in a real ipykernel: a 200-frame x 1,000-local stop against a 20 x 50 one.

Everything runs in one real ipykernel (``benchmarks/kernel_driver.py``), so widget
traffic is real comm traffic on real sockets. Two stops, interleaved:

``20x50``     a jitted function 20 frames deep, each frame holding 50 locals (traced
              arrays); in the innermost frame one of them, ``big``, is a
              10,000,000-element float32 array;
``200x1000``  200 frames deep, the innermost holding 1,000 traced arrays.

Pause -> panel shown. Start: the host callback starts serving the stop
(``jaxdbg.capture.breakpoints.observe_host_arrivals`` records ``time.perf_counter()`` in
the kernel, the machine's monotonic clock, as the client's is). End: the client receives
the cell's ``display_data`` of the panel's widget view, which comes after the panel's
comm_open with its whole state. Then the client sends Continue through the panel's comm.
Goal: the big stop within 1.2x the small one, since the panel sends only what is on
screen (the first rows of the innermost frame) and the rest on demand.

Two more stops, interleaved with them, hold a model's parameters as users do:

``tree``      a jitted step whose local ``params`` is a dict of 10,000 arrays (5,000
              layers of ``w`` and ``b``: a transformer's parameter count of leaves);
``one``       the same step with one array in its place.

Goal: the tree's stop within 1.2x the one-array stop. Its 10,000 leaves reach the host as
one slice of the operands, and the dict itself is rebuilt from them only when something
reads it (``p params``, the row's summary when the browser shows it, opening the tree).
Until then its row says its kind and top-level size, taken once when the breakpoint was
traced.

Run: ``python benchmarks/bench_panel.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_driver import Kernel
from measure import arguments, finish, interleave, ratio_row

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PANEL_WIDGET = "jaxdbg_widgets.panel.widget.PanelWidget"

SETUP = textwrap.dedent("""
    import os, time
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    from jaxdbg.capture import breakpoints as _bb

    ARRIVALS = []
    _bb.observe_host_arrivals(lambda: ARRIVALS.append(time.perf_counter()))
    os.environ["JAXDBG_BACKEND"] = "widgets"
    x0 = jnp.arange(4, dtype=jnp.float32) + 1.0
    print("ready", jax.__version__)
""")


def stop_code(name: str, depth: int, n_locals: int, big: int, every_frame: bool) -> str:
    """``name(x)``: ``depth`` frames of recursion; the innermost holds ``n_locals`` traced
    locals (one of them a ``big``-element array) and stops; the outer ones hold as many
    (``every_frame``) or only their arguments."""

    def frame_locals(indent: str) -> list[str]:
        return [f"{indent}v{i} = x + {float(i)}" for i in range(n_locals - 3)]

    lines = [
        f"def {name}_inner(x, d):",
        *frame_locals("    "),
        f"    big = jnp.full(({big},), 0.5, jnp.float32) * x[0]",
        "    jaxdbg.breakpoint()",
        "    return v0 + big[:4]",
        "",
        f"def {name}_level(x, d):",
        *(frame_locals("    ") if every_frame else []),
        f"    return {name}_inner(x, d) if d == 0 else {name}_level(x * 1.0, d - 1) + x",
        "",
        "@jax.jit",
        f"def {name}(x):",
        f"    return {name}_level(x, {depth - 3})",
    ]
    return "\n".join(lines) + "\n"


def tree_code(layers: int) -> str:
    """``tree(x)`` and ``one(x)``: a stop whose local ``params`` has ``2 * layers`` array
    leaves, and the same stop with one array local in its place."""
    return textwrap.dedent(f"""
        PARAMS = {{f"layer{{i}}": {{"w": jnp.full((4, 4), 0.01 * i), "b": jnp.zeros(4)}} for i in range({layers})}}
        W = jnp.ones((4, 4))

        @jax.jit
        def _tree_step(params, x):
            jaxdbg.breakpoint()
            return x + params["layer0"]["b"]

        @jax.jit
        def _one_step(w, x):
            jaxdbg.breakpoint()
            return x + w[0]

        tree = lambda x: _tree_step(PARAMS, x)
        one = lambda x: _one_step(W, x)
    """)


def _panel_opened(k: Kernel, start: int, msg_id: str) -> dict:
    return k.wait(
        start,
        lambda m: (
            m["msg_type"] == "comm_open"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"]["data"].get("state", {}).get("_anywidget_id") == PANEL_WIDGET
        ),
        120,
        "the panel's comm_open",
    )


def pause_to_panel(k: Kernel, name: str) -> float:
    """One stop of ``name``: seconds from the host callback to the panel shown."""
    start = k.mark()
    msg_id = k.execute(f"{name}(x0).block_until_ready(); None")
    shown = k.wait(
        start,
        lambda m: (
            m["msg_type"] == "display_data"
            and m["parent_header"].get("msg_id") == msg_id
            and WIDGET_VIEW in m["content"].get("data", {})
        ),
        120,
        "the panel",
    )["_t"]
    opened = _panel_opened(k, start, msg_id)
    k.send_custom(opened["content"]["comm_id"], {"type": "run", "id": "bench", "line": "continue"})
    reply = k.reply(start, msg_id)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{name}: {reply['content']}")
    arrived = float(k.stdout(k.run("print(ARRIVALS[-1])")["parent_header"]["msg_id"]))
    return shown - arrived


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    if args.quick:
        small, wide, big, layers, repeats = (4, 10), (20, 100), 1000, 50, 1
    else:
        small, wide, big, layers, repeats = (20, 50), (200, 1000), 10_000_000, 5000, 6
    with Kernel() as k:
        k.run(SETUP, timeout=300)
        k.run(stop_code("small", *small, big, True) + stop_code("wide", *wide, 16, False), timeout=600)
        k.run(tree_code(layers), timeout=600)
        samples = interleave(
            {name: (lambda name=name: pause_to_panel(k, name)) for name in ("small", "wide", "one", "tree")}, repeats
        )  # warm-up: compile
    rows = [
        ratio_row(
            f"pause -> panel shown, {wide[0]} frames x {wide[1]:,} locals vs {small[0]} x {small[1]}",
            samples["wide"],
            samples["small"],
            1.2,
            unit="ms",
            baseline_name=f"({small[0]} x {small[1]})",
        ),
        ratio_row(
            f"pause -> panel shown, a {2 * layers:,}-leaf parameter tree as a local vs one array local",
            samples["tree"],
            samples["one"],
            1.2,
            unit="ms",
            baseline_name="(one array)",
            note="the tree is rebuilt from its leaves when first read; its row was taken when traced",
        ),
    ]
    finish(rows, args.json)


if __name__ == "__main__":
    main()
