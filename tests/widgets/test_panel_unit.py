"""The debugger panel's Python side as a pure view, without a kernel.

Sessions come from real breakpoints or live frames. Messages are the ones the browser
code sends (``panel.send(...)``); with no pause channel they run at once. What the
browser would receive is the widget's synced state plus the custom messages captured
from ``widget.send``.
"""

from __future__ import annotations

import dataclasses
import io
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdbg
from jaxdbg.engine.frames import live_frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.values import array_statistics
from jaxdbg_widgets.panel import panel as panel_mod
from jaxdbg_widgets.panel.backend import run_widget_debugger
from jaxdbg_widgets.panel.panel import DebuggerPanel

_script = {}


def _capture_backend(session, **_):
    p = DebuggerPanel(session)
    _script["panel"] = p
    _script["fn"](p)
    if not session.finished:
        run(p, "continue")


jaxdbg.register_debugger("panel-test", _capture_backend, priority=-1000)


def stop_in(fn, *args, script):
    _script["fn"] = script
    result = fn(*args)
    return result, _script.pop("panel")


_ids = iter(range(1, 10**9))


def run(p: DebuggerPanel, line: str, typed: bool = False, pretty: bool = False) -> str:
    cid = f"test:{next(_ids)}"
    p.send({"type": "run", "id": cid, "line": line, "typed": typed, "pretty": pretty})
    return cid


def sent(p: DebuggerPanel) -> list[dict]:
    """Capture the custom messages the panel sends to the browser from now on."""
    box: list[dict] = []
    p.widget.send = lambda content, buffers=None: box.append(content)
    return box


def g(x):
    y = x * 2
    z = {"sum": jnp.sum(y), "first": y[0], "label": "<b>not markup</b>"}  # noqa: F841
    jaxdbg.breakpoint(backend="panel-test")
    return y + 1


@jax.jit
def f(x):
    w = jnp.sin(x)
    return g(w)


def rows_by_name(p: DebuggerPanel) -> dict[str, dict]:
    return {r["name"]: r for r in p.widget.locals_page["rows"]}


# --------------------------------------------------------------------------- navigation


def test_frames_source_and_frame_click():
    seen = {}

    def script(p):
        w = p.widget
        seen["frames"] = list(w.frames)
        seen["status"] = dict(w.status)
        seen["source"] = dict(w.source)
        cid = run(p, "frame 1")
        seen["after"] = (w.selected, w.source["heading"], w.done == cid, dict(w.status))

    stop_in(f, jnp.arange(3.0), script=script)
    frames = seen["frames"]
    assert [fr["function"] for fr in frames[:2]] == ["g", "f"]
    assert frames[0]["where"].endswith(f":{g.__code__.co_firstlineno + 3}")
    assert frames[0]["path"].startswith(__file__)  # the tooltip has the full path
    assert seen["status"]["newest"] and not seen["status"]["oldest"]
    src = seen["source"]
    current = src["lines"][src["current"] - src["first"]]
    assert "".join(text for _, text in current).strip() == 'jaxdbg.breakpoint(backend="panel-test")'
    assert ["n", "jaxdbg"] in current  # highlighted as tokens with classes, no markup
    selected, heading, done, status = seen["after"]
    assert selected == 1 and " in f" in heading and done and not status["newest"]


def test_typed_lines_log_oldest_first_with_pp_flag_and_history():
    panel_mod.HISTORY.clear()
    seen = {}

    def script(p):
        run(p, "p y", typed=True)
        run(p, "z['sum']", typed=True, pretty=True)
        run(p, "p undefined_name", typed=True)
        seen["log"] = list(p.widget.log)

    stop_in(f, jnp.arange(3.0), script=script)
    log = seen["log"]
    assert [e["command"] for e in log] == ["p y", "z['sum']", "p undefined_name"]
    assert [e["pretty"] for e in log] == [False, True, False]
    assert "Array(" in log[0]["text"] and log[2]["error"] and "NameError" in log[2]["text"]
    assert panel_mod.HISTORY == ["p y", "z['sum']", "p undefined_name"]
    # the next stop's panel starts with the kernel's history
    _, p2 = stop_in(f, jnp.arange(3.0), script=lambda p: None)
    assert p2.widget.history[-3:] == ["p y", "z['sum']", "p undefined_name"]


