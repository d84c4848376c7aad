"""replay: a stop's frame run again eagerly, stepped through with bdb, in the terminal
(scripted commands answering a real stop of a real jitted, scanned, vmapped, pmapped
or shard_mapped computation)."""

from __future__ import annotations

import _thread
import dis
import io
import re
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine.frames import Frame
from jaxdbg.replay import inputs as replay_inputs
from support.jax_setups import devices_or_skip, shard_map

pytestmark = pytest.mark.usefixtures("fresh_scripted_queues")


def _opts(out: io.StringIO, commands: str) -> dict:
    """A terminal stop that answers with ``commands`` and writes to ``out``."""
    return dict(backend="cli", stdout=out, stdin=io.StringIO(""), commands=commands)


def _transcript(out: io.StringIO) -> str:
    return out.getvalue()


def _stops(text: str) -> int:
    """How many stops a transcript opened (the source windows quote this file too)."""
    return len(re.findall(r"^Stopped at ", text, re.M))


def test_replay_of_a_jitted_function_steps_and_returns_to_the_stop():
    out = io.StringIO()
    printed = []

    @jax.jit
    def f(x, y):
        z = x + y
        printed.append("traced")
        q = jnp.sin(z) * 2
        jaxdbg.breakpoint(**_opts(out, "replay; n; p z; n; p q; c; p q; c; p z; c"))
        return q

    result = f(jnp.float32(1), jnp.float32(2))
    np.testing.assert_allclose(result, np.sin(3.0) * 2, rtol=1e-6)
    text = _transcript(out)
    assert "This runs your Python again" in text
    assert "> " in text and "[replay]" in text
    # 'n' ran z = x + y eagerly: z is a concrete array of this stop's values
    assert "(jaxdbg) p z\nArray(3., dtype=float32)" in text
    # 'continue' ran to the stop's own line, where q exists
    assert "(jaxdbg) p q\nArray(0.28224" in text
    assert "The replay of f returned Array(0.28224" in text
    assert "Back at the stop (frame 0: f at" in text
    # after the replay the stop is as it was: its own z, its own frames
    tail = text.split("Back at the stop")[-1]
    assert "(jaxdbg) p z\nArray(3., dtype=float32)" in tail
    assert printed == ["traced", "traced"]  # the body ran once more in the replay, not twice


def test_replay_of_the_437th_iteration_of_a_scan_runs_that_body_once():
    out = io.StringIO()
    calls = []

    def body(carry, x):
        total, i = carry
        calls.append(1)
        total = total + x * i
        jaxdbg.breakpoint_if(i == 437, **_opts(out, "up; replay; down; replay; p carry; n; p i; c; p total; c; c"))
        return (total, i + 1), total

    @jax.jit
    def run(xs):
        return jax.lax.scan(body, (jnp.float32(0), jnp.int32(0)), xs)

    xs = jnp.ones(1000, jnp.float32)
    (final, _), _ = run(xs)
    assert float(final) == sum(range(1000))
    text = _transcript(out)
    assert _stops(text) == 1
    # the jitted function's own values stayed on the device: its replay is refused by name
    assert "*** cannot replay: the argument 'xs' of run is <unavailable: traced outside" in text
    assert "(jaxdbg) p i\nArray(437, dtype=int32)" in text
    before = sum(range(437))
    assert f"Array({before}., dtype=float32)" in text  # the carry entering iteration 437
    assert f"(jaxdbg) p total\nArray({before + 437}., dtype=float32)" in text
    assert "The replay of body returned ((Array(" in text
    assert len(calls) == 2  # traced once, replayed once: one iteration, not the loop


