"""Cost per stop of a false ``condition`` against a disabled breakpoint, in the same run.

A ``jaxdbg.breakpoint()`` in every step of a ``lax.scan`` (12 locals, one of them a
4096-element array) runs the same compiled program four ways, interleaved:

- disabled (``disable N``): the host callback returns after one check;
- a false condition (``condition N i < 0``): the frames are built on the host and the
  condition evaluated in them, then the stop passes;
- the same with one watch (``watch loss``), which takes its value at every passed stop;
- the same while an ended panel's summary is redrawn with the watch's values as they come
  (:mod:`jaxdbg_widgets.panel.live_summary`, on its own thread, as after ``continue all``);
- and, for the baseline, the scan without a breakpoint.

A second scan's step holds a small model's gradients as a dict of 6 arrays (``grads``)
beside its scalar ``loss``; a false condition with ``watch grads`` (per-leaf norms and
NaN counts at every passed stop) runs against the same with ``watch loss``. Goal: the
pytree watch within 1.2x the scalar one. A third holds an 8 MB tree of 6 leaves: with
``watch grads`` and a false condition, the program traced after the watch was set sends
the leaves' statistics (screening.StatsForm), against the same program traced before,
which sends the leaves. Goal: no slower (on CPU the leaves cross no bus; on a GPU or TPU
they would).

Each way's cost per stop is its time beyond the scan without a breakpoint, in the same
repeat. The rows: a false condition against a disabled breakpoint (what the issue asks;
a disabled breakpoint sends nothing to the host, so this ratio is large by design: a
condition needs the frame's values on the host), against a no-op ``jax.debug.callback``
receiving the same locals (its floor: goal <= 1.5x), and the same with one watch.

Run: ``.nox/tests/bin/python benchmarks/bench_conditions.py [--quick] [--json PATH]``, or
with every other benchmark: ``python3 dev.py bench``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import jaxdbg
from jaxdbg.engine import breakpoint_state, outputs, watches
from jaxdbg.views import html as html_view
from jaxdbg_widgets.panel.live_summary import LiveSummary

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import arguments, finish, interleave, ratio_row

CALLBACK_GOAL = 1.5  # a false condition per stop, against the host callback it needs
REDRAW_GOAL = 1.1  # a passed stop while the summary redraws, against one while it does not
PYTREE_WATCH_GOAL = 1.2  # a passed stop watching a pytree, against one watching a scalar
STATS_FORM_GOAL = 1.0  # a big pytree watched from its statistics, against from its leaves


def step_plain(carry, i):
    activations = jnp.tanh(carry + i)
    return activations, activations.sum()


def step_with_breakpoint(carry, i):
    activations = jnp.tanh(carry + i)
    loss = activations.sum()
    a, b, c, d, e, f, g, h = (i * k for k in range(8))  # locals the frame carries
    step = i
    jaxdbg.breakpoint()
    return activations, loss + step * 0


def step_with_callback(carry, i):
    activations = jnp.tanh(carry + i)
    loss = activations.sum()
    a, b, c, d, e, f, g, h = (i * k for k in range(8))
    step = i
    jax.debug.callback(lambda *_: None, activations, loss, a, b, c, d, e, f, g, h, step, i, carry)
    return activations, loss + step * 0


def _gradients(activations):
    return {  # a two-layer MLP's gradients, as optax would see them
        "l1": {"kernel": jnp.outer(activations[:64], activations[:32]), "bias": activations[:32]},
        "bn": {"scale": activations[:32] * 2, "bias": activations[32:64]},
        "l2": {"kernel": jnp.outer(activations[:32], activations[:2]), "bias": activations[:2]},
    }


def step_gradients_plain(carry, i):
    activations = jnp.tanh(carry + i)
    grads = _gradients(activations)
    return activations, activations.sum() + grads["l2"]["bias"][0] * 0


def step_with_gradients(carry, i):
    activations = jnp.tanh(carry + i)
    loss = activations.sum()
    grads = _gradients(activations)
    step = i
    jaxdbg.breakpoint()
    return activations, loss + step * 0 + grads["l2"]["bias"][0] * 0


def _big_tree_step():
    """A step whose ``grads`` is a 6-leaf tree of 8 MB (a 4096x512 kernel), the breakpoint
    after it; a new function each time, so each program traces it anew."""

    def step_with_big_gradients(carry, i):
        activations = jnp.tanh(carry + i)
        grads = {
            "l1": {"kernel": jnp.outer(activations, activations[:512]), "bias": activations[:512]},
            "bn": {"scale": activations[:512] * 2, "bias": activations[512:1024]},
            "l2": {"kernel": jnp.outer(activations[:512], activations[:2]), "bias": activations[:2]},
        }
        jaxdbg.breakpoint()
        return activations, activations.sum() + grads["l1"]["kernel"][0, 0] * 0

    return step_with_big_gradients


def _big_tree_scans(xs):
    """The big-tree scan traced before ``watch grads`` is set at its breakpoint (it sends
    the leaves), and traced again after (it sends their statistics, screening.StatsForm),
    the breakpoint's condition false: (with statistics, with leaves)."""
    with_leaves = _scan(_big_tree_step())
    with_leaves.lower(xs).compile()
    number = next(r.number for r in breakpoint_state.rows() if r.function == "step_with_big_gradients")
    breakpoint_state.set_condition(number, "i < 0")
    watches.LIVE.add(number, "grads")
    with_stats = _scan(_big_tree_step())
    with_stats.lower(xs).compile()
    return with_stats, with_leaves


