"""Fails loudly when a private JAX or IPython name that the adapters use moves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdbg.internals import (
    ipykernel_comms,
    jax_api,
    jax_checkify_errors,
    jax_debugger,
    jax_host_calls,
    jax_nan_checks,
    jax_nan_reruns,
    jax_partial_eval,
    jax_programs,
)
from support import hlo_text

# Every module that touches JAX internals reports the private names it uses.
JAX_ADAPTERS = (
    jax_api,
    jax_checkify_errors,
    jax_debugger,
    jax_host_calls,
    jax_programs,
    jax_nan_checks,
    jax_nan_reruns,
    jax_partial_eval,
)


@pytest.mark.parametrize(
    "module, name",
    [(module, name) for module in JAX_ADAPTERS for name in sorted(module.names_in_use())],
    ids=lambda value: getattr(value, "__name__", value),
)
def test_private_jax_name_still_exists(module, name):
    assert module.names_in_use()[name], f"{name} is gone in jax {jax.__version__}; update {module.__file__}"


def test_jax_version_in_tested_range():
    low, high = jax_api.SUPPORTED_JAX
    assert low <= jax_api.jax_version()[:2] <= high, (
        f"jax {jax.__version__} is outside the tested range {low}..{high}; "
        "run the suite and widen SUPPORTED_JAX in jaxdbg/internals/jax_api.py"
    )


def test_jax_debugger_registry_shape():
    """install_jax_hook writes (priority, debugger) into JAX's registry dict."""
    from jax._src.debugger import core

    assert isinstance(core._debugger_registry, dict)
    priority, debugger = next(iter(core._debugger_registry.values()))
    assert isinstance(priority, int) and callable(debugger)


def test_widget_comm_exists_before_it_is_opened(monkeypatch):
    """The panel's hook runs with the comm created and its handler set, before comm_open."""
    pytest.importorskip("comm.base_comm", reason="no comm package before ipykernel 6.18 (Colab's 6.17)")
    import comm.base_comm

    from jaxdbg_widgets.panel.widget import PanelWidget

    order = []
    plain_open = comm.base_comm.BaseComm.open

    def recording_open(self, *args, **kwargs):
        order.append(("open", self))
        return plain_open(self, *args, **kwargs)

    monkeypatch.setattr(comm.base_comm.BaseComm, "open", recording_open)
    seen = {}

    def hook(widget):
        order.append(("hook", widget.comm))
        seen["comm"] = widget.comm

    w = PanelWidget(before_open=hook, frames=[{"function": "f", "where": "x:1", "path": "x:1"}])
    mine = [what for what, c in order if c is w.comm]  # (the Layout opens its own comm first)
    assert mine == ["hook", "open"] and seen["comm"] is w.comm
    assert w.model_id == w.comm.comm_id
    w.close()


def test_checkify_traceback_frames_are_readable():
    """checkify keeps a jaxlib Traceback with each error; jaxdbg reads its frames."""
    from jax.experimental import checkify

    def failing(x):
        checkify.check(x > 0, "bad")
        return x

    err, _ = checkify.checkify(failing)(-1.0)
    frames = jax_checkify_errors.traceback_frames(err.get_exception().traceback_info)
    mine = [f for f in frames if f[0] == __file__]
    assert mine and mine[0][1] == failing.__code__.co_firstlineno + 1, frames
    assert mine[0][2].endswith("failing"), frames


@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
def test_jax_debugger_frames_and_call_convention():
    """JAX calls a registered debugger as debugger(frames, thread_id, **kwargs) with
    DebuggerFrames that jax_debugger.read_jax_frame understands."""
    from jax._src.debugger import core

    got = []
    jax_debugger.register_with_jax_debugger("convention-test", lambda *a, **k: got.append((a, k)), 10**9)
    try:

        def f(x):
            y = x + 1
            core.breakpoint(flavour="mint")
            return y

        jax.jit(f)(1.0)
    finally:
        jax_debugger.unregister_from_jax_debugger("convention-test")
    (frames, thread_id), kwargs = got[0]
    assert kwargs == {"flavour": "mint"} and (thread_id is None or isinstance(thread_id, int))
    first = jax_debugger.read_jax_frame(frames[0])
    assert first.filename == __file__ and float(first.locals["y"]) == 2.0
    assert first.source[first.offset].strip() == 'core.breakpoint(flavour="mint")'
    assert first.lineno - first.offset == f.__code__.co_firstlineno