def test_replay_under_vmap_runs_the_stopped_element_unbatched():
    out = io.StringIO()

    def f(x):
        y = x * 10
        jaxdbg.breakpoint_if(x > 2, **_opts(out, "replay; p x; p x.shape; c; p y; c; c"))
        return y

    jax.jit(jax.vmap(f))(jnp.arange(4.0))
    text = _transcript(out)
    assert "batch 4/4" in text
    assert "(jaxdbg) p x\nArray(3., dtype=float32)" in text
    assert "(jaxdbg) p x.shape\n()" in text
    assert "(jaxdbg) p y\nArray(30., dtype=float32)" in text
    assert "(batch 4/4)" in text.split("(jaxdbg) replay")[1].strip().splitlines()[0]


def _stopped_on_device_3(shard_fn, mesh, out: io.StringIO) -> str:
    """Run ``shard_fn`` over ``arange(8)`` split on the mesh's axis "d" (its stop on
    the fourth device); the transcript."""
    from jax.sharding import PartitionSpec as P

    f = jax.jit(shard_map()(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P("d")))
    jax.block_until_ready(f(jnp.arange(8.0)))
    text = _transcript(out)
    assert _stops(text) == 1 and "device 3" in text
    return text


def test_replay_of_a_pmap_device():
    devices_or_skip(4)
    out = io.StringIO()

    def f(x):
        y = x.sum() + 1
        jaxdbg.breakpoint_if(x[0] == 4, **_opts(out, "replay; p x; c; p y; c; c"))
        return y

    jax.block_until_ready(jax.pmap(f)(jnp.arange(8.0).reshape(4, 2)))
    text = _transcript(out)
    assert _stops(text) == 1 and "device 2" in text
    assert "(device 2)" in text.split("(jaxdbg) replay")[1].strip().splitlines()[0]
    assert "(jaxdbg) p x\nArray([4., 5.], dtype=float32)" in text
    assert "(jaxdbg) p y\nArray(10., dtype=float32)" in text


def _normalise(v):
    mid = v - v.mean()  # exists only while normalise runs
    return mid / 2


def test_replay_of_a_shard_map_shard_steps_into_a_helper():
    from jax.sharding import Mesh

    devices = devices_or_skip(4)
    mesh = Mesh(np.array(devices), ("d",))
    out = io.StringIO()

    def shard_fn(block):
        scaled = _normalise(block) + 1
        jaxdbg.breakpoint_if(block[0] == 6, **_opts(out, "replay; s; s; p mid; where; c; p scaled; c; c"))
        return scaled

    text = _stopped_on_device_3(shard_fn, mesh, out)
    assert "in _normalise  [replay]" in text
    assert "(jaxdbg) p mid\nArray([-0.5,  0.5], dtype=float32)" in text
    where = text.split("(jaxdbg) where\n")[1].split("(jaxdbg)")[0]
    rows = where.splitlines()
    assert "_normalise" in rows[0] and "[replay]" in rows[0]
    assert "shard_fn" in rows[2] and "[replay]" in rows[2]
    assert "shard_fn" in rows[4] and "[replay]" not in rows[4]
    assert "(jaxdbg) p scaled\nArray([0.75, 1.25], dtype=float32)" in text


def test_a_rebound_argument_is_refused_by_name_and_can_be_passed():
    out = io.StringIO()

    @jax.jit
    def f(x, y):
        x = x * 2
        jaxdbg.breakpoint(**_opts(out, "replay; replay x=x / 2; p x; c; c; c"))
        return x + y

    f(jnp.float32(3), jnp.float32(1))
    text = _transcript(out)
    assert "*** cannot replay: f assigns its argument 'x' before line" in text
    assert "replay x=..." in text
    # with x given, the replay starts, with x as passed (the stop's x / 2)
    assert "(jaxdbg) p x\nArray(3., dtype=float32)" in text
    assert "The replay of f returned Array(7., dtype=float32)" in text


