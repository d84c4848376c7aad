"""A breakpoint with a condition, a log template or watches is screened on the host with
only the locals they read: the rest of the step's values stay on the device until a stop
opens, and then every value is there."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.capture import prints, screening, staging
from jaxdbg.engine import breakpoint_state, watches
from jaxdbg.engine import frames as frames_mod
from support.checks_state import fresh_breakpoint_checks  # noqa: F401 (autouse)
from support.host_bytes import HostBytes
from support.jax_setups import automatic_axes
from support.transcript import Transcript

STEPS = 100
LOCAL = (512, 512)  # float32: 1 MB
# What a screened step may send: the scalars (c and x, float32), with the host's question,
# and with each other send the screening state (int32); a multi-device stop also sends its
# device's index.
PER_SCREENED_STEP = 24
SCALARS = 8  # c and x: what every question carries, a passed stop's included


def _scan_with_a_big_local(t: Transcript):
    def step(c, x):
        big = jnp.full(LOCAL, x) + c
        jaxdbg.breakpoint(**t.options)
        return c + big[0, 0] * 0.0, None

    return jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0]), step


def _scan_with_a_check_set_at_its_first_stop(monkeypatch, check: str):
    """The scan, its host bytes counted, with ``check`` (``{n}``: its breakpoint's
    number) then ``continue all`` typed at its first stop: (host, transcript, f, xs, n)."""
    host = HostBytes(monkeypatch)
    t = Transcript()
    f, step = _scan_with_a_big_local(t)
    xs = jnp.arange(float(STEPS))
    f.lower(xs)
    n = _number_of(step)
    t.stdin.write(f"{check.format(n=n)}\ncontinue all\n")
    t.stdin.seek(0)
    return host, t, f, xs, n


def _number_of(step) -> int:
    line = step.__code__.co_firstlineno + 2
    return next(r.number for r in breakpoint_state.rows() if (r.filename, r.lineno) == (__file__, line))


@pytest.mark.parametrize(
    "check",
    [
        "condition {n} x > 1e9",
        "condition {n} False",
        "log {n} step {{x:.0f}}",
        "log {n} no fields",
        "watch x",
        "condition {n} x > 0\ndisable {n}",
    ],
)
def test_a_screened_stop_sends_only_the_locals_its_checks_read(monkeypatch, check):
    host, t, f, xs, n = _scan_with_a_check_set_at_its_first_stop(monkeypatch, check)
    rows: list = []
    with prints.sink_installed(rows.append):
        jax.block_until_ready(f(xs))
        assert len(t.stops()) == 1
        host.total = 0
        jax.block_until_ready(f(xs))  # every step screened
    assert len(t.stops()) == 1
    assert host.total <= STEPS * PER_SCREENED_STEP, host.total
    if check.startswith("log {n} step"):
        assert [r.text for r in rows][-STEPS:] == [f"step {i}" for i in range(STEPS)]
    if check.startswith("log {n} no"):
        assert [r.text for r in rows][-STEPS:] == ["no fields"] * STEPS
    if "disable" in check:
        assert host.total == STEPS * SCALARS  # a disabled breakpoint's condition reads nothing
    if check == "watch x":  # the values came, step by step
        (watch,) = watches.LIVE.watches(n)
        assert [v.number for v in watch.values][-STEPS:] == [float(i) for i in range(STEPS)]


def test_a_stop_a_screening_opens_has_every_value_of_every_frame():
    t = Transcript("p x", "p big[1, 1]", "p big.shape", "up", "p scale", "c")

    def step(c, x):
        big = jnp.full(LOCAL, x) + c  # noqa: F841 (read at the stop)
        jaxdbg.breakpoint(**t.options)
        return c + 1.0, None

    def loop(xs):
        scale = 2.0  # noqa: F841 (read at the stop, a frame up)
        return jax.lax.scan(step, 0.0, xs)[0]

    f = jax.jit(loop)
    xs = jnp.arange(float(STEPS))
    f.lower(xs)
    n = _number_of(step)
    breakpoint_state.set_condition(n, "x == 57")
    jax.block_until_ready(f(xs))
    assert [s.split(" (")[1] for s in t.stops()] == [f"breakpoint {n}, hit 58)"]
    assert t.answers("p x") == ["Array(57., dtype=float32)"]
    assert t.answers("p big[1, 1]") == ["Array(114., dtype=float32)"]  # 57 + c, c = 57
    assert t.answers("p big.shape") == ["(512, 512)"]
    assert t.answers("p scale") == ["2.0"]


def test_under_vmap_the_screening_names_the_element_and_later_elements_are_screened_too():
    t = Transcript("p x", "p row.sum()", "c", "p x", "p row.sum()", "c")

    def step(c, x):
        row = jnp.full((64,), x)  # noqa: F841 (read at the stop)
        jaxdbg.breakpoint(**t.options)
        return c, None

    def per_element(x0):
        return jax.lax.scan(step, 0.0, x0 + jnp.arange(10.0))[0]

    f = jax.jit(jax.vmap(per_element))
    x0 = jnp.array([0.0, 100.0, 200.0, 300.0])
    f.lower(x0)
    n = _number_of(step)
    breakpoint_state.set_condition(n, "x % 100 == 3 and x >= 100")  # step 3 of elements 1, 2, 3
    watches.LIVE.add(n, "x")
    breakpoint_state.set_ignore(n, 1)  # the first true condition (element 1) is ignored
    jax.block_until_ready(f(x0))
    assert t.answers("p x") == ["Array(203., dtype=float32)", "Array(303., dtype=float32)"]
    assert t.answers("p row.sum()") == ["Array(12992., dtype=float32)", "Array(19392., dtype=float32)"]
    assert ["batch 3/4" in s or "batch 4/4" in s for s in t.stops()] == [True, True]
    (watch,) = watches.LIVE.watches(n)
    assert len(watch.values) == 40  # every element of every step, passed or not


def test_under_pmap_a_logpoint_names_each_device_and_sends_only_what_it_reads(monkeypatch):
    host = HostBytes(monkeypatch)
    devices = jax.local_device_count()
    if devices < 2:
        pytest.skip("needs several devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)")
    t = Transcript()

    def step(c, x):
        big = jnp.full(LOCAL, x) + c
        jaxdbg.breakpoint(**t.options)
        return c + big[0, 0] * 0.0, None

    f = jax.pmap(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    xs = jnp.tile(jnp.arange(4.0), (devices, 1)) + 10 * jnp.arange(devices)[:, None]
    f.lower(xs)
    n = _number_of(step)
    breakpoint_state.set_log_template(n, "x={x:.0f}")
    rows: list = []
    with prints.sink_installed(rows.append):
        jax.block_until_ready(f(xs))
    assert t.stops() == []
    seen = sorted((r.site.device, r.text) for r in rows)
    assert seen == sorted((d, f"x={10 * d + i}") for d in range(devices) for i in range(4))
    assert host.total <= devices * 4 * PER_SCREENED_STEP, host.total  # c, x and the device index, per device and step


def test_under_vmap_a_logpoint_without_fields_writes_a_line_per_element_and_step(monkeypatch):
    host = HostBytes(monkeypatch)
    t = Transcript()

    def step(c, x):
        big = jnp.full(LOCAL, x) + c  # noqa: F841 (stays on the device)
        jaxdbg.breakpoint(**t.options)
        return c, None

    f = jax.jit(jax.vmap(lambda x0: jax.lax.scan(step, 0.0, x0 + jnp.arange(5.0))[0]))
    x0 = jnp.arange(3.0)
    f.lower(x0)
    breakpoint_state.set_log_template(_number_of(step), "tick")
    rows: list = []
    with prints.sink_installed(rows.append):
        jax.block_until_ready(f(x0))
    assert t.stops() == []
    assert sorted((r.site.batch_index, r.text) for r in rows) == sorted(
        ((b,), "tick") for b in range(3) for _ in range(5)
    )
    assert host.total <= 5 * 3 * SCALARS, host.total  # the scalars c and x of each element, with the question


MANY_LEAVES = screening.MAX_SENT_OPERANDS + 1


@pytest.mark.parametrize("token", [False, True])
def test_a_local_of_very_many_leaves_reaches_a_stop_in_chunks_and_is_never_sent_alone(token):
    # XLA's compile time for a lax.cond grows with the square of its operands: sent on
    # its own by a screening (two nested conds) and then with the opening stop (a third),
    # a train step's 10,000-leaf tree took 17.6 s to compile. It now travels only with a
    # stop that opens, in conds of at most OPENING_CHUNK operands (1.3 s), and a check
    # that reads it has the stop open and screened with every value.
    t = Transcript("p float(tree['w7'][0])", "p float(tree['w1020'][0])", "p float(x)", "c")

    def step(tree, x):
        x = x * 1.0
        x = jaxdbg.breakpoint(**t.options, token=x) if token else (jaxdbg.breakpoint(**t.options), x)[1]
        return x

    tree = {f"w{i}": jnp.full((4,), float(i)) for i in range(MANY_LEAVES)}
    f = jax.jit(step)
    program = f.lower(tree, 0.0).as_text()
    operands = [line.count("%") - 1 for line in program.splitlines() if "custom_call" in line]
    assert max(operands) <= staging.OPENING_CHUNK + 2, max(operands)
    n = _number_of(step)
    breakpoint_state.set_condition(n, "float(tree['w7'][0]) + float(x) == 11")
    assert [float(f(tree, float(x))) for x in range(6)] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert len(t.stops()) == 1
    assert t.answers("p float(tree['w7'][0])") == ["7.0"]
    assert t.answers("p float(tree['w1020'][0])") == ["1020.0"]  # from the last chunk
    assert t.answers("p float(x)") == ["4.0"]


def test_a_check_that_reads_the_whole_namespace_has_every_local_sent():
    t = Transcript()

    def step(c, x):
        y = x * 2  # noqa: F841 (read through locals())
        jaxdbg.breakpoint(**t.options)
        return c, None

    f = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs)[0])
    xs = jnp.arange(4.0)
    f.lower(xs)
    n = _number_of(step)
    breakpoint_state.set_log_template(n, "{float(locals()['y']):.0f}")
    rows: list = []
    with prints.sink_installed(rows.append):
        jax.block_until_ready(f(xs))
    assert [r.text for r in rows] == ["0", "2", "4", "6"]


def _under(transform: str, t: Transcript):
    """A 6-step scan whose step has x (0..5 + offset) and a 512x512 local, under ``transform``;
    returns (run, step)."""

    mesh = jax.make_mesh((jax.device_count(),), ("d",), **automatic_axes(1))
    spec = jax.sharding.PartitionSpec("d")

    sharded = transform == "sharded jit"  # big's rows on 8 devices, summed after the stop
    placed = (
        (lambda v: jax.lax.with_sharding_constraint(v, jax.sharding.NamedSharding(mesh, spec))) if sharded else None
    )

    def step(c, x):
        big = placed(jnp.full(LOCAL, x) + c) if sharded else jnp.full(LOCAL, x) + c
        jaxdbg.breakpoint(**t.options)
        return c + x * 0.0 + (jnp.sum(big) * 0.0 if sharded else 0.0), None

    def loop(offset):
        return jax.lax.scan(step, offset * 0.0, jnp.arange(6.0) + offset)[0]

    if transform == "grad":
        return (lambda: jax.jit(jax.grad(loop))(0.0)), step
    if transform == "sharded jit":
        return (lambda: jax.jit(loop)(0.0)), step
    if transform == "checkpoint":
        return (lambda: jax.jit(jax.checkpoint(loop))(0.0)), step
    offsets = jax.device_put(10.0 * jnp.arange(float(jax.device_count())), jax.sharding.NamedSharding(mesh, spec))
    assert transform == "shard_map"
    per_device = jax.shard_map(lambda o: loop(o[0])[None], mesh=mesh, in_specs=spec, out_specs=spec)
    return (lambda: jax.jit(per_device)(offsets)), step


@pytest.mark.parametrize("transform", ["grad", "checkpoint", "shard_map", "sharded jit"])
def test_a_condition_is_screened_under_each_transform_and_its_stop_has_every_value(monkeypatch, transform):
    host = HostBytes(monkeypatch)
    t = Transcript("p x", "p big[0, 0]", "c")
    run, step = _under(transform, t)
    jax.block_until_ready(jax.eval_shape(run))  # traced: the breakpoint has its number
    breakpoint_state.set_condition(_number_of(step), "x == 3")
    jax.block_until_ready(run())
    assert t.answers("p x") == ["Array(3., dtype=float32)"], t.text
    assert t.answers("p big[0, 0]") == ["Array(3., dtype=float32)"]
    # one opened stop's values (1 MB and the small ones); the other steps moved bytes
    assert host.total < 4 * LOCAL[0] * LOCAL[1] + 64 * 6 * jax.device_count()


def test_a_vmap_over_a_sharded_axis_is_screened_step_by_step():
    # Every operand is sharded in its type there, so the per-step question reads nothing
    # and XLA may ask it once per call: each step must still be screened on its own.
    t = Transcript("p x", "c")

    def step(c, x):
        c = c + x * 0.0
        jaxdbg.breakpoint(**t.options)
        return c + x * 0.0, None

    def loop(offset):
        return jax.lax.scan(step, offset * 0.0, jnp.arange(4.0) + offset)[0]

    mesh = jax.make_mesh((jax.device_count(),), ("d",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    offsets = jax.device_put(10.0 * jnp.arange(float(jax.device_count())), sharding)
    f = jax.jit(jax.vmap(loop))
    jax.eval_shape(f, offsets)
    breakpoint_state.set_condition(_number_of(step), "x == 12")  # step 2 of element 1
    jax.block_until_ready(f(offsets))
    assert t.answers("p x") == ["Array(12., dtype=float32)"]
    assert "batch 2/" in t.stops()[0]


LIMIT = 96.0  # a global the condition below reads


@pytest.mark.parametrize("condition", ["x >= LIMIT", "x + c * 0 >= LIMIT and big[0, 0] >= 0", "jnp.all(x >= LIMIT)"])
def test_a_false_condition_passes_its_steps_without_building_a_frame_and_stops_where_true(monkeypatch, condition):
    # The common screened stop: a condition false at most steps of a loop. NumPy decides
    # it on the values sent; a frame (the locals as JAX arrays) is built only where a
    # stop opens, or where NumPy may not decide it (a call: then at every step).
    built = []
    build = frames_mod.FrameTemplate.build
    monkeypatch.setattr(
        frames_mod.FrameTemplate, "build", lambda self, *a, **k: built.append(1) or build(self, *a, **k)
    )
    t = Transcript("p x", "c", "p x", "c", "p x", "c", "p x", "c")
    f, step = _scan_with_a_big_local(t)
    try:
        f.lower(jnp.arange(float(STEPS)))
        number = _number_of(step)
        breakpoint_state.set_condition(number, condition)
        hits = next(r.hits for r in breakpoint_state.rows() if r.number == number)
        jax.block_until_ready(f(jnp.arange(float(STEPS))))
        assert t.answers("p x") == [f"Array({v}., dtype=float32)" for v in (96, 97, 98, 99)], t.text
        assert next(r.hits for r in breakpoint_state.rows() if r.number == number) == hits + STEPS
        if condition.startswith("jnp"):
            assert len(built) >= STEPS
        else:
            # A few per opened stop (its screening's and its own frames), none per passed step.
            assert len(built) < STEPS // 2, len(built)
    finally:
        breakpoint_state.reset()


@pytest.mark.parametrize(
    "check, calls_per_step",
    [
        ("condition {n} x > 1e9", 1),  # the scalars came with the question: decided there
        ("watch x", 1),
        ("log {n} step {{x:.0f}}", 1),
        ("condition {n} big[0, 0] > 1e9", 2),  # the big local is asked for, then sent
    ],
)
def test_a_check_of_the_frames_scalars_is_decided_in_one_host_call_per_step(monkeypatch, check, calls_per_step):
    host, t, f, xs, n = _scan_with_a_check_set_at_its_first_stop(monkeypatch, check)
    with prints.sink_installed(lambda row: None):
        jax.block_until_ready(f(xs))
        assert len(t.stops()) == 1
        host.calls = host.total = 0
        jax.block_until_ready(f(xs))
    assert len(t.stops()) == 1
    assert host.calls == STEPS * calls_per_step
    big_sent = 4 * LOCAL[0] * LOCAL[1] * STEPS if calls_per_step == 2 else 0
    assert host.total <= STEPS * PER_SCREENED_STEP + big_sent, host.total


def test_a_failure_of_jaxdbg_in_the_screening_passes_the_stops_and_the_program_goes_on(monkeypatch, capsys):
    # A bug in deciding a stop must not end the user's computation (a training loop):
    # the stops are passed, and the failure is said once.
    from jaxdbg.engine import breakpoint_checks
    from jaxdbg.runtime import notices

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(breakpoint_checks, "screen", broken)
    monkeypatch.setattr(notices, "_said", set())
    t = Transcript()
    f, step = _scan_with_a_big_local(t)
    xs = jnp.arange(float(STEPS))
    f.lower(xs)
    breakpoint_state.set_condition(_number_of(step), "x > 1e9")
    try:
        assert float(f(xs)) == 0.0  # ran to the end
        jax.effects_barrier()
    finally:
        breakpoint_state.set_condition(_number_of(step), "")
    assert t.stops() == []
    said = [line for line in capsys.readouterr().out.splitlines() if "deciding a breakpoint's stop failed" in line]
    assert said == ["jaxdbg: deciding a breakpoint's stop failed (RuntimeError: a bug); such stops are passed"]


def test_a_condition_set_at_one_pmap_devices_stop_decides_the_devices_waiting_behind_it():
    # The other devices' stops of that step arrived before the condition was set, and
    # wait for their turn: the condition decides them when it comes, as a later step's.
    devices = jax.local_device_count()
    if devices < 2:
        pytest.skip("needs several devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)")
    t = Transcript()

    def step(c, i):
        c = c + 0.0
        jaxdbg.breakpoint(**t.options)
        return c, None

    f = jax.pmap(lambda c: jax.lax.scan(step, c, jnp.arange(8.0))[0])
    f.lower(jnp.zeros(devices))
    n = _number_of(step)
    t.stdin.write("\n".join([f"condition {n} i == 5", "c", *["p i", "c"] * devices, *["c"] * 8 * devices]) + "\n")
    t.stdin.seek(0)
    try:
        jax.block_until_ready(f(jnp.zeros(devices)))
        jax.effects_barrier()
        assert len(t.stops()) == 1 + devices, t.text
        assert t.answers("p i") == ["Array(5., dtype=float32)"] * devices
        hits = next(r.hits for r in breakpoint_state.rows() if r.number == n)
        assert hits == 8 * devices  # every stop is a hit, passed or not
    finally:
        breakpoint_state.set_condition(n, "")


def test_a_condition_set_at_one_vmap_elements_stop_decides_the_later_elements_of_that_step():
    t = Transcript()

    def step(c, i):
        c = c + 0.0
        jaxdbg.breakpoint(**t.options)
        return c, None

    f = jax.jit(jax.vmap(lambda c: jax.lax.scan(step, c, jnp.arange(8.0))[0]))
    f.lower(jnp.zeros(4))
    n = _number_of(step)
    t.stdin.write("\n".join([f"condition {n} i == 5", "c", *["p i", "c"] * 4, *["c"] * 32]) + "\n")
    t.stdin.seek(0)
    try:
        jax.block_until_ready(f(jnp.zeros(4)))
        jax.effects_barrier()
        assert len(t.stops()) == 1 + 4, t.text
        assert t.answers("p i") == ["Array(5., dtype=float32)"] * 4
    finally:
        breakpoint_state.set_condition(n, "")


@pytest.mark.parametrize(
    "typed", ["watch x\nwatch c", "watch x\nwatch c\nignore {n} 1000\nc"], ids=["continue all", "ignore"]
)
def test_a_stop_whose_only_checks_are_watches_of_scalars_passes_with_no_reader_made(monkeypatch, typed):
    # A watch on a loop's loss or step, passed at every step: the host decides the stop
    # and keeps the numbers as they came with its question, with no stop reader or frame
    # made (they cost most of a passed step's Python); the hits and values are as a
    # screening on a frame keeps them.
    made = []
    reader = staging.operand_reader.ScreenedStop
    monkeypatch.setattr(staging.operand_reader, "ScreenedStop", lambda *a: made.append(1) or reader(*a))
    _, t, f, xs, n = _scan_with_a_check_set_at_its_first_stop(monkeypatch, typed)  # then continue all
    try:
        jax.block_until_ready(f(xs))
        assert len(t.stops()) == 1 and not made
        x, c = watches.LIVE.watches(n)
        first = x.values[0].hit
        assert [(v.hit, v.number) for v in x.values] == [(first + i, float(i)) for i in range(STEPS)]
        assert [v.number for v in c.values] == [0.0] * STEPS
        breakpoint_state.set_condition(n, "x < 0")  # a condition too: screened on a reader
        jax.block_until_ready(f(xs))
        x, _ = watches.LIVE.watches(n)
        assert len(made) == STEPS and x.values[-1].hit == first + 2 * STEPS - 1
    finally:
        breakpoint_state.reset()


EVALUATED: list[float] = []


def _evaluated(x) -> bool:
    """A function a condition calls: it counts the condition's evaluations."""
    EVALUATED.append(float(x))
    return True


def test_a_stop_its_question_screened_open_is_not_screened_again():
    # A condition on the frame's scalars is decided with the question; the stop it opens
    # is then served as decided, not screened again with every value (a condition with a
    # side effect ran twice at each stop that opened).
    EVALUATED.clear()
    t = Transcript("p x", "c", "p x", "c")
    f, step = _scan_with_a_big_local(t)
    xs = jnp.arange(3.0)
    f.lower(xs)
    breakpoint_state.set_condition(_number_of(step), "_evaluated(x) and x >= 1")
    jax.block_until_ready(f(xs))
    assert EVALUATED == [0.0, 1.0, 2.0]
    assert t.answers("p x") == ["Array(1., dtype=float32)", "Array(2., dtype=float32)"]