def _scan(step):
    return jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(4096), xs)[1])


def _time(fn, xs) -> float:
    start = time.perf_counter()
    fn(xs).block_until_ready()
    return time.perf_counter() - start


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    steps, repeats = (200, 1) if args.quick else (2000, 7)
    xs = jnp.arange(float(steps))
    plain, stopping, calling = _scan(step_plain), _scan(step_with_breakpoint), _scan(step_with_callback)
    training, training_plain = _scan(step_with_gradients), _scan(step_gradients_plain)
    big_stats, big_leaves = _big_tree_scans(xs)
    stopping.lower(xs)  # traced: the breakpoints have their numbers
    training.lower(xs)
    number = next(r.number for r in breakpoint_state.rows() if r.function == "step_with_breakpoint")
    in_training = next(r.number for r in breakpoint_state.rows() if r.function == "step_with_gradients")
    breakpoint_state.set_condition(in_training, "i < 0")

    def watch_only(expression: str | None) -> None:
        """The training breakpoint watches ``expression`` alone (None: nothing)."""
        for watch in watches.LIVE.watches(in_training):
            if watch.expression != expression:
                watches.LIVE.remove(in_training, watch.expression)
        if expression is not None and not watches.LIVE.has_watches(in_training):
            watches.LIVE.add(in_training, expression)

    def watching_only(expression: str):
        def run() -> float:
            watch_only(expression)
            return _time(training, xs)

        return run

    def disabled():
        breakpoint_state.set_condition(number, "")
        breakpoint_state.set_enabled(number, False)

    def false_condition():
        breakpoint_state.set_enabled(number, True)
        breakpoint_state.set_condition(number, "i < 0")

    def false_condition_and_watch():
        false_condition()
        if not watches.LIVE.has_watches(number):
            watches.LIVE.add(number, "loss")

    def unwatched():
        if watches.LIVE.has_watches(number):
            watches.LIVE.remove(number, "loss")

    def way(prepare, fn):
        def run() -> float:
            unwatched()
            prepare()
            return _time(fn, xs)

        return run

    def redrawn_summary() -> None:  # what the panel's summary draws, taken off the stops' thread
        summary = outputs.StopSummary(
            "breakpoint",
            "bench.py:1",
            "jaxdbg.breakpoint()",
            (),
            "Continued.",
            watches=tuple(watches.LIVE.watches(number)),
        )
        str(html_view.stop_summary_display(summary).html)

    def with_live_summary() -> float:
        unwatched()
        false_condition_and_watch()
        live = LiveSummary(lambda: watches.LIVE.recorded(number), redrawn_summary, interval=0.05).start()
        try:
            return _time(stopping, xs)
        finally:
            live.stop()

    nothing = lambda: None
    samples = interleave(
        {
            "no breakpoint": way(nothing, plain),
            "no-op callback": way(nothing, calling),
            "disabled": way(disabled, stopping),
            "false condition": way(false_condition, stopping),
            "false condition + 1 watch": way(false_condition_and_watch, stopping),
            "summary redrawn": with_live_summary,
            "training, no breakpoint": way(nothing, training_plain),
            "scalar watch": watching_only("loss"),
            "pytree watch": watching_only("grads"),
            "8 MB tree, statistics": lambda: _time(big_stats, xs),
            "8 MB tree, leaves": lambda: _time(big_leaves, xs),
        },
        repeats,
    )
    unwatched()
    watch_only(None)
    breakpoint_state.set_condition(in_training, "")
    breakpoint_state.set_condition(number, "")
    breakpoint_state.set_enabled(number, True)
    base = samples["no breakpoint"]
    per_stop = {name: [max(t - b, 1e-9) / steps for t, b in zip(times, base)] for name, times in samples.items()}
    for name in ("scalar watch", "pytree watch"):  # beyond the same training step without a stop
        per_stop[name] = [max(t - b, 1e-9) / steps for t, b in zip(samples[name], samples["training, no breakpoint"])]
    bound = (
        "a false condition must bring the frame's values to the host (a host callback, "
        "the next row's baseline) and build the frame; a disabled breakpoint sends nothing"
    )
    finish(
        [
            ratio_row(
                f"false condition, per stop of a {steps:,}-step scan, vs a disabled breakpoint",
                per_stop["false condition"],
                per_stop["disabled"],
                CALLBACK_GOAL,
                unit="us",
                baseline_name="disabled",
                note=bound,
            ),
            ratio_row(
                f"false condition, per stop of a {steps:,}-step scan, vs a no-op callback",
                per_stop["false condition"],
                per_stop["no-op callback"],
                CALLBACK_GOAL,
                unit="us",
                baseline_name="jax.debug.callback",
                note="the frame is built and the condition evaluated",
            ),
            ratio_row(
                f"false condition + 1 watch, per stop of a {steps:,}-step scan, vs a no-op callback",
                per_stop["false condition + 1 watch"],
                per_stop["no-op callback"],
                CALLBACK_GOAL,
                unit="us",
                baseline_name="jax.debug.callback",
                note="the watch is evaluated at every stop",
            ),
            ratio_row(
                f"the same, the ended panel's summary redrawn, per stop of a {steps:,}-step scan",
                per_stop["summary redrawn"],
                per_stop["false condition + 1 watch"],
                REDRAW_GOAL,
                unit="us",
                baseline_name="not redrawn",
                note="redrawn every 0.05 s here (the panel: 0.5 s), on its own thread",
            ),
            ratio_row(
                f"false condition + a 6-leaf pytree watch, per stop of a {steps:,}-step scan, vs a scalar watch",
                per_stop["pytree watch"],
                per_stop["scalar watch"],
                PYTREE_WATCH_GOAL,
                unit="us",
                baseline_name="watch loss",
                note="the pytree watch keeps each leaf's norm and NaN / Inf counts, not the leaves",
            ),
            ratio_row(
                f"false condition + a watch of an 8 MB 6-leaf pytree, per step of a {steps:,}-step scan: "
                "its leaves' statistics sent vs its leaves",
                [t / steps for t in samples["8 MB tree, statistics"]],
                [t / steps for t in samples["8 MB tree, leaves"]],
                STATS_FORM_GOAL,
                unit="us",
                baseline_name="the same program traced before the watch was set",
                note="96 bytes a step cross to the host instead of 8 MB (on a GPU or TPU, a transfer)",
            ),
        ],
        args.json,
    )


if __name__ == "__main__":
    main()