def test_rebinding_is_read_from_the_bytecode():
    def f(a, b, *rest, c=1, **kw):
        d = a + 1
        for _ in range(2):
            marker = 1
            b = d
        kw = {}
        return d, marker, kw, b

    code = f.__code__
    offsets = [i.offset for i in dis.get_instructions(code)]
    first, last = offsets[0], offsets[-1]
    assert replay_inputs.rebound_arguments(code, first) == []
    assert replay_inputs.rebound_arguments(code, last) == ["b", "kw"]
    store_marker = next(
        i.offset for i in dis.get_instructions(code) if i.opname.startswith("STORE") and i.argval == "marker"
    )
    # inside the loop, before 'b = d' in the text: the loop's earlier iteration rebound b
    assert replay_inputs.rebound_arguments(code, store_marker) == ["b"]


def test_bad_replay_arguments_are_refused_and_the_stop_goes_on():
    out = io.StringIO()

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**_opts(out, "replay nope=1; replay 3; replay x=undefined_name; step; p x; c"))
        return x

    f(jnp.float32(5))
    text = _transcript(out)
    assert "*** cannot replay: f has no argument 'nope' (its arguments: x)" in text
    assert "*** cannot replay: replay takes only name=value arguments" in text
    assert "*** cannot replay: NameError" in text
    assert "*** step steps through a replay" in text
    assert "(jaxdbg) p x\nArray(5., dtype=float32)" in text


def test_a_replay_that_raises_or_runs_out_of_memory_leaves_the_stop_usable():
    out = io.StringIO()

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**_opts(out, "replay; c; p x; replay x=x * 0; c; p x + 1; c"))
        return _check(x)

    f(jnp.float32(2))
    text = _transcript(out)
    assert "*** The replay of f raised ValueError: replayed 2.0 at " in text
    assert "in _check. Back at the stop" in text
    assert "(jaxdbg) p x\nArray(2., dtype=float32)" in text
    assert "The replay of f returned Array(0., dtype=float32)" in text
    assert "(jaxdbg) p x + 1\nArray(3., dtype=float32)" in text

    out2 = io.StringIO()
    jax.jit(lambda x: _oom_then_stop(x, out2))(jnp.float32(1))
    text = _transcript(out2)
    assert "raised" in text and "RESOURCE_EXHAUSTED" in text
    assert "(jaxdbg) p x\nArray(1., dtype=float32)" in text


def _check(x):
    if not isinstance(x, jax.core.Tracer) and float(x) == 2:
        raise ValueError(f"replayed {float(x)}")
    return x


def _oom_then_stop(x, out):
    jaxdbg.breakpoint(**_opts(out, "replay; c; p x; c"))
    if not isinstance(x, jax.core.Tracer):  # only in the replay: ask for an exabyte
        jnp.ones((2**40, 2**20), jnp.int8).block_until_ready()
    return x


def test_an_interrupted_replay_leaves_the_stop_usable():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("needs the main thread for the interrupt")
    out = io.StringIO()

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**_opts(out, "replay; c; p x * 3; c"))
        if not isinstance(x, jax.core.Tracer):  # only in the replay: hang until interrupted
            threading.Timer(0.5, _thread.interrupt_main).start()
            while True:
                pass
        return x

    f(jnp.float32(2))
    text = _transcript(out)
    assert "The replay was interrupted. Back at the stop" in text
    assert "(jaxdbg) p x * 3\nArray(6., dtype=float32)" in text


def test_quit_leaves_the_replay():
    out = io.StringIO()

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**_opts(out, "replay; q; p x; c"))
        return x

    assert float(f(jnp.float32(4))) == 4
    text = _transcript(out)
    assert "Left the replay of f. Back at the stop" in text
    assert "(jaxdbg) p x\nArray(4., dtype=float32)" in text
    assert "Quitting" not in text


def test_module_code_and_a_frame_without_its_function_are_not_replayed():
    source = ["x = 1\n"] * 3
    module = Frame("<cell>", 3, "<module>", {}, {}, source, 1, code=compile("".join(source), "<cell>", "exec"))
    with pytest.raises(replay_inputs.ReplayRefused, match="not a function's frame"):
        replay_inputs.replay_call(module)
    line_only = Frame("<cell>", 3, "f", {}, {}, source, 1)  # a NaN's line as JAX traced it
    with pytest.raises(replay_inputs.ReplayRefused, match="holds only the line of f"):
        replay_inputs.replay_call(line_only)


