"""The panel's array view in a real ipykernel: opening the view of a big local, and pausing with pictures.

Everything runs in one real ipykernel (``benchmarks/kernel_driver.py``), so the array
view's messages are real comm messages with real binary buffers on real sockets.

1. Opening the large view of a 4096 x 4096 float32 local. Start: just before the client
   sends the ``view`` message the browser sends on a click. End: the client receives the
   kernel's ``view`` answer with its four buffers (the browser then draws a 512 x 512
   canvas from them: one ``putImageData``, a few ms). Each repeat is a fresh stop, which
   measures, interleaved: the cold open (no statistics of the array yet, the worst
   case: they are taken then), the warm open (the click's path: a shown row of a big
   array has asked for its statistics already) and the baseline, the round trip of the
   cheapest panel message, a ``locals`` request. Goal: <= 100 ms, absolute.
2. Pause -> panel shown with 50 array locals (64 x 64 float32 each), with the pictures
   against without them (the same panel with the rows' picture flag and the colour
   table removed in the kernel). Start: the host callback starts serving the stop; end:
   the panel's display_data arrives. Goal: with / without <= 1.10x.

Run: ``python benchmarks/bench_array_view.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_panel import PANEL_WIDGET, SETUP, WIDGET_VIEW
from kernel_driver import Kernel
from measure import absolute_row, arguments, finish, interleave, ratio_row

VIEW_GOAL_S = 0.100
PAUSE_GOAL = 1.10


def big_cell(side: int) -> str:
    return textwrap.dedent(f"""
        @jax.jit
        def with_big(s):
            big = jnp.arange({side} * {side}, dtype=jnp.float32).reshape({side}, {side}) * s
            jaxdbg.breakpoint()
            return big[0, :2]
    """)


def many_cell(n_locals: int, side: int) -> str:
    lines = ["@jax.jit", "def many(x):"]
    lines += [f"    a{i} = x * {float(i + 1)}" for i in range(n_locals)]
    lines += [
        "    jaxdbg.breakpoint()",
        f"    return a0 + a{n_locals - 1}",
        f"x_many = jnp.ones(({side}, {side}), jnp.float32)",
    ]
    return "\n".join(lines) + "\n"


# Turns the rows' pictures off (and on again) in the kernel: the baseline panel.
PICTURES_SWITCH = textwrap.dedent("""
    from jaxdbg.engine.values import local_rows as _rows
    from jaxdbg_widgets.panel import state as _state, widget as _widget
    _with_pictures = _rows.local_row
    _colours = _widget.PanelWidget.class_traits()["picture_colours"].default_value
    def _no_picture(*a, **k):
        row = _with_pictures(*a, **k)
        row.pop("picture", None)
        return row
    def pictures(on):
        # the table's rows (made by the Session) and the children's (the panel's state)
        _rows.local_row = _state.local_row = _with_pictures if on else _no_picture
        _widget.PanelWidget.class_traits()["picture_colours"].default_value = _colours if on else {}