def test_xla_names_the_exception_of_a_failed_callback():
    class Marker(Exception):
        pass

    def fail(x):
        raise Marker("stop")

    with pytest.raises(Exception) as info:
        jax.jit(lambda x: (jax.debug.callback(fail, x), x)[1])(1.0).block_until_ready()
    assert jax_api.failed_callback_names(info.value, "Marker")
    assert not jax_api.failed_callback_names(info.value, "DebuggerQuit")
    assert not jax_api.failed_callback_names(ValueError("callback Marker"), "Marker")


def test_xla_says_when_a_failed_computations_error_came_through_an_input():
    class Marker(Exception):
        pass

    def fail(x):
        raise Marker("stop")

    # Sharded over the host devices, the call returns before its callback fails.
    mesh = jax.make_mesh((jax.device_count(),), ("d",))
    x = jax.device_put(jnp.ones(jax.device_count()), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d")))
    y = jax.jit(lambda x: (jax.debug.callback(fail, x), x * 2)[1])(x)
    with pytest.raises(Exception) as own:
        y.block_until_ready()
    with pytest.raises(Exception) as carried:
        (y + 1).block_until_ready()
    assert jax_api.failed_callback_names(own.value, "Marker") and not jax_api.failed_in_an_input(own.value)
    assert jax_api.failed_callback_names(carried.value, "Marker") and jax_api.failed_in_an_input(carried.value)


def test_private_ipython_ipywidgets_and_comm_names():
    import inspect

    pytest.importorskip("comm.base_comm", reason="no comm package before ipykernel 6.18 (Colab's 6.17)")
    from comm.base_comm import BaseComm
    from IPython.core.interactiveshell import InteractiveShell

    from jaxdbg.internals import ipywidgets_api

    source = inspect.getsource(InteractiveShell.set_custom_exc)
    assert "self.CustomTB" in source and "self.custom_exceptions" in source
    assert "_closed" in inspect.getsource(BaseComm)  # ipykernel_comms.comm_closed
    assert all(ipywidgets_api.names_in_use().values()), ipywidgets_api.names_in_use()
    assert ipywidgets_api.html_style() is not None or int(__import__("ipywidgets").__version__[0]) < 8


def test_display_publisher_parent_header_on_ipykernel_6():
    """ipykernel_parents.display_parent_6x points ipykernel 6's one global display parent
    (ZMQDisplayPublisher.parent_header) at the paused cell inside its block and puts the
    old one back; on 7.x, which pins a parent per thread, it leaves the publisher alone."""
    from types import SimpleNamespace

    from ipykernel.zmqshell import ZMQDisplayPublisher

    from jaxdbg.internals import ipykernel_parents

    publisher = ZMQDisplayPublisher()
    kernel = SimpleNamespace(shell=SimpleNamespace(display_pub=publisher))
    before = {"msg_id": "click", "msg_type": "comm_msg"}
    publisher.parent_header = before
    cell = {"header": {"msg_id": "paused-cell", "msg_type": "execute_request"}}
    with ipykernel_parents.display_parent_6x(kernel, cell):
        inside = publisher.parent_header
    assert publisher.parent_header is before
    if hasattr(ZMQDisplayPublisher, "set_thread_parent"):  # ipykernel 7: per-thread parents
        assert inside is before
    else:
        assert inside["msg_id"] == "paused-cell", inside


class _Socket:
    """Keeps what a publisher sends (the frames of each message)."""

    def __init__(self):
        self.sent = []

    def send_multipart(self, frames, *args, **kwargs):
        self.sent.append(frames)


@pytest.mark.skipif(
    hasattr(__import__("ipykernel.zmqshell").zmqshell.ZMQDisplayPublisher, "set_thread_parent"),
    reason="ipykernel 7 pins a display parent per thread",
)
def test_a_display_goes_to_the_paused_cell_when_the_shell_moves_the_parent_meanwhile():
    """ipykernel 6: the shell, on the main thread, sets the publisher's one parent to each
    message it handles, such as the panel's ``held`` sent the moment the widget opened.
    A display inside display_parent_6x still names the paused cell; after the block,
    the parent the shell set stays."""
    from types import SimpleNamespace

    from ipykernel.zmqshell import ZMQDisplayPublisher
    from jupyter_client.session import Session

    from jaxdbg.internals import ipykernel_parents

    socket, session = _Socket(), Session()
    publisher = ZMQDisplayPublisher(session=session, pub_socket=socket)
    kernel = SimpleNamespace(shell=SimpleNamespace(display_pub=publisher))
    cell = {"header": {"msg_id": "paused-cell", "msg_type": "execute_request"}}
    held = {"header": {"msg_id": "held", "msg_type": "comm_msg"}}
    with ipykernel_parents.display_parent_6x(kernel, cell):
        publisher.set_parent(held)  # the shell handles the frontend's message now
        publisher.publish({"text/plain": "the panel"})
    assert publisher.parent_header["msg_id"] == "held"  # the shell's, not put back
    [frames] = socket.sent
    _, parts = session.feed_identities(frames)
    sent = session.deserialize(parts)
    assert sent["msg_type"] == "display_data" and sent["parent_header"]["msg_id"] == "paused-cell", sent


def test_custom_vmap_keeps_the_effects_of_its_body():
    """Breakpoints stage their host callback inside custom_vmap. JAX < 0.8 dropped the
    body's effects there, so jit pruned a callback whose output nothing used;
    jax_api.keep_custom_vmap_effects gives such a JAX the rule newer ones have."""
    from jax.custom_batching import custom_vmap

    seen = []

    @custom_vmap
    def record(x):
        jax.debug.callback(lambda v: seen.append(float(v)), x)
        return x

    @record.def_vmap
    def record_batched(axis_size, in_batched, x):
        return record(x), in_batched[0]

    def program(x):
        record(x)  # output unused: only the effect keeps it
        return x + 1

    assert jax.make_jaxpr(program)(1.0).effects
    jax.jit(program)(2.0)
    jax.effects_barrier()
    assert seen == [2.0]


def test_checkify_error_fields_rebuild_the_error():
    """LocatedError.of copies a checkify Error through jax_checkify_errors.checkify_error_fields;
    mapped_shape reads the shape of its predicates."""
    from jax.experimental import checkify

    from jaxdbg.capture.checkify_errors import LocatedError, mapped_shape

    def failing(x):
        checkify.check(x > 0, "x must be positive, got {x}", x=x)
        return x

    err, _ = checkify.checkify(failing)(jax.numpy.float32(-1.0))
    copy = checkify.Error(*jax_checkify_errors.checkify_error_fields(err))
    assert copy.get() == err.get() and "x must be positive, got -1.0" in copy.get()
    assert "x must be positive" in LocatedError.of(err).get()
    batched, _ = jax.vmap(checkify.checkify(failing))(jax.numpy.array([1.0, -2.0, 3.0]))
    assert [tuple(jax.numpy.shape(p)) for p in jax_checkify_errors.checkify_error_predicates(batched)] == [(3,)]
    assert mapped_shape(batched) == (3,)


def test_type_printer_added_and_put_back():
    """ipython_api.add_type_printer registers through for_type and undoes through the
    formatter's type_printers dict, restoring an earlier printer."""
    from IPython.core.formatters import HTMLFormatter

    from jaxdbg.internals import ipython_api

    class Thing:
        pass

    formatter = HTMLFormatter()
    undo = ipython_api.add_type_printer(formatter, Thing, lambda obj: "<b>mine</b>")
    assert formatter(Thing()) == "<b>mine</b>"
    undo()
    assert formatter(Thing()) is None and Thing not in formatter.type_printers
    formatter.for_type(Thing, lambda obj: "<i>theirs</i>")
    undo = ipython_api.add_type_printer(formatter, Thing, lambda obj: "<b>mine</b>")
    undo()
    assert formatter(Thing()) == "<i>theirs</i>"


def test_cell_source_is_cached_under_its_file_name():
    """ipython_api.cache_cell_source: IPython's CachingCompiler.cache puts the cell in
    linecache, so frames compiled under the name show its lines."""
    import linecache
    import types

    from IPython.core.compilerop import CachingCompiler

    from jaxdbg.internals import ipython_api

    shell = types.SimpleNamespace(compile=CachingCompiler())
    filename = ipython_api.cache_cell_source(shell, "y = 41\ny + 1\n")
    assert linecache.getlines(filename) == ["y = 41\n", "y + 1\n"]
    namespace = {}
    exec(compile("y = 41\n", filename, "exec"), namespace)
    assert namespace["y"] == 41


def test_cell_events_register_and_unregister():
    """ipython_api.register_cell_events: IPython's pre/post_run_cell with their
    arguments; the unregister is safe to call twice."""
    from IPython.core.events import EventManager, available_events

    from jaxdbg.internals import ipython_api

    events = EventManager(shell=None, available_events=available_events)
    shell = type("Shell", (), {"events": events})()
    seen = []
    unregister = ipython_api.register_cell_events(
        shell,
        pre_run_cell=lambda info: seen.append(("pre", info)),
        post_run_cell=lambda result: seen.append(("post", result)),
    )
    events.trigger("pre_run_cell", "info")
    events.trigger("post_run_cell", "result")
    assert seen == [("pre", "info"), ("post", "result")]
    unregister()
    unregister()
    events.trigger("pre_run_cell", "again")
    assert len(seen) == 2
    assert ipython_api.register_cell_events(object(), pre_run_cell=print)() is None  # no events: no-op


def test_the_sigint_handler_ipykernel_puts_back_after_a_request_can_be_chosen():
    """ipykernel saves the SIGINT handler before each shell request and puts it back
    after (SIG_IGN between cells): the adapter swaps the saved one."""
    import signal

    from ipykernel.kernelbase import Kernel

    from jaxdbg.internals import ipykernel_kernel

    class Idle:  # pre/post_handler_hook read and write only this attribute
        pass

    kernel = Idle()
    heard = []
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel idles
    try:
        Kernel.pre_handler_hook(kernel)  # a cell starts
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert ipykernel_kernel.between_cells_handler(kernel) is signal.SIG_IGN
        assert ipykernel_kernel.hear_interrupts_between_cells(kernel, lambda *a: heard.append(a))
        Kernel.post_handler_hook(kernel)  # the cell ended
        signal.raise_signal(signal.SIGINT)
        assert len(heard) == 1
    finally:
        signal.signal(signal.SIGINT, previous)


def test_main_shell_busy_counts_cells_run_outside_dispatch():
    """ipykernel_busy.main_shell_busy reads the main thread's stack: ipykernel's
    dispatch_shell, or a function marked runs_cells_outside_dispatch (the 6.x pump's
    replay of held cells)."""
    import threading

    from jaxdbg.internals import ipykernel_busy, ipykernel_pump

    assert ipykernel_pump._replay.__code__ in ipykernel_busy._cell_runners
    fake_kernel = object()
    seen = []

    @ipykernel_busy.runs_cells_outside_dispatch
    def running_a_cell():
        helper = threading.Thread(target=lambda: seen.append(ipykernel_busy.main_shell_busy(fake_kernel)))
        helper.start()
        helper.join()

    running_a_cell()
    outside = threading.Thread(target=lambda: seen.append(ipykernel_busy.main_shell_busy(fake_kernel)))
    outside.start()
    outside.join()
    assert seen == [True, False]


def test_adapter_status_without_ipykernel(monkeypatch):
    """Without ipykernel (no version) the report still comes back, every name missing."""
    from jaxdbg.internals import ipykernel_status

    monkeypatch.setattr(ipykernel_status, "kernel_version", lambda: None)
    status = ipykernel_status.adapter_status()
    assert status["ipykernel"] is None and not status["in_kernel"]
    assert "stdout.set_parent" in status["required"]
    assert "kernel.do_one_iteration" in status["missing"]


def test_checkpoint_recompute_stages_a_marked_custom_vmap_again_and_leaves_others_alone():
    """The partial-eval rule for custom_vmap: a layer marked with
    recompute_custom_vmap_as runs again (as its recomputing variant) in the backward
    pass of jax.checkpoint; an unmarked custom_vmap is differentiated as before."""
    import jax.numpy as jnp
    from jax.custom_batching import custom_vmap

    calls = []

    def layer(tag):
        @custom_vmap
        def call(x):
            jax.debug.callback(lambda v: calls.append((tag, float(v))), x)
            return jnp.zeros((), jnp.bool_)

        @call.def_vmap
        def rule(axis_size, in_batched, x):
            raise NotImplementedError

        if tag == "forward":
            jax_api.recompute_custom_vmap_as(rule, lambda: layer("recomputed"))
        return call

    def f(x):
        layer("forward")(jax.lax.stop_gradient(x))
        return jnp.sin(x)

    assert jax_api.stage_host_calls_again_under_remat() in (True, False)  # idempotent
    jax.grad(jax.checkpoint(f))(1.0)
    assert calls == [("forward", 1.0), ("recomputed", 1.0)]

    calls.clear()  # unmarked: kept in the forward pass only, as JAX keeps it
    jax.grad(jax.checkpoint(lambda x: (layer("plain")(jax.lax.stop_gradient(x)), jnp.sin(x))[1]))(2.0)
    assert calls == [("plain", 2.0)]

    @custom_vmap
    def double(x):
        return 2 * x

    @double.def_vmap
    def double_rule(axis_size, in_batched, x):
        return 2 * x, in_batched[0]

    def h(x):
        return jnp.sum(double(jax.lax.stop_gradient(x)) * x)

    assert float(jax.jit(jax.grad(jax.checkpoint(h)))(3.0)) == float(jax.grad(h)(3.0)) == 6.0


def test_checkify_errors_inside_jnp_functions_walk_out_to_the_user_frame():
    from jax.experimental import checkify

    from jaxdbg.capture.checkify_errors import user_frames

    def f(x, y):
        return x // y

    args = (jax.numpy.int32(3), jax.numpy.int32(0))
    errors = jax_checkify_errors.errors_interpreted_apart(checkify.div_checks)
    with jax_checkify_errors.checkify_errors_at_user_frames(user_frames):
        err, _ = checkify.checkify(f, errors=errors)(*args)
    frames = user_frames(err.get_exception().traceback_info)
    assert frames and frames[0].function.split(".")[-1] == "f"
    assert frames[0].lineno == f.__code__.co_firstlineno + 1


@pytest.mark.skipif(
    hasattr(__import__("ipykernel.zmqshell").zmqshell.ZMQDisplayPublisher, "set_thread_parent"),
    reason="ipykernel 7 pins a display parent per thread",
)
def test_a_pinned_threads_displays_go_to_its_cell_until_undone_on_ipykernel_6():
    """pin_thread_parent (the print log's and the pause channel's pin) pins displays on
    ipykernel 6 too, not only the streams: the shell moving the one global parent does
    not take this thread's displays with it; after the undo they follow it again."""
    from types import SimpleNamespace

    from ipykernel.zmqshell import ZMQDisplayPublisher
    from jupyter_client.session import Session

    from jaxdbg.internals import ipykernel_parents

    socket, session = _Socket(), Session()
    publisher = ZMQDisplayPublisher(session=session, pub_socket=socket)
    kernel = SimpleNamespace(shell=SimpleNamespace(display_pub=publisher))
    cell = {"header": {"msg_id": "paused-cell", "msg_type": "execute_request"}}
    undo = ipykernel_parents.pin_thread_parent(kernel, None, cell)
    publisher.set_parent({"header": {"msg_id": "click", "msg_type": "comm_msg"}})
    publisher.publish({"text/plain": "a print-log row"})
    undo()
    publisher.publish({"text/plain": "after"})
    parents = [session.deserialize(session.feed_identities(frames)[1])["parent_header"] for frames in socket.sent]
    assert [p["msg_id"] for p in parents] == ["paused-cell", "click"], parents


def test_a_path_jax_excludes_after_a_first_answer_hides_its_frames_from_then_on(tmp_path):
    """include_frame keeps JAX's answer per file (it costs ~0.3 ms a frame), and asks
    again once a library has registered a path JAX leaves out of tracebacks."""
    from jax._src import traceback_util

    source = tmp_path / "library_code.py"
    source.write_text("import sys\n\ndef where():\n    return sys._getframe()\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    frame = namespace["where"]()
    assert jax_api.include_frame(frame) and jax_api.include_frame(frame)
    traceback_util.register_exclusion(str(tmp_path))
    try:
        assert not jax_api.include_frame(frame)
    finally:
        traceback_util._exclude_paths.remove(str(tmp_path))


def test_a_comm_whose_routing_fails_still_opens_and_the_failure_is_logged(caplog):
    class Manager:
        def __init__(self):
            self.comms = {}

        def register_comm(self, comm):
            self.comms[comm.comm_id] = comm
            return comm.comm_id

    class Kernel:
        comm_manager = Manager()

    class Comm:
        comm_id = "c1"

    def fail(comm):
        raise RuntimeError("no route")

    kernel = Kernel()
    undo = ipykernel_comms.watch_comm_opens(kernel, fail)
    try:
        with caplog.at_level("WARNING", logger="jaxdbg"):
            assert kernel.comm_manager.register_comm(Comm()) == "c1"
    finally:
        undo()
    assert "may not answer until it ends" in caplog.text and "no route" in caplog.text


def test_a_partial_evaluation_a_library_starts_is_told_from_jaxs_own():
    """in_exploratory_partial_eval: True in a function a library partially evaluates
    itself (as Flax's nn.scan does to its body), False eagerly, under jit, in a scan body
    and in a custom_jvp rule that grad linearizes."""
    from jax._src import linear_util as lu
    from jax._src.interpreters import partial_eval as pe

    seen = {}

    def probe(where):
        seen[where] = jax_partial_eval.in_exploratory_partial_eval()

    def body(x):
        probe("library's partial eval")
        return x * 2

    aval = jax.core.ShapedArray((), jnp.float32)
    fun = lu.wrap_init(body, debug_info=jax.api_util.debug_info("probe", body, (1.0,), {}))
    flat, _ = jax.api_util.flatten_fun_nokwargs(fun, jax.tree.structure((1.0,)))
    pe.trace_to_jaxpr_nounits(flat, [pe.PartialVal.unknown(aval)])

    probe("eager")
    jax.jit(lambda x: (probe("jit"), x)[1])(1.0)
    jax.lax.scan(lambda c, x: (probe("scan body"), (c, x))[1], 0.0, jnp.ones(2))

    @jax.custom_jvp
    def h(x):
        return x**2

    @h.defjvp
    def h_jvp(primals, tangents):
        probe("custom_jvp rule under grad")
        return h(primals[0]), 2 * primals[0] * tangents[0]

    jax.jit(jax.grad(h))(3.0)
    assert seen == {
        "library's partial eval": True,
        "eager": False,
        "jit": False,
        "scan body": False,
        "custom_jvp rule under grad": False,
    }


def test_a_stops_layers_leave_the_frames_leaves_unnamed():
    """JAX names each argument leaf of a custom_jvp / custom_vmap function at each call
    (``operands[4117]``), which took a stop over 5,000 leaves 0.1-0.3 s of tracing; the
    stop's layers carry debug info without names (jax_programs.unnamed_arguments)."""
    import jaxdbg
    from jaxdbg.engine import breakpoint_state

    def step(params, x):
        jaxdbg.breakpoint()
        return x + 1

    params = {f"w{i}": jnp.ones(2) for i in range(40)}
    try:
        jaxpr = jax.make_jaxpr(step)(params, 1.0)
    finally:
        breakpoint_state.reset()
    layers = {}
    pending = list(jaxpr.jaxpr.eqns)
    while pending:
        eqn = pending.pop()
        for key in ("call_jaxpr", "call"):
            inner = eqn.params.get(key)
            if inner is not None and hasattr(inner, "jaxpr"):
                layers[eqn.primitive.name] = inner.jaxpr.debug_info
                pending += inner.jaxpr.eqns
    assert {"custom_jvp_call", "custom_vmap_call"} <= set(layers), layers
    names = {name: info.arg_names for name, info in layers.items()}
    if hasattr(type(layers["custom_jvp_call"]), "assert_arg_names"):
        assert names == {"custom_jvp_call": None, "custom_vmap_call": None}, names
    else:  # a JAX whose debug info must name each argument: named as usual
        assert all(len(n) > 40 for n in names.values()), names


@pytest.mark.parametrize("answer, expected", [(0, 1.0), (1, 2.0), (2, 3.0), (7, 3.0)])
def test_a_branch_on_a_host_calls_answer_takes_an_index_past_the_last_as_the_last(answer, expected):
    # The screening branches on its state itself: every state past OPEN screens.
    def program(x):
        index = jax_host_calls.host_call(lambda: (answer,), results=(((), np.dtype(np.int32)),))[0]
        return jax_host_calls.branch_on(index, (lambda x: x, lambda x: x * 2, lambda x: x * 3), x)

    assert float(jax.jit(program)(1.0)) == expected
    with jax.disable_jit():
        assert float(program(jnp.asarray(1.0))) == expected


def test_a_branch_on_a_host_calls_answer_makes_no_kernel_of_it():
    # lax.cond makes its index (compare, convert) and lax.switch clamps it: XLA compiles
    # a kernel for either, a few ms each at every stop.
    def program(x):
        index = jax_host_calls.host_call(lambda: (1,), results=(((), np.dtype(np.int32)),))[0]
        return jax_host_calls.branch_on(index, (lambda x: x, lambda x: x * 2), x)

    text = jax.jit(program).lower(1.0).compile().as_text()
    assert hlo_text.parse(text).conditional_indices() == ["custom-call"], text