def test_replay_inside_fori_loop_while_loop_and_cond_runs_the_body_or_branch_once():
    out = io.StringIO()

    def fori_body(i, acc):
        acc = acc + i
        jaxdbg.breakpoint_if(i == 7, **_opts(out, "replay; p i; p acc; until; p acc; c; c"))
        return acc

    assert int(jax.jit(lambda: jax.lax.fori_loop(0, 10, fori_body, 0))()) == 45
    text = _transcript(out)
    # acc is rebound before the stop: refused by name, the rest goes on
    assert "*** cannot replay: fori_body assigns its argument 'acc' before line" in text

    out = io.StringIO()

    def while_body(state):
        i, total = state
        jaxdbg.breakpoint_if(i == 3, **_opts(out, "replay; n; p i, total; c; c"))
        return i + 1, total + i

    jax.jit(lambda: jax.lax.while_loop(lambda s: s[0] < 5, while_body, (0, 0)))()
    text = _transcript(out)
    assert "(jaxdbg) p i, total\n(Array(3, dtype=int32), Array(3, dtype=int32))" in text
    assert "The replay of while_body returned (Array(4, dtype=int32" in text

    out = io.StringIO()

    def negative(v):
        flipped = -v
        jaxdbg.breakpoint(**_opts(out, "replay; n; p flipped; c; c; c"))
        return flipped

    jax.jit(lambda v: jax.lax.cond(v > 0, lambda u: u, negative, v))(jnp.float32(-2))
    text = _transcript(out)
    assert "(jaxdbg) p flipped\nArray(2., dtype=float32)" in text
    assert "The replay of negative returned Array(2., dtype=float32)" in text


def test_the_banner_says_where_the_replay_is_and_ending_the_stop_ends_the_replay():
    from jaxdbg.engine import command_table as commands
    from jaxdbg.engine.outputs import Output, OutputKind

    out = io.StringIO()
    seen = {}

    def note_banner(session, arg):  # what every view's header shows, read mid-replay
        seen["banner"] = session.banner()
        seen["summary"] = session.summary().location
        return Output(OutputKind.TEXT, "")

    commands.command("notebanner", usage="notebanner", summary="test only")(note_banner)
    try:

        @jax.jit
        def g(x):
            y = _double(x)
            jaxdbg.breakpoint(**_opts(out, "replay; s; notebanner; continue all"))
            return y

        assert float(g(jnp.float32(3))) == 6  # 'continue all' ended the stop and its replay
    finally:
        commands.TABLE.remove("notebanner")
    line = g.__wrapped__.__code__.co_firstlineno + 3
    assert seen["banner"].startswith(f"Stopped at {__file__}:{line} in g (breakpoint")
    assert seen["banner"].endswith(f"; replaying g, now at {__file__}:{_double.__code__.co_firstlineno + 1} in _double")
    assert seen["summary"] == f"{__file__}:{line}"  # the stop's own line, not the replay's
    assert "Continuing past every remaining stop of this breakpoint." in out.getvalue()


def _double(v):
    return v * 2


def test_until_leaves_a_python_loop_of_the_replay():
    out = io.StringIO()

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**_opts(out, "replay; n; n; n; until; until; p k, total; c; c"))
        total = x
        for k in range(3):
            total = total + k
        return total

    assert float(f(jnp.float32(1))) == 4
    text = _transcript(out)
    first = f.__wrapped__.__code__.co_firstlineno
    # n, n, n: the loop's body; until, until: back at the 'for' line, then past the loop
    assert f"> {__file__}:{first + 5} in f  [replay]" in text
    assert "(jaxdbg) p k, total\n(2, Array(4., dtype=float32))" in text
    assert "The replay of f returned Array(4., dtype=float32)" in text