""")


class Stop:
    """One paused cell with its panel: custom messages to the panel, and Continue."""

    def __init__(self, k: Kernel, code: str) -> None:
        self.k = k
        self.start = k.mark()
        self.msg_id = k.execute(code)
        self.shown = k.wait(
            self.start,
            lambda m: (
                m["msg_type"] == "display_data"
                and m["parent_header"].get("msg_id") == self.msg_id
                and WIDGET_VIEW in m["content"].get("data", {})
            ),
            120,
            "the panel",
        )["_t"]
        opened = k.wait(
            self.start,
            lambda m: (
                m["msg_type"] == "comm_open"
                and m["parent_header"].get("msg_id") == self.msg_id
                and m["content"]["data"].get("state", {}).get("_anywidget_id") == PANEL_WIDGET
            ),
            60,
            "the panel's comm_open",
        )
        self.comm_id = opened["content"]["comm_id"]
        self.frame = opened["content"]["data"]["state"]["locals_page"]["frame"]

    def round_trip(self, content: dict) -> tuple[float, dict]:
        """Seconds from sending ``content`` to the panel's answer of the same type."""
        mark = self.k.mark()
        sent = time.perf_counter()
        self.k.send_custom(self.comm_id, content)
        answer = self.k.wait(
            mark,
            lambda m: (
                m["msg_type"] == "comm_msg"
                and m["content"].get("comm_id") == self.comm_id
                and m["content"]["data"].get("method") == "custom"
                and m["content"]["data"].get("content", {}).get("type") == content["type"]
            ),
            120,
            f"the {content['type']!r} answer",
        )
        return answer["_t"] - sent, answer

    def resume(self) -> float:
        """Continue; the seconds from the host callback's arrival to the panel shown."""
        self.k.send_custom(self.comm_id, {"type": "run", "id": "bench", "line": "continue"})
        reply = self.k.reply(self.start, self.msg_id)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"the stopped cell failed: {reply['content']}")
        arrived = float(self.k.stdout(self.k.run("print(ARRIVALS[-1])")["parent_header"]["msg_id"]))
        return self.shown - arrived


def view_opens(k: Kernel, repeats: int) -> dict[str, list[float]]:
    """Per repeat, one fresh stop of ``with_big``: the cold open, the warm open and the
    ``locals`` round trip, the latter's place rotating per repeat (the cold open comes
    before the warm one: it is the first open of that array)."""
    samples: dict[str, list[float]] = {"cold": [], "warm": [], "locals": []}
    for round_ in range(repeats + 1):  # the first round compiles and warms up
        stop = Stop(k, "with_big(jnp.float32(1.0)); None")
        view = {"type": "view", "frame": stop.frame, "path": ["big"], "axes": None, "indices": None}

        def cold() -> float:
            elapsed, answer = stop.round_trip(view)
            if len(answer.get("buffers", [])) != 4:
                raise RuntimeError(f"the view came without its 4 buffers: {answer['content']}")
            return elapsed

        def warm() -> float:
            stop.round_trip({"type": "stats", "frame": stop.frame, "path": ["big"]})
            return stop.round_trip(view)[0]

        locals_ = lambda: stop.round_trip({"type": "locals", "frame": stop.frame, "start": 0, "count": 1})[0]
        order: list[tuple[str, Callable[[], float]]] = [("cold", cold), ("warm", warm)]
        order.insert(round_ % 3, ("locals", locals_))
        for name, measure in order:
            value = measure()
            if round_ > 0:
                samples[name].append(value)
        stop.resume()
    return samples


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    if args.quick:
        side, n_locals, local_side, repeats = 256, 5, 8, 1
    else:
        side, n_locals, local_side, repeats = 4096, 50, 64, 7
    with Kernel() as k:
        k.run(SETUP + PICTURES_SWITCH + big_cell(side) + many_cell(n_locals, local_side), timeout=300)
        opens = view_opens(k, repeats)

        def pause(on: bool) -> float:
            k.run(f"pictures({on})")
            return Stop(k, "many(x_many); None").resume()

        pauses = interleave({"with": lambda: pause(True), "without": lambda: pause(False)}, repeats)
    what = f"array view of a {side}x{side} float32 local, click -> view answer"
    base = "(locals round trip)"
    rows = [
        absolute_row(
            f"{what}, cold (statistics taken)",
            opens["cold"],
            opens["locals"],
            VIEW_GOAL_S,
            unit="ms",
            baseline_name=base,
            note="the exact statistics of every value are taken before the view is drawn",
        ),
        absolute_row(
            f"{what}, warm (row shown first)",
            opens["warm"],
            opens["locals"],
            VIEW_GOAL_S,
            unit="ms",
            baseline_name=base,
        ),
        ratio_row(
            f"pause -> panel shown, {n_locals} array locals, with pictures vs without",
            pauses["with"],
            pauses["without"],
            PAUSE_GOAL,
            unit="ms",
            baseline_name="(without)",
        ),
    ]
    finish(rows, args.json)


if __name__ == "__main__":
    main()