def test_the_pp_toggle_outlines_a_pytree_of_arrays_and_pprints_plain_values():
    seen = {}

    def script(p):
        run(p, "z", typed=True, pretty=True)
        run(p, "y.shape", typed=True, pretty=True)
        seen["log"] = list(p.widget.log)

    stop_in(f, jnp.arange(3.0), script=script)
    tree, shape = (entry["text"] for entry in seen["log"])
    assert "└── ['sum']  Array  float32[] ·" in tree, tree
    assert shape == "(3,)"


def test_huge_typed_line_is_not_echoed_in_full():
    """Issue 6 item 14: a 10 MB line is cut in the echo, the history and the summary."""
    panel_mod.HISTORY.clear()
    seen = {}
    huge = "'" + "a" * 9_999_998 + "'"

    def script(p):
        run(p, huge, typed=True)
        run(p, "p 1 + 1", typed=True)
        seen["log"] = list(p.widget.log)

    _, p = stop_in(f, jnp.arange(3.0), script=script)
    first = seen["log"][0]
    assert len(first["command"]) <= 300 and first["command_cut"] == 10_000_000 - 300
    assert len(first["text"]) <= 2_000 and first["cut"] > 0
    assert sum(len(str(e)) for e in seen["log"]) < 10_000
    assert huge not in panel_mod.HISTORY
    summary = p.finished_display._repr_mimebundle_()
    assert len(summary["text/plain"]) < 10_000 and len(summary["text/html"]) < 12_000
    assert "more characters" in summary["text/plain"]


def test_show_more_expands_one_entry():
    seen = {}

    def script(p):
        run(p, "'x' * 5000", typed=True)
        entry = p.widget.log[-1]
        seen["before"] = entry["cut"]
        p.send({"type": "more", "entry": entry["n"]})
        seen["after"] = p.widget.log[-1]

    stop_in(f, jnp.arange(3.0), script=script)
    assert seen["before"] > 0 and seen["after"]["cut"] == 0 and len(seen["after"]["text"]) > 5000


# --------------------------------------------------------------------------- locals


@dataclasses.dataclass
class Params:
    w: object
    b: object


class Pair(NamedTuple):
    left: object
    right: object


def _frame_with_values():
    scalar = jnp.float32(6.0)  # noqa: F841
    with_nan = np.array([1.0, np.nan, 3.0, np.inf], dtype=np.float32)  # noqa: F841
    tree = {"params": Params(jnp.ones((2, 3)), jnp.zeros(3)), "pair": Pair(1, [jnp.arange(4)])}  # noqa: F841
    big = jnp.ones(10_000_000, dtype=jnp.float32)  # immutable: its statistics are kept  # noqa: F841
    label = "<b>not markup</b>"  # noqa: F841
    return Session([live_frame(sys._getframe())])


def test_scalars_nan_stats_and_plain_text():
    p = DebuggerPanel(_frame_with_values())
    rows = rows_by_name(p)
    assert rows["scalar"]["summary"] == "6.0" and rows["scalar"]["array"] == "float32[]"
    nan = rows["with_nan"]
    assert "of finite values" in nan["summary"] and "nan=1" in nan["summary"] and "inf=1" in nan["summary"]
    assert nan["finite_only"] and nan["nonfinite"] and "min=1 max=3 mean=2" in nan["summary"]
    assert rows["label"]["summary"] == "'<b>not markup</b>'"  # text; the browser never parses it


def test_a_big_arrays_statistics_wait_until_its_row_is_shown(monkeypatch):
    taken = []
    exact = array_statistics._exact_stats
    monkeypatch.setattr(array_statistics, "_exact_stats", lambda v: taken.append(v.shape) or exact(v))
    p = DebuggerPanel(_frame_with_values())
    big = rows_by_name(p)["big"]
    assert big["array"] == "float32[10000000]" and big["pending"] and big["summary"] == ""
    assert (10_000_000,) not in taken and not rows_by_name(p)["with_nan"]["pending"]
    box = sent(p)
    for _ in range(2):  # the browser showed the row (twice: taken once all the same)
        p.send({"type": "stats", "frame": 0, "path": ["big"]})
    assert [m["row"]["summary"] for m in box] == ["min=1 max=1 mean=1"] * 2
    assert not box[0]["row"]["pending"] and taken.count((10_000_000,)) == 1
    # the table's own row is now the computed one (a redraw of the frame shows it)
    assert p.locals_rows(0, 100)[[r["name"] for r in p.locals_rows(0, 100)].index("big")] == box[0]["row"]