def _device_ids(text: str, command: str) -> list[int]:
    """The device ids ``p {...}.devices()`` printed after ``command`` in a transcript."""
    shown = text.split(f"(jaxdbg) {command}\n")[1].splitlines()[0]
    return [int(i) for i in re.findall(r"id=(\d+)", shown)]


def test_a_pmap_devices_replay_runs_on_that_device():
    devices_or_skip(4)
    out = io.StringIO()

    def f(x):
        made = jnp.ones(2)  # a new array: made on the default device, the stopped one in a replay
        y = x.sum() + made.sum()
        jaxdbg.breakpoint_if(
            x[0] == 4, **_opts(out, "replay; n; n; p x.devices(); p made.devices(); p y.devices(); c; c")
        )
        return y

    jax.block_until_ready(jax.pmap(f)(jnp.arange(8.0).reshape(4, 2)))
    text = _transcript(out)
    assert _stops(text) == 1 and "device 2" in text
    device = jax.local_devices()[2]
    assert f"(device 2), on {device}." in text
    for name in ("x", "made", "y"):
        assert _device_ids(text, f"p {name}.devices()") == [device.id], text


def test_a_shard_map_shards_replay_runs_on_the_meshs_device_at_that_position():
    from jax.sharding import Mesh

    devices = devices_or_skip(8)[::-1][:4]  # a mesh of devices 7, 6, 5, 4: position 3 is device 4
    mesh = Mesh(np.array(devices), ("d",))
    out = io.StringIO()

    def shard_fn(block):
        scaled = block * 2
        jaxdbg.breakpoint_if(block[0] == 6, **_opts(out, "replay; p block.devices(); n; p scaled.devices(); c; c"))
        return scaled

    text = _stopped_on_device_3(shard_fn, mesh, out)
    assert _device_ids(text, "p block.devices()") == [4], text
    assert _device_ids(text, "p scaled.devices()") == [4], text


@pytest.mark.parametrize(
    "collective,extra",
    [
        ("psum", ()),
        ("all_gather", ()),
        ("pmean", ()),
        ("ppermute", ([(i, (i + 1) % 4) for i in range(4)],)),
    ],
)
def test_a_replay_that_reaches_a_collective_says_which_and_returns_to_the_stop(collective, extra):
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(devices_or_skip(4)), ("d",))
    out = io.StringIO()

    def shard_fn(block):
        jaxdbg.breakpoint_if(block[0] == 6, **_opts(out, "replay; n; n; n; p block; c"))
        doubled = block * 2
        mixed = getattr(jax.lax, collective)(doubled, "d", *extra)
        return mixed.sum() + doubled

    mapped = shard_map()
    f = jax.jit(mapped(shard_fn, mesh=mesh, in_specs=P("d"), out_specs=P("d"), **_unchecked(mapped)))
    jax.block_until_ready(f(jnp.arange(8.0)))
    text = _transcript(out)
    line = shard_fn.__code__.co_firstlineno + 3
    said = f"*** The replay of shard_fn reached {collective} over axis 'd' at "
    assert said in text, text
    assert (
        f":{line} in shard_fn: a one-device replay cannot run a collective (it needs every "
        "device of the axis). Back at the stop (frame 0: shard_fn at "
    ) in text.split(said)[1]
    assert "--Exception--" not in text  # the replay ends at the collective, with no pause there
    assert "(jaxdbg) p block\nArray([6., 7.], dtype=float32)" in text  # the stop goes on


def _unchecked(mapped) -> dict:
    """shard_map without its replication check (older JAX checks ppermute's output)."""
    import inspect

    names = inspect.signature(mapped).parameters
    return {"check_vma": False} if "check_vma" in names else {"check_rep": False} if "check_rep" in names else {}


