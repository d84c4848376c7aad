"""Cost of jaxdbg breakpoints in this process, as ratios against baselines measured in the same run.

1. An untriggered ``breakpoint_if`` inside a 10,000-step ``lax.scan`` (a 512-wide
   recurrent cell), against the same scan without it; default XLA threading. Goal 1.02x.
   Measured alongside: the ``lax.cond`` + ``jax.debug.breakpoint`` recipe, and the
   predicate with a ``lax.cond`` on a callback that carries no value (the least any
   conditional stop stages). XLA's CPU runtime runs a step of at most 8 kernels one
   after the other on the calling thread, and a longer one on its thread pool: this
   cell's step is 4 kernels, the predicate and an operand-free cond take it to 8, the
   slice of the scan input the stop's cond carries to 9, and the pool's hand-offs cost
   about 9 us a step (JAX's recipe reaches 10). So the
   row is repeated for the same cell with three reductions more in its step (7
   kernels, as a real step has many), where the stop's own kernels are all it adds.
   And the 4-kernel cell's scan (128 wide) under ``vmap`` over 8 elements, where a
   step in which no element's predicate holds makes no host call. Goal 1.05x.
2. A passed stop, per step of a 10,000-step scan: ``jaxdbg.breakpoint()`` in the step,
   passed by ``continue all`` (answered at the first stop, which is not timed), by
   ``disable`` and by ``ignore``, against a no-op ``jax.debug.callback`` receiving the
   same step locals in the same scan. Goal 1.2x.
2b. What a passed stop moves: a scan step with one square float32 local in its frames
   (8x8 and 2048x2048: the outer function's weight matrix, of which each step reads a
   row), ``jaxdbg.breakpoint()`` in it passed by ``continue all``, ``disable``,
   ``ignore`` or a false condition, against a no-op ``jax.debug.callback`` with no
   operands in the same step (goal 1.5x); the passed stop with the big local against
   the small one (goal 1.2x: it does not grow with the locals, since the program asks
   the host before sending any value); a 2048x2048 loop carry in the frame (XLA keeps
   no second copy of it); a local only the stop reads, big against small (XLA computes
   it for the stop's branch); and a watch on the scalar ``x`` against none (goal 1.5x).
3. Trace + compile of a function 10 frames deep with 30 locals each, ``jaxdbg.breakpoint``
   against ``jax.debug.breakpoint``. Goal 1.0x. And of a step whose frame holds a pytree
   of 5,000 small leaves, and of a train step (``value_and_grad``) through 12 layers
   with a breakpoint in each. Goal 1.1x.
4. A Python loop of jitted calls: a Flax NNX train step (an MLP, optax Adam, ``nnx.jit``,
   about 1 ms a step on CPU) called step by step, with ``jaxdbg.breakpoint()`` in its loss
   passed by ``disable``, against the same step with an empty ``jax.debug.callback``
   (goal 1.5x), and against the step with neither (no goal: on CPU, XLA runs a program
   that holds any host callback before the call returns, so the next step's Python no
   longer overlaps this one; the row shows what that costs).

Every row interleaves its candidates and reports the median ratio with its spread
(row 1 with three times the repeats: its runs take about 0.1 s each).
Run: ``python benchmarks/bench_breakpoint.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import arguments, finish, interleave, ratio_row, timed

import jaxdbg
from jaxdbg.engine import breakpoint_state, watches

# -- 1. untriggered breakpoint_if ------------------------------------------------------


def _weights(width: int) -> jax.Array:
    return jax.random.normal(jax.random.PRNGKey(0), (width, width)) / width**0.5


def _recurrent_scans(width: int, more_kernels: bool = False, vmapped: bool = False):
    """The cell's scan jitted plain, with an untriggered ``breakpoint_if``, and with JAX's
    recipe; ``vmapped``: each over a batch of input sequences."""
    batched = jax.vmap if vmapped else (lambda f: f)
    weights = _weights(width)

    def step(carry, x):
        hidden, stats = carry
        hidden = jnp.tanh(weights @ hidden + x)
        if more_kernels:  # three reductions: XLA's CPU runtime runs each as a kernel
            stats = stats + jnp.max(hidden) + jnp.sum(hidden * hidden) + jnp.min(jnp.abs(hidden))
        return (hidden, stats), None

    start = (jnp.zeros(width), jnp.zeros(()))

    def plain(xs):
        return jax.lax.scan(step, start, xs)[0]

    def guarded_by(stop_if):
        def guarded(carry, x):
            carry, _ = step(carry, x)
            stop_if(jnp.any(jnp.isnan(carry[0])))
            return carry, None

        return lambda xs: jax.lax.scan(guarded, start, xs)[0]

    def jax_recipe(pred):
        jax.lax.cond(pred, lambda: jax.debug.breakpoint(), lambda: None)

    def operand_free(pred):  # the least a conditional stop can stage: it carries no value
        jax.lax.cond(pred, lambda: jax.debug.callback(_noop), lambda: None)

    scans = (plain, guarded_by(jaxdbg.breakpoint_if), guarded_by(jax_recipe), guarded_by(operand_free))
    return tuple(jax.jit(batched(f)) for f in scans)


def _recurrent_scans_batched_by_hand(width: int):
    """The vmapped cell's scan with the batch written out by hand: plain, and with each
    element's predicate and one operand-free cond on the batch's mask, the least a
    conditional stop under vmap can stage (JAX's recipe, vmapped, makes its cond a select
    that stops at every step)."""
    weights = _weights(width)

    def scan(guard):
        def step(carry, x):
            hidden, stats = carry
            hidden = jnp.tanh(hidden @ weights.T + x[:, None])
            guard(jnp.any(jnp.isnan(hidden), axis=1))
            return (hidden, stats), None

        return jax.jit(lambda xs: jax.lax.scan(step, (jnp.zeros((len(xs), width)), jnp.zeros(len(xs))), xs.T)[0])

    def operand_free(mask):
        jax.lax.cond(jnp.any(mask), lambda: jax.debug.callback(_noop), lambda: None)

    return scan(lambda mask: None), scan(operand_free)


def untriggered(steps: int, width: int, repeats: int) -> list[dict]:
    rows = []
    for more_kernels in (False, True):
        plain, ours, recipe, operand_free = _recurrent_scans(width, more_kernels)
        xs = jnp.linspace(0.0, 1.0, steps)

        def run(f):
            return lambda: timed(lambda: jax.block_until_ready(f(xs)))

        candidates = {"none": run(plain), "ours": run(ours), "recipe": run(recipe), "operand-free": run(operand_free)}
        samples = interleave(candidates, repeats)
        recipe_ratio, floor = (
            statistics.median(r / n for r, n in zip(samples[name], samples["none"]))
            for name in ("recipe", "operand-free")
        )
        # (With --quick's small buffers, XLA runs every step on one thread.)
        kernels = "7-kernel step" if more_kernels else "4-kernel step, which the stop takes past XLA CPU's 8"
        rows.append(
            ratio_row(
                f"untriggered breakpoint_if, {steps:,}-step scan, {kernels}",
                samples["ours"],
                samples["none"],
                1.02,
                unit="ms",
                baseline_name="(no breakpoint)",
                note=f"in the same run, JAX's recipe (lax.cond + jax.debug.breakpoint) cost "
                f"{recipe_ratio:.3f}x, and the predicate with a lax.cond on an operand-free callback "
                f"{floor:.3f}x: a stop's cond carries the frame's values, a scan input's slice among them",
            )
        )
    return rows


def untriggered_under_vmap(steps: int, width: int, batch: int, repeats: int) -> dict:
    """The recurrent cell's scan vmapped over a batch, ``breakpoint_if`` false for every
    element (JAX's recipe has no row: under vmap its lax.cond runs both branches, so it
    stops at every step)."""
    plain, ours, *_ = _recurrent_scans(width, vmapped=True)
    by_hand, operand_free = _recurrent_scans_batched_by_hand(width)
    xs = jnp.ones((batch, steps))
    run = lambda f: lambda: timed(lambda: jax.block_until_ready(f(xs)))
    candidates = {"none": run(plain), "ours": run(ours), "by hand": run(by_hand), "operand-free": run(operand_free)}
    samples = interleave(candidates, repeats)
    floor = statistics.median(f / n for f, n in zip(samples["operand-free"], samples["by hand"]))
    return ratio_row(
        f"untriggered breakpoint_if under vmap ({batch} elements), {steps:,}-step scan",
        samples["ours"],
        samples["none"],
        1.05,
        unit="ms",
        baseline_name="(no breakpoint)",
        note="a step where no element's predicate holds makes no host call (each did, at 2.4-4x); "
        "the predicate, the mask it sends, the scan input's slice it carries and the cond on "
        "the mask take the 4-kernel step to 10 of XLA CPU's kernels (8 without the mask and the "
        "slice); in the same run, each element's predicate "
        f"with one operand-free cond on the batch's mask cost {floor:.3f}x (the batch written "
        "out by hand, against the same without them)",
    )


# -- 2. passed stops ---------------------------------------------------------------------


def _step_locals_scan(stop):
    """A scan whose step holds a small carry and calls ``stop(carry, x)``."""

    def step(carry, x):
        carry = carry * 0.5 + x
        stop(carry, x)
        return carry, None

    return jax.jit(lambda xs: jax.lax.scan(step, jnp.zeros(8), xs)[0])


def _noop(*values) -> None:
    return None


def passed_stops(steps: int, repeats: int) -> list:
    xs = jnp.linspace(0.0, 1.0, steps)
    callback = _step_locals_scan(lambda carry, x: jax.debug.callback(_noop, carry, x))
    answers = io.StringIO()
    options = {"backend": "cli", "stdin": answers, "stdout": io.StringIO()}
    ours = _step_locals_scan(lambda carry, x: jaxdbg.breakpoint(**options))
    callback(xs).block_until_ready()
    answers.write("disable\nc\n")  # the first stop: compile, and learn the breakpoint's number
    answers.seek(0)
    ours(xs).block_until_ready()
    number = max(row.number for row in breakpoint_state.rows())

    def run_ours() -> float:
        return timed(lambda: (ours(xs).block_until_ready(), jax.effects_barrier()))

    def run_callback() -> float:
        return timed(lambda: (callback(xs).block_until_ready(), jax.effects_barrier()))

    rows = []
    # disabled: the state the first stop left
    samples = interleave({"cb": run_callback, "ours": run_ours}, repeats)
    rows.append(_per_step_row("passed stop (disabled)", samples, steps))
    breakpoint_state.set_enabled(number, True)
    breakpoint_state.set_ignore(number, 10**12)
    samples = interleave({"cb": run_callback, "ours": run_ours}, repeats)
    rows.append(_per_step_row("passed stop (ignored)", samples, steps))
    breakpoint_state.set_ignore(number, 0)
    breakpoint_state.continue_all(number)  # what `continue all` at a stop of this run does
    samples = interleave({"cb": run_callback, "ours": run_ours}, repeats)
    rows.append(_per_step_row("passed stop (continue all)", samples, steps))
    breakpoint_state.end_run()
    return rows


def _square_local_scan(stop, side: int, held: str = "weights"):
    """A scan whose step calls ``stop(x)`` with a ``side`` x ``side`` float32 local in
    its frames (``x``, the step's input, is a local of the innermost frame too).

    ``held="weights"``: the local is the outer function's argument ``w`` (a weight matrix),
    of which each step reads one row: the step's own cost hardly grows with the local,
    so what a passed stop costs with it shows. ``held="carry"``: the local is the loop's
    carry, updated at every step, as a training loop's parameters are. ``held="stop
    only"``: a value nothing but the stop reads; without the stop XLA never computes it
    (it fuses the one element the carry reads)."""
    if held == "weights":
        weights = jnp.ones((side, side))

        def program(xs, w):
            def step(carry, x):
                row = w[0] * x
                stop(x)
                return carry + row[-1], None

            return jax.lax.scan(step, jnp.float32(0.0), xs)[0]

        compiled = jax.jit(program)
        return lambda xs: compiled(xs, weights)
    if held == "carry":

        def step_with_carry(carry, x):
            carry = carry * 0.5 + x
            stop(x)
            return carry, None

        return jax.jit(lambda xs: jax.lax.scan(step_with_carry, jnp.zeros((side, side)), xs)[0])

    def step_with_square(carry, x):
        square = jnp.full((side, side), x) + carry
        stop(x)
        return carry + square[-1, -1] * 0.5, None

    return jax.jit(lambda xs: jax.lax.scan(step_with_square, jnp.float32(0.0), xs)[0])


# How each way of passing a stop is set, on breakpoint number n, after its first stop.
PASSED_BY = {
    "continue all": lambda n: breakpoint_state.continue_all(n),
    "disable": lambda n: breakpoint_state.set_enabled(n, False),
    "ignore": lambda n: breakpoint_state.set_ignore(n, 10**12),
    "false condition": lambda n: breakpoint_state.set_condition(n, "x > 1e9"),
}


def _clear(number: int) -> None:
    breakpoint_state.set_condition(number, "")
    for expression in watches.LIVE.expressions(number):
        watches.LIVE.remove(number, expression)
    breakpoint_state.end_run()
    breakpoint_state.reset()


def _passed_square_scan(side: int, xs, number_seen: list[int], held: str = "weights"):
    """``_square_local_scan`` with ``jaxdbg.breakpoint()``, compiled and stopped once
    (disabled there, enabled after): its breakpoint number is appended to ``number_seen``."""
    answers = io.StringIO("disable\nc\n")
    stop = lambda x: jaxdbg.breakpoint(backend="cli", stdin=answers, stdout=io.StringIO())
    ours = _square_local_scan(stop, side, held)
    ours(xs).block_until_ready()
    number_seen.append(max(row.number for row in breakpoint_state.rows()))
    breakpoint_state.set_enabled(number_seen[-1], True)
    return ours


def _timed_per_step(candidates: dict, steps: int, repeats: int) -> dict[str, list[float]]:
    samples = interleave(
        {
            name: lambda f=f: timed(lambda: (f().block_until_ready(), jax.effects_barrier()))
            for name, f in candidates.items()
        },
        repeats,
    )
    return {name: [t / steps for t in values] for name, values in samples.items()}


# (side, held) -> the baseline scan, the scan with the breakpoint and its number, compiled
# once for every way of passing the stop (each sets the breakpoint's state, not its program).
_COMPILED: dict[tuple[int, str], tuple] = {}


def _passed_and_baseline(side: int, xs, how: str, held: str, steps: int, repeats: int) -> dict[str, list[float]]:
    """Per-step samples of a stop passed ``how`` and of a no-op callback without operands,
    in the same scan holding a ``side`` x ``side`` local."""
    if (side, held) not in _COMPILED:
        base = _square_local_scan(lambda x: jax.debug.callback(_noop), side, held)
        base(xs).block_until_ready()
        numbers: list[int] = []
        ours = _passed_square_scan(side, xs, numbers, held)
        _COMPILED[side, held] = (base, ours, numbers[0])
    base, ours, number = _COMPILED[side, held]
    PASSED_BY[how](number)
    try:
        return _timed_per_step({"cb": lambda: base(xs), "ours": lambda: ours(xs)}, steps, repeats)
    finally:
        _clear(number)


def _vs_callback(measure: str, samples: dict[str, list[float]], note: str):
    return ratio_row(
        measure,
        samples["ours"],
        samples["cb"],
        1.5,
        unit="us",
        baseline_name="(no-op jax.debug.callback, no operands)",
        note=note,
    )


def _big_vs_small(measure: str, per_step: dict[int, dict[str, list[float]]], sides: tuple[int, int], note: str):
    small, big = sides
    return ratio_row(
        measure,
        per_step[big]["ours"],
        per_step[small]["ours"],
        1.2,
        unit="us",
        baseline_name=f"(the same, {small}x{small})",
        note=note,
    )


def passed_stops_by_local_size(steps: int, sides: tuple[int, int], repeats: int) -> list:
    xs = jnp.linspace(0.0, 1.0, steps)
    small, big = sides
    rows = []
    for how in PASSED_BY:
        per_step = {side: _passed_and_baseline(side, xs, how, "weights", steps, repeats) for side in sides}
        sent = " and the local x the condition reads" if how == "false condition" else ", not the values"
        for side in sides:
            measure = f"passed stop ({how}), a {side}x{side} local in the frame, per step of a {steps:,}-step scan"
            rows.append(_vs_callback(measure, per_step[side], "what crosses to the host: the question" + sent))
        measure = f"passed stop ({how}), per step: a {big}x{big} local in the frame vs {small}x{small}"
        rows.append(_big_vs_small(measure, per_step, sides, "does not grow with the locals"))
    carry = _passed_and_baseline(big, xs, "continue all", "carry", steps, repeats)
    measure = f"passed stop (continue all), a {big}x{big} loop carry in the frame, per step of a {steps:,}-step scan"
    rows.append(_vs_callback(measure, carry, "XLA keeps no second copy of the carry for the stop"))
    only = {side: _passed_and_baseline(side, xs, "continue all", "stop only", steps, repeats) for side in sides}
    measure = f"passed stop (continue all), per step: a {big}x{big} local only the stop reads vs {small}x{small}"
    note = "no value is sent; XLA computes the big local for the stop's branch, which the program alone skips"
    rows.append(_big_vs_small(measure, only, sides, note))
    rows.append(_scalar_watch_row(steps, big, repeats))
    return rows


def _scalar_watch_row(steps: int, side: int, repeats: int):
    """A stop passed by ``continue all`` with a watch on the scalar ``x``, against the same
    stop without the watch, a ``side`` x ``side`` local in its frames: the watch has
    only ``x`` sent, not the big local."""
    xs = jnp.linspace(0.0, 1.0, steps)
    numbers: list[int] = []
    watched = _passed_square_scan(side, xs, numbers)
    unwatched = _passed_square_scan(side, xs, numbers)
    for number in numbers:  # the two scans share the breakpoint (one line of source)
        breakpoint_state.continue_all(number)

    def with_watch():
        watches.LIVE.add(numbers[0], "x")
        try:
            return watched(xs).block_until_ready()
        finally:
            watches.LIVE.remove(numbers[0], "x")

    per_step = _timed_per_step({"cb": lambda: unwatched(xs), "ours": with_watch}, steps, repeats)
    _clear(numbers[0])
    return ratio_row(
        f"passed stop (continue all) with a watch on a scalar, a {side}x{side} local in the frame, per step",
        per_step["ours"],
        per_step["cb"],
        1.5,
        unit="us",
        baseline_name="(the same stop, no watch)",
        note="the watch has x sent, not the big local",
    )


def _per_step_row(measure: str, samples: dict[str, list[float]], steps: int):
    per_step = {name: [t / steps for t in values] for name, values in samples.items()}
    return ratio_row(
        f"{measure}, per step of a {steps:,}-step scan",
        per_step["ours"],
        per_step["cb"],
        1.2,
        unit="us",
        baseline_name="(no-op jax.debug.callback)",
        note="floor: the host callback a passed stop still runs (the baseline)",
    )


# -- 3. trace + compile ------------------------------------------------------------------


def _deep_function(breakpoint_fn, depth: int, n_locals: int):
    """A chain of ``depth`` nested calls, each frame holding ``n_locals`` traced locals."""

    def level(x, d):
        names = {f"v{i}": x + i for i in range(n_locals)}
        locals().update(names)  # keep them visible as frame locals
        frame_locals = names
        if d == 0:
            breakpoint_fn()
            return sum(names.values())
        return level(x * 1.0, d - 1) + names["v0"]

    return lambda x: level(x, depth - 1)


def trace_and_compile(depth: int, n_locals: int, repeats: int):
    seed = iter(range(1, 10**6))
    phases: dict[str, dict[str, list[float]]] = {
        "jax": {"trace": [], "compile": []},
        "ours": {"trace": [], "compile": []},
    }

    def compile_with(name: str, breakpoint_fn) -> float:
        fn = jax.jit(_deep_function(breakpoint_fn, depth, n_locals))  # a fresh function: no cache
        x = jnp.ones((8,)) * next(seed)
        start = time.perf_counter()
        lowered = fn.lower(x)
        traced = time.perf_counter()
        lowered.compile()
        done = time.perf_counter()
        phases[name]["trace"].append(traced - start)
        phases[name]["compile"].append(done - traced)
        return done - start

    samples = interleave(
        {
            "jax": lambda: compile_with("jax", jax.debug.breakpoint),
            "ours": lambda: compile_with("ours", jaxdbg.breakpoint),
        },
        repeats,
    )
    med = {name: {phase: statistics.median(v[-repeats:]) * 1e3 for phase, v in p.items()} for name, p in phases.items()}
    note = (
        f"trace (jaxpr + lowering) {med['ours']['trace']:.0f} ms vs {med['jax']['trace']:.0f} ms, "
        f"XLA compile {med['ours']['compile']:.0f} ms vs {med['jax']['compile']:.0f} ms"
    )
    return ratio_row(
        f"trace + compile, {depth} frames x {n_locals} locals",
        samples["ours"],
        samples["jax"],
        1.0,
        unit="ms",
        baseline_name="(jax.debug.breakpoint)",
        note=note,
    )


def trace_and_compile_tree(leaves: int, repeats: int):
    """A step whose frame holds a pytree of ``leaves`` small arrays (a big model's
    parameters, gradients and optimizer state together), against jax.debug.breakpoint."""
    tree = {f"w{i:05d}": jnp.full((4,), float(i)) for i in range(leaves)}
    seed = iter(range(1, 10**6))

    def compile_with(breakpoint_fn) -> float:
        offset = next(seed)  # a fresh function each time: no cache

        def step(params, x):
            breakpoint_fn()
            return x + offset

        start = time.perf_counter()
        jax.jit(step).lower(tree, jnp.ones(8)).compile()
        return time.perf_counter() - start

    return _against_jax(
        f"trace + compile, a {leaves:,}-leaf pytree local",
        compile_with,
        repeats,
        "XLA's compile time for a lax.cond grows with the square of its operands: the "
        "tree's leaves pass one, the branch that sends a stop that opens",
    )


def trace_and_compile_train_step(layers: int, repeats: int):
    """A train step (``value_and_grad`` of a loss, then an update) through ``layers``
    dense layers, a breakpoint in each, against the same with ``jax.debug.breakpoint``.
    Under differentiation a breakpoint's locals are JAX's differentiation tracers."""
    seed = iter(range(1, 10**6))
    width = 64
    keys = jax.random.split(jax.random.PRNGKey(0), layers)
    params = [(jax.random.normal(k, (width, width)) / width**0.5, jnp.zeros(width)) for k in keys]
    x = jnp.ones((8, width))

    def compile_with(breakpoint_fn) -> float:
        offset = float(next(seed))  # a fresh function each time: no cache

        def layer(w, b, h):
            out = jnp.tanh(h @ w + b)
            breakpoint_fn()
            return out

        def loss(params, x):
            h = x
            for w, b in params:
                h = layer(w, b, h)
            return jnp.mean((h - offset) ** 2)

        def step(params, x):
            value, grads = jax.value_and_grad(loss)(params, x)
            return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value

        start = time.perf_counter()
        jax.jit(step).lower(params, x).compile()
        return time.perf_counter() - start

    return _against_jax(
        f"trace + compile, a train step (value_and_grad) with a breakpoint in each of {layers} layers",
        compile_with,
        repeats,
        "a stop takes its locals' primal values, so JAX does not linearize it",
    )


def _against_jax(measure: str, compile_with, repeats: int, note: str):
    """``compile_with(breakpoint_fn)``'s seconds with jaxdbg's breakpoint against JAX's,
    interleaved; goal 1.1x."""
    samples = interleave(
        {"jax": lambda: compile_with(jax.debug.breakpoint), "ours": lambda: compile_with(jaxdbg.breakpoint)}, repeats
    )
    return ratio_row(
        measure, samples["ours"], samples["jax"], 1.1, unit="ms", baseline_name="(jax.debug.breakpoint)", note=note
    )


# -- 4. a Python loop of jitted train steps ---------------------------------------------


def _nnx_train_steps(stop_in_loss) -> Callable[[Any, Any], Any]:
    """A Flax NNX MLP's jitted train step (optax Adam), ``stop_in_loss()`` in its loss."""
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.l1 = nnx.Linear(64, 256, rngs=rngs)
            self.l2 = nnx.Linear(256, 10, rngs=rngs)

        def __call__(self, x):
            return self.l2(jax.nn.relu(self.l1(x)))

    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss_fn(model):
            loss = optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()
            stop_in_loss()
            return loss

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    return lambda x, y: train_step(model, optimizer, x, y)


def python_loop_of_train_steps(steps: int, repeats: int) -> list:
    x = jax.random.normal(jax.random.PRNGKey(1), (128, 64))
    y = jnp.arange(128) % 10
    answers = io.StringIO("disable\nc\n")
    candidates = {
        "none": _nnx_train_steps(lambda: None),
        "cb": _nnx_train_steps(lambda: jax.debug.callback(_noop)),
        "ours": _nnx_train_steps(lambda: jaxdbg.breakpoint(backend="cli", stdin=answers, stdout=io.StringIO())),
    }
    for step in candidates.values():  # compile; the breakpoint's first stop disables it
        step(x, y).block_until_ready()
    number = max(row.number for row in breakpoint_state.rows())

    def loop(step):
        def run():
            for _ in range(steps):
                loss = step(x, y)
            return loss

        return run

    try:
        per_step = _timed_per_step({name: loop(step) for name, step in candidates.items()}, steps, repeats)
    finally:
        _clear(number)
    measure = f"passed stop (disable) in a Flax NNX train step, a Python loop of {steps:,} jitted calls"
    return [
        _vs_callback(
            measure, per_step, "both hold a host callback, so on CPU each call returns once its program has run"
        ),
        ratio_row(
            f"{measure}, vs none",
            per_step["ours"],
            per_step["none"],
            None,
            unit="us",
            baseline_name="(no breakpoint)",
            note="no goal: on CPU a program that holds any host callback runs before the call returns, "
            "so Python no longer prepares the next step while this one runs",
        ),
    ]


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    if args.quick:
        steps, width, repeats, compiles = 200, 16, 3, 2
    else:
        steps, width, repeats, compiles = 10_000, 512, 15, 9
    # Its runs are short (about 0.1 s each), so a single slow one moves the median: three
    # times the repeats (a minute in all) for a steadier reading.
    rows = untriggered(steps, width, 3 * repeats)
    rows.append(untriggered_under_vmap(steps // 5, width // 4, 8, 3 * repeats))
    rows += passed_stops(steps, repeats)
    rows += passed_stops_by_local_size(
        steps // 10 if not args.quick else 20, (8, 2048 if not args.quick else 256), repeats
    )
    rows.append(trace_and_compile(10, 30, compiles))
    rows.append(trace_and_compile_tree(200 if args.quick else 5_000, compiles))
    rows.append(trace_and_compile_train_step(3 if args.quick else 12, compiles))
    rows += python_loop_of_train_steps(20 if args.quick else 300, repeats)
    finish(rows, args.json)


if __name__ == "__main__":
    main()