def test_pytrees_expand_as_a_tree():
    p = DebuggerPanel(_frame_with_values())
    box = sent(p)
    assert rows_by_name(p)["tree"]["expandable"] and not rows_by_name(p)["scalar"]["expandable"]
    p.send({"type": "expand", "frame": 0, "path": ["tree"]})
    kids = box[-1]
    assert kids["type"] == "children" and [r["name"] for r in kids["rows"]] == ["'params'", "'pair'"]
    p.send({"type": "expand", "frame": 0, "path": ["tree", 0]})
    assert [(r["name"], r["array"]) for r in box[-1]["rows"]] == [("w", "float32[2,3]"), ("b", "float32[3]")]
    p.send({"type": "expand", "frame": 0, "path": ["tree", 1, 1]})
    assert [r["name"] for r in box[-1]["rows"]] == ["[0]"]
    p.send({"type": "expand", "frame": 0, "path": ["tree", 1]})
    assert [r["name"] for r in box[-1]["rows"]] == ["left", "right"]


def test_a_linen_modules_row_names_its_class_and_opens_onto_its_variables():
    nn = pytest.importorskip("flax.linen")
    made = {}

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            y = nn.Dense(3)(x)
            made["session"] = Session([live_frame(sys._getframe())])
            return y

    x = jnp.ones((1, 2))
    Block().apply(Block().init(jax.random.PRNGKey(0), x), x)
    p = DebuggerPanel(made["session"])
    box = sent(p)
    row = rows_by_name(p)["self"]
    assert row["type"] == "Block" and row["summary"].startswith("nn.Module · 2 arrays · 9 float32"), row
    assert row["expandable"]
    p.send({"type": "expand", "frame": 0, "path": ["self"]})
    assert [r["name"] for r in box[-1]["rows"]] == ["variables"]


def test_a_thousand_locals_are_sent_a_page_at_a_time():
    values = {f"v{i:04d}": np.full(3, i, dtype=np.float32) for i in range(1000)}
    frame = live_frame(sys._getframe())
    frame.locals.update(values)
    p = DebuggerPanel(Session([frame]))
    page = p.widget.locals_page
    assert page["total"] >= 1000 and len(page["rows"]) == panel_mod.FIRST_LOCALS
    box = sent(p)
    p.send({"type": "locals", "frame": 0, "start": 60, "count": 200})
    assert box[-1]["type"] == "locals" and box[-1]["start"] == 60 and len(box[-1]["rows"]) == 200
    # a request for a frame that is no longer selected is dropped
    p.send({"type": "locals", "frame": 3, "start": 0, "count": 10})
    assert len(box) == 1


def test_sharded_values_show_spec_and_mesh():
    if jax.device_count() < 8:
        pytest.skip("needs 8 host devices (XLA_FLAGS)")
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    a = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("x", "y")))  # noqa: F841
    p = DebuggerPanel(Session([live_frame(sys._getframe())]))
    label = rows_by_name(p)["a"]["sharding"]
    assert "mesh x=4, y=2" in label and "'x'" in label and "cpu" not in label.lower(), label


# --------------------------------------------------------------------------- completion


def test_completion_of_names_and_attributes():
    p = DebuggerPanel(_frame_with_values())
    box = sent(p)
    p.send({"type": "complete", "id": 7, "text": "p with_"})
    assert box[-1] == {"type": "completions", "id": 7, "text": "p with_", "matches": ["p with_nan"]}
    p.send({"type": "complete", "id": 8, "text": "with_nan.res"})
    assert "with_nan.reshape" in box[-1]["matches"]
    p.send({"type": "complete", "id": 9, "text": "p no_such_na"})
    assert box[-1]["matches"] == []


# --------------------------------------------------------------------------- buttons and the end


def test_skip_batch_shown_only_when_batched():
    seen = {}

    def script(p):
        seen.setdefault("batched", []).append(p.widget.status["batched"])
        if p.widget.status["batched"]:
            run(p, "skip")

    def h(x):
        jaxdbg.breakpoint(backend="panel-test")
        return x + 1

    out, _ = stop_in(jax.jit(jax.vmap(h)), jnp.arange(3.0), script=script)
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0])
    assert seen["batched"] == [True]  # skip served no further element
    _, p = stop_in(f, jnp.arange(3.0), script=lambda p: None)
    assert p.widget.status["batched"] is False


def test_continue_ends_with_a_static_summary():
    seen = {}

    def script(p):
        run(p, "p y", typed=True)
        run(p, "continue")
        seen["status"] = dict(p.widget.status)

    _, p = stop_in(f, jnp.arange(3.0), script=script)
    assert p.session.resume == "continue" and seen["status"]["finished"]
    bundle = p.finished_display._repr_mimebundle_()
    text, html = bundle["text/plain"], bundle["text/html"]
    assert text.splitlines()[0].startswith("Stopped at") and "in g" in text
    assert "(jaxdbg) p y\nArray(" in text and text.endswith("Continued.")
    assert "jaxdbg.breakpoint(backend=&#34;panel-test&#34;)" in html
    assert "(jaxdbg) p y" in html and "Continued." in html
    run(p, "up")  # a late message is ignored, not an error
    assert p.session.resume == "continue"