def test_a_replay_of_a_pmap_device_that_asks_its_axis_index_says_so():
    devices_or_skip(4)
    out = io.StringIO()

    def f(x):
        jaxdbg.breakpoint_if(x[0] == 4, **_opts(out, "replay; c; c"))
        return x * jax.lax.axis_index("i")

    jax.block_until_ready(jax.pmap(f, axis_name="i")(jnp.arange(8.0).reshape(4, 2)))
    text = _transcript(out)
    assert (
        f"*** The replay of f reached axis_index of axis 'i' at {__file__}:"
        f"{f.__code__.co_firstlineno + 2} in f: a one-device replay has no mapped axis. "
        "Back at the stop"
    ) in text, text


def test_a_pmap_given_its_devices_replays_on_the_device_at_the_stops_position():
    devices = devices_or_skip(8)[::-1][:4]  # devices 7, 6, 5, 4: position 2 is device 5
    out = io.StringIO()

    def f(x):
        jaxdbg.breakpoint_if(x[0] == 4, **_opts(out, "replay; p x.devices(); c; c"))
        return x + 1

    jax.block_until_ready(jax.pmap(f, devices=devices)(jnp.arange(8.0).reshape(4, 2)))
    text = _transcript(out)
    assert _stops(text) == 1 and "device 2" in text
    assert _device_ids(text, "p x.devices()") == [5], text


def test_stepping_passes_over_code_without_a_file_whatever_linecache_holds_for_it(monkeypatch):
    """Python 3.13 keeps a `python -c` command under "<string>" (pytest-xdist's workers
    start so): a replay's step must not stop in exec'd code (jax 0.7 has some) as if
    that command were its source."""
    import linecache

    from jaxdbg.replay import stepping as replay

    monkeypatch.setitem(linecache.cache, "<string>", (1, None, ["import sys\n"], "<string>"))
    namespace: dict = {}
    exec("import sys\ndef here():\n    return sys._getframe()\n", namespace)
    assert not replay._is_users(namespace["here"]())


def test_continue_inside_a_breakpoint_call_over_several_lines_does_not_stop_there_again():
    # Python reports such a statement's lines again as its evaluation moves between them
    # (the arguments, then the call); `continue` must still run past the stop's statement.
    out = io.StringIO()

    def f(x):
        y = x * 2
        jaxdbg.breakpoint(
            **_opts(out, "replay; n; c; c"),
        )
        return y + 1

    jax.block_until_ready(jax.jit(f)(jnp.ones(2)))
    text = _transcript(out)
    assert "The replay of f returned Array([3., 3.], dtype=float32)" in text, text
    assert _stops(text) == 1 and text.count("[replay]") == 2, text


def test_a_replay_that_appends_to_a_list_argument_leaves_the_stops_list_as_it_was():
    out = io.StringIO()

    @jax.jit
    def f(seen, x):
        seen.append(x * 2)
        jaxdbg.breakpoint(**_opts(out, "p len(seen); replay; c; c; p len(seen); replay; c; c; p len(seen); c"))
        return x

    f([jnp.ones(1)], jnp.ones(1))
    text = _transcript(out)
    assert re.findall(r"\(jaxdbg\) p len\(seen\)\n(\d+)", text) == ["2", "2", "2"], text


def test_a_replay_that_changes_its_arguments_in_place_leaves_the_stops_values_as_they_were():
    """The replay runs on copies: an NNX Module and Optimizer it updates in place
    (``opt.update(model, grads)``) and a list it appends to are the stop's own values,
    which the banner promises to leave unchanged."""
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")
    out = io.StringIO()
    model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
    opt = nnx.Optimizer(model, optax.sgd(0.5), wrt=nnx.Param)
    look = "p float(model.kernel[...].sum()), int(opt.step[...]), len(seen)"
    # each replay: 'c' runs to the stop's own line, 'c' again to the end, back at the stop
    commands = f"{look}; replay; c; c; {look}; replay; c; c; {look}; c"

    @nnx.jit
    def train_step(model, opt, seen, x):
        seen.append(x)
        grads = nnx.grad(lambda m: jnp.sum(m(x) ** 2))(model)
        opt.update(model, grads)
        jaxdbg.breakpoint(**_opts(out, commands))
        return model.kernel[...].sum()

    train_step(model, opt, [jnp.ones(1)], jnp.ones((1, 2)))
    text = _transcript(out)
    before, after_one, after_two = re.findall(r"\(jaxdbg\) p float.*\n(\(.*\))", text)
    assert before == after_one == after_two, text
    assert text.count("The replay of train_step returned") == 2