def test_quit_from_the_panel_stops_the_computation():
    with pytest.raises(Exception) as info:
        stop_in(f, jnp.arange(3.0), script=lambda p: run(p, "quit"))
    assert "DebuggerQuit" in repr(info.value) or "DebuggerQuit" in str(info.value)


def test_backend_falls_back_to_prompt_outside_a_kernel(capsys):
    small = 3  # noqa: F841
    session = Session([live_frame(sys._getframe())])
    out = io.StringIO()
    run_widget_debugger(session, stdin=io.StringIO("p small + 1\nc\n"), stdout=out)
    assert session.resume == "continue"
    assert "panel cannot receive clicks here (not running in an IPython kernel)" in capsys.readouterr().out
    assert "(jaxdbg) p small + 1\n4\n" in out.getvalue()


def test_malformed_messages_are_ignored():
    p = DebuggerPanel(_frame_with_values())
    for bad in (
        "continue",
        None,
        {"type": "bogus"},
        {"type": "run"},
        {"type": "run", "line": 3},
        {"type": "expand", "frame": 0, "path": ["nope"]},
        {"type": "locals", "frame": 0, "start": "x"},
    ):
        p._on_message(p.widget, bad)
    assert not p.session.finished
    assert all(e["error"] for e in p.widget.log)


def test_values_whose_repr_raises_base_exceptions_do_not_end_the_stop():
    class Nasty:
        def __repr__(self):
            raise SystemExit("no")

    nasty = Nasty()  # noqa: F841
    p = DebuggerPanel(Session([live_frame(sys._getframe())]))
    assert (
        "summary failed" in rows_by_name(p)["nasty"]["summary"] or "repr failed" in rows_by_name(p)["nasty"]["summary"]
    )


def test_panel_rows_use_the_same_statistics_text_as_locals():
    z = jnp.asarray(np.exp(1j * np.linspace(0.0, 5.0, 64)).astype(np.complex64))  # noqa: F841
    f32 = jnp.float32(968.4093)  # noqa: F841
    session = Session([live_frame(sys._getframe())])
    rows = rows_by_name(DebuggerPanel(session))
    locals_text = session.locals_table().text
    z_row = next(line for line in locals_text.splitlines() if line.startswith("z "))
    assert rows["z"]["summary"] and rows["z"]["summary"] in z_row
    assert "|x| min=1 max=1" in rows["z"]["summary"]
    assert rows["f32"]["summary"] == "968.4093"


def test_the_non_finite_reason_is_shown_once_in_the_header():
    seen = {}

    def script(p):
        seen["status"] = dict(p.widget.status)

    @jax.jit
    def h(x):
        y = jnp.log(x)
        jaxdbg.breakpoint_on_nonfinite(y, backend="panel-test")
        return y

    _script["fn"] = script
    h(jnp.array([1.0, -1.0]))
    _script.pop("panel")
    header = seen["status"]["banner"] + "\n" + seen["status"]["reason"]
    assert seen["status"]["reason"] == "non-finite values in y (1 NaN)"
    assert header.count("non-finite values") == 1, header


def _table_sharding(session: Session, name: str) -> str:
    """The sharding ``locals`` shows for ``name`` (``[...]`` at the end of its row)."""
    row = next(r for r in session.locals_table().data if r.name == name)
    return row.sharding


@pytest.mark.multidevice
def test_the_locals_table_shows_the_program_sharding_that_locals_shows():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    axis_type = getattr(jax.sharding, "AxisType", None)  # automatic axes, as the compiler picks
    mesh = jax.make_mesh(
        (2, 4), ("data", "model"), **({} if axis_type is None else {"axis_types": (axis_type.Auto,) * 2})
    )
    seen = {}

    def script(p):
        seen["row"] = rows_by_name(p)["y"]["sharding"]
        seen["locals"] = _table_sharding(p.session, "y")

    @jax.jit
    def sharded(x):
        y = x * 2
        jaxdbg.breakpoint(backend="panel-test")
        return y

    _script["fn"] = script
    sharded(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))).block_until_ready()
    _script.pop("panel")
    assert seen["locals"] == "auto on mesh data=2, model=4"
    assert seen["row"] == seen["locals"]