def test_an_argument_that_cannot_be_copied_is_passed_as_it_is_and_the_others_are_copied():
    class Uncopyable:
        def __deepcopy__(self, memo):
            raise TypeError("cannot copy a handle")

    out = io.StringIO()

    def f(seen, h, counts, again):
        seen.append(h)
        counts.append(len(seen))
        jaxdbg.breakpoint(**_opts(out, "replay; c; c; p len(seen), seen[0] is h, counts; c"))
        return len(seen) + 10 * len(again)

    seen: list = []
    f(seen, Uncopyable(), [], seen)
    text = _transcript(out)
    # the list holding the handle is the stop's own, twice (the replay appended to it);
    # the counts, copied, are as the stop had them
    assert "The replay of f returned 22" in text, text
    assert "(jaxdbg) p len(seen), seen[0] is h, counts\n(2, True, [1])" in text, text


def test_a_replays_nnx_arguments_are_new_objects_over_the_stops_arrays():
    """A replay's copy of NNX objects shares the stop's arrays (no second copy of a big
    model's parameters), and keeps the references its arguments share."""
    nnx = pytest.importorskip("flax.nnx")
    optax = pytest.importorskip("optax")

    class Head(nnx.Module):
        def __init__(self, body):
            self.body = body  # the same Linear as the `body` argument

    def step(body, head, opt):
        return body, head, opt

    body = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
    head, opt = Head(body), nnx.Optimizer(body, optax.adam(0.1), wrt=nnx.Param)
    frame = Frame(
        "f.py", 1, "step", {"body": body, "head": head, "opt": opt}, {}, ["\n"], 1, code=step.__code__, instruction=0
    )
    copied_body, copied_head, copied_opt = replay_inputs.replay_call(frame).args
    assert copied_body is not body and copied_head is not head and copied_opt is not opt
    assert copied_body.kernel is not body.kernel  # a Variable of its own, to update in place
    assert copied_body.kernel.get_value() is body.kernel.get_value()  # over the same array
    assert copied_head.body is copied_body
    assert copied_opt.opt_state[0].mu["kernel"].get_value() is opt.opt_state[0].mu["kernel"].get_value()


def test_a_replay_that_returns_a_pytree_says_it_in_one_line_as_locals_does():
    """A scan step's (carry, output) or a train step's (params, state, loss) is said as
    its summary, never as a repr cut in the middle; _replay_result keeps it whole."""
    out = io.StringIO()

    @jax.jit
    def step(params, x):
        new = {"w": params["w"] - x, "b": params["b"] * jnp.nan}
        jaxdbg.breakpoint(**_opts(out, "replay; c; c; p sorted(_replay_result[0]); c"))
        return new, x.sum()

    step({"w": jnp.ones((64, 64)), "b": jnp.zeros(64)}, jnp.ones((64, 64)))
    text = _transcript(out)
    said = re.search(r"The replay of step returned (.*) \(kept as _replay_result\)", text)
    assert said, text
    assert said.group(1).startswith("tuple · 3 arrays · 4,161 float32 · 16.3 KB"), said.group(1)
    assert "NaN in [0]['b'] (64)" in said.group(1)
    assert "(jaxdbg) p sorted(_replay_result[0])\n['b', 'w']" in text