@pytest.mark.multidevice
def test_the_locals_table_under_pmap_names_the_stop_device():
    seen = []

    def script(p):
        seen.append((p.session.info.device, rows_by_name(p)["y"]["sharding"]))

    def per_device(x):
        y = x + 1
        jaxdbg.breakpoint(backend="panel-test")
        return y

    _script["fn"] = script
    try:
        jax.pmap(per_device)(jnp.arange(8.0)).block_until_ready()
    finally:
        _script.pop("panel", None)
    assert len(seen) == 8 and all(label == f"device {device}" for device, label in seen), seen


@pytest.mark.multidevice
def test_a_sharding_command_in_the_console_carries_the_html_layout():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    arr = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("data", "model")))  # noqa: F841
    p = DebuggerPanel(Session([live_frame(sys._getframe())]))
    run(p, "sharding arr", typed=True)
    run(p, "p 1", typed=True)
    layout, plain = p.widget.log[-2], p.widget.log[-1]
    assert layout["command"] == "sharding arr"
    assert 'class="jaxdbg-sharding"' in layout["html"] and "jxs-cell" in layout["html"]
    assert layout["text"] == "" and not layout["cut"]  # no box-drawing text beside it
    assert plain["html"] == "" and plain["text"] == "1"
    # The static summary keeps the plain rendering (readable without the widget).
    assert "NamedSharding" in p.summary().log[-2].text


def test_replay_buttons_step_and_show_the_replays_frames_above_the_stops():
    seen = {}

    def script(p):
        w = p.widget
        seen["before"] = ([f["function"] for f in w.frames], w.status["replaying"])
        run(p, "replay")  # the Replay button's line
        seen["banner"] = p.log[-1].full_text
        seen["replaying"] = (
            [(f["function"], f["replay"]) for f in w.frames],
            w.status["replaying"],
            w.source["current"],
            w.locals_page["rows"],
        )
        run(p, "next")  # the Next button's line
        seen["next"] = (w.source["current"], [r["name"] for r in w.locals_page["rows"]])
        run(p, "step")
        seen["step"] = [(f["function"], f["replay"]) for f in w.frames][:2]
        run(p, "return")
        seen["return"] = p.log[-1].full_text
        run(p, "continue")  # in a replay: runs it on to its end, back at the stop
        seen["after"] = ([f["function"] for f in w.frames], w.status["replaying"], p.log[-1].full_text)

    @jax.jit
    def f(x):
        y = _double(x)
        jaxdbg.breakpoint(backend="panel-test")
        return y

    stop_in(f, jnp.float32(2), script=script)
    functions, replaying = seen["before"]
    assert functions[0] == "f" and replaying is False
    frames, replaying, current, rows = seen["replaying"]
    assert frames[0] == ("f", True) and frames[1] == ("f", False) and replaying is True
    assert [r["name"] for r in rows] == ["x"]
    assert seen["next"][1] == ["x", "y"]  # 'next' ran the line: y now exists in the replay
    assert seen["step"] == [("f", True), ("f", False)]
    assert "This runs your Python again" in seen["banner"] and "frame 0: f at" in seen["banner"]
    assert seen["return"].startswith("--Return-- Array(4., dtype=float32)")
    functions, replaying, last = seen["after"]
    assert functions[0] == "f" and len(functions) == len(seen["before"][0]) and replaying is False
    assert "The replay of f returned Array(4., dtype=float32)" in last and "Back at the stop" in last


def _double(v):
    return v * 2


def test_a_message_sent_the_moment_the_comm_opens_reaches_the_panel():
    """The frontend may answer as soon as it hears of the comm: on the pause channel's
    subshell that message is handled while the panel's constructor has not returned, so
    the panel must be listening before the comm opens."""
    pytest.importorskip(
        "comm",
        reason="a comm needs a kernel before ipykernel 6.18 (Colab's 6.17); "
        "tests/widgets/test_panel_kernel.py covers it there",
    )
    session = Session([live_frame(sys._getframe())], None)
    posted: list[dict] = []
    early = {"type": "run", "id": "early:1", "line": "p 1", "typed": True}

    def frontend_answers_at_once(widget):
        def open_then_answer(*args, **kwargs):  # (no kernel here to tell)
            widget.comm.handle_msg({"content": {"data": {"method": "custom", "content": early}}, "buffers": []})

        widget.comm.open = open_then_answer

    DebuggerPanel(session, post=posted.append, before_open=frontend_answers_at_once)
    assert posted == [early]
