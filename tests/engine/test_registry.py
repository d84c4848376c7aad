"""Backend selection and JAX's own jax.debug.breakpoint routed to jaxdbg."""

import io
import os
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg.engine import registry
from support.transcript import Transcript

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def recorder(temporary_backend):
    seen = []

    def debugger(session, **options):
        seen.append((session, options))
        session.execute("c")

    temporary_backend("recorder", debugger)
    return seen


def test_explicit_backend_and_options(recorder):
    jax.jit(lambda x: (jaxdbg.breakpoint(backend="recorder", flavour="mint"), x)[1])(1.0)
    session, options = recorder[0]
    assert options == {"flavour": "mint"}
    assert session.frames[0].function == "<lambda>"
    assert float(session.frames[0].locals["x"]) == 1.0


def test_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match=r"Unknown jaxdbg debugger backend 'nope'.*known backends: .*cli"):
        jaxdbg.breakpoint(backend="nope")
    with pytest.raises(ValueError, match="cli"):
        jaxdbg.get_debugger("nope")


def test_environment_variable_selects(recorder, monkeypatch):
    monkeypatch.setenv("JAXDBG_BACKEND", "recorder")
    jaxdbg.breakpoint()
    assert len(recorder) == 1
    monkeypatch.setenv("JAXDBG_BACKEND", "missing")
    with pytest.raises(ValueError, match=r"'missing' \(from \$JAXDBG_BACKEND\)"):
        jaxdbg.get_debugger()


def test_priority_and_availability(recorder, monkeypatch, temporary_backend):
    monkeypatch.delenv("JAXDBG_BACKEND", raising=False)
    temporary_backend("top", lambda s, **o: s.execute("c"), priority=10_000, available=lambda: False)
    assert "top" not in jaxdbg.available_debuggers()
    assert jaxdbg.get_debugger() is not registry._registry["top"].debugger
    jaxdbg.register_debugger("top", registry._registry["recorder"].debugger, priority=10_000, replace=True)
    assert jaxdbg.available_debuggers()[0] == "top"
    jaxdbg.breakpoint()
    assert len(recorder) == 1


def test_registering_an_existing_name_needs_replace(temporary_backend):
    first = temporary_backend("twice", lambda s: s.execute("c"))
    with pytest.raises(ValueError, match=r"'twice' is already registered.*replace=True"):
        jaxdbg.register_debugger("twice", lambda s: None, priority=0)
    assert registry._registry["twice"].debugger is first
    with pytest.raises(ValueError, match="'cli' is already registered"):
        jaxdbg.register_debugger("cli", lambda s: None, priority=0)


def test_unknown_option_is_a_type_error_at_trace_time_naming_the_accepted_ones(temporary_backend):
    temporary_backend("picky", lambda s, *, flavour="mint": s.execute("c"))
    calls = []

    def f(x):
        calls.append("traced")
        jaxdbg.breakpoint(backend="picky", num_frame=1)
        return x

    with pytest.raises(TypeError, match=r"'num_frame'.*'picky' backend accepts: flavour.*num_frames"):
        jax.jit(f)(1.0)
    assert calls == ["traced"]  # raised while tracing, before anything ran
    with pytest.raises(TypeError, match=r"'cli' backend accepts: color, context, stdin, stdout"):
        jaxdbg.breakpoint(backend="cli", contxt=3)
    # Declared options win over the signature; **kwargs accepts anything.
    temporary_backend("declared", lambda s, **o: s.execute("c"), options=["depth"])
    with pytest.raises(TypeError, match="accepts: depth"):
        jaxdbg.breakpoint(backend="declared", width=2)
    temporary_backend("anything", lambda s, **o: s.execute("c"))
    jaxdbg.breakpoint(backend="anything", whatever=1)


def test_context_option_means_lines_around_and_is_not_consumed():
    t = Transcript("c", "c")
    options = {**t.options, "context": 1}
    kept = dict(options)

    @jax.jit
    def f(x):
        a = 1  # noqa: F841
        b = 2  # noqa: F841
        jaxdbg.breakpoint(**options)
        c = 3  # noqa: F841
        d = 4  # noqa: F841
        return x

    f(1.0)
    f(2.0)  # the same compiled stop again: its options are unchanged
    assert options == kept
    listings = [chunk for chunk in t.text.split("Stopped at")[1:]]
    assert len(listings) == 2
    for listing in listings:
        assert "b = 2" in listing and "c = 3" in listing
        assert "a = 1" not in listing and "d = 4" not in listing


def test_cli_is_always_available():
    assert "cli" in jaxdbg.available_debuggers()
    with pytest.raises(TypeError):
        jaxdbg.register_debugger("bad", object(), 0)


def test_jax_hook_routes_jax_debug_breakpoint():
    original = jax.debug.breakpoint
    jaxdbg.install_jax_hook()
    try:
        t = Transcript("p jnp.sum(y)", "p [v for v in y][-1]", "c")

        @jax.jit
        def f(x):
            y = x * 2
            jax.debug.breakpoint(**t.options)  # JAX's own call, keyword options pass through
            return y

        f(jnp.arange(3.0))
        assert t.answers("p jnp.sum(y)") == ["Array(6., dtype=float32)"]
        assert t.answers("p [v for v in y][-1]") == ["Array(4., dtype=float32)"]
    finally:
        jaxdbg.uninstall_jax_hook()
    assert jax.debug.breakpoint is original


# JAX's own frame capture flattens every local it sees, generators included.
@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
def test_jax_hook_catches_references_taken_before_install():
    from jax._src import debugger as jax_debugger

    jaxdbg.install_jax_hook()
    try:
        t = Transcript("p x", "c")
        out = io.StringIO()
        t.stdout = out
        old_ref = jax_debugger.breakpoint  # JAX's function, not the patched attribute
        jax.jit(lambda x: (old_ref(stdin=t.stdin, stdout=out, backend=None), x)[1])(jnp.float32(5))
        assert "(jaxdbg) p x\nArray(5., dtype=float32)" in out.getvalue()
    finally:
        jaxdbg.uninstall_jax_hook()


def test_typed_prompt_in_a_kernel_says_how_to_get_the_panel(monkeypatch):
    import io
    import sys

    from jaxdbg.engine import backend_plugins
    from jaxdbg.engine.frames import live_frame
    from jaxdbg.engine.registry import _registry
    from jaxdbg.frontends import cli
    from jaxdbg.internals import ipykernel_kernel

    session = jaxdbg.Session([live_frame(sys._getframe())])
    monkeypatch.setattr(ipykernel_kernel, "current_kernel", lambda: object())
    monkeypatch.delitem(_registry, "widgets", raising=False)
    assert backend_plugins.panel_hint() == backend_plugins.LOAD_HINT  # everything is installed here
    out = io.StringIO()
    monkeypatch.setattr(cli, "_read_line", lambda stdin, stdout: "c")
    cli.run_cli(session, stdout=out)
    assert out.getvalue().count("%load_ext jaxdbg") == 1
    # with the panel registered, or outside a kernel, the prompt says nothing of it
    jaxdbg.register_debugger("widgets", lambda s, **k: None, priority=-1000)
    try:
        assert backend_plugins.panel_hint() is None
    finally:
        jaxdbg.unregister_debugger("widgets")
    monkeypatch.setattr(ipykernel_kernel, "current_kernel", lambda: None)
    assert backend_plugins.panel_hint() is None


def _inner(x, bp):
    y = x * 2
    bp()
    return y


def _outer(x, bp):
    z = x + 1  # noqa: F841
    return _inner(x + 1, bp)


@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
def test_functions_traced_with_jax_breakpoint_before_the_hook_get_jaxdbg_frames(monkeypatch):
    """As after `%load_ext jaxdbg` in a notebook whose functions were already traced."""
    monkeypatch.setenv("JAXDBG_BACKEND", "cli")
    jax_bp = jax.debug.breakpoint
    assert jax_bp.__module__.startswith("jax")  # JAX's own, not the hook
    commands = ("where", "locals", "up", "locals", "c")
    t_jax = Transcript(*(["c"] + list(commands)))
    f = jax.jit(lambda x: _outer(x, lambda: jax_bp(stdin=t_jax.stdin, stdout=t_jax.stdout)))
    f(jnp.float32(1))  # traced and run with JAX's own debugger ("c")
    jaxdbg.install_jax_hook()
    try:
        f(jnp.float32(1))  # the same compiled function: JAX's callback, served by jaxdbg
    finally:
        jaxdbg.uninstall_jax_hook()
    t_ours = Transcript(*commands)
    jax.jit(lambda x: _outer(x, lambda: jaxdbg.breakpoint(**t_ours.options)))(jnp.float32(1))

    def frames(where):  # (function, line) per frame of this file, innermost first
        rows = [line.split()[-2:] for line in where.splitlines() if not line.startswith("    ")]
        return [(f, loc.rsplit(":", 1)[1]) for f, loc in rows if loc.startswith(__file__)]

    where = t_jax.answers("where")[0]
    ours = frames(t_ours.answers("where")[0])
    # the same stack, frame for frame; only the lambdas sit on other lines
    assert (
        [f for f, _ in frames(where)]
        == [f for f, _ in ours]
        == [
            "<lambda>",
            "_inner",
            "_outer",
            "<lambda>",
            "test_functions_traced_with_jax_breakpoint_before_the_hook_get_jaxdbg_frames",
        ]
    )
    assert frames(where)[1:3] == ours[1:3]
    assert "?" not in where
    assert not any(name in where for name in ("pytest", "pluggy", "runpy", "xdist", "execnet"))
    banner = t_jax.text.split("Stopped at ", 1)[1].splitlines()[0]  # after JAX's own prompt
    assert banner.endswith(" in <lambda>"), banner
    assert t_jax.answers("up")[0].startswith("> ") and " in _inner" in t_jax.answers("up")[0]
    assert "y " in t_jax.answers("locals")[1] and "bp " in t_jax.answers("locals")[1]


@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
def test_jax_traced_stop_with_an_unknown_option_still_opens(monkeypatch, capsys):
    monkeypatch.setenv("JAXDBG_BACKEND", "cli")
    t = Transcript("c")
    jaxdbg.install_jax_hook()
    try:
        from jax._src import debugger as jax_debugger

        jax.jit(
            lambda x: (
                jax_debugger.breakpoint(  # JAX's own function: JAX's callback
                    stdin=t.stdin, stdout=t.stdout, num_frame=1
                ),
                x,
            )[1]
        )(1.0)
    finally:
        jaxdbg.uninstall_jax_hook()
    assert "ignoring breakpoint option num_frame" in capsys.readouterr().out
    assert len(t.stops()) == 1 and "Continuing." in t.text


def test_module_code_frames_from_jax_are_named_module(tmp_path):
    """A script's module frame: named <module>, its locals without modules."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import io, os, jax, jax.numpy as jnp, jaxdbg
        os.environ["JAXDBG_BACKEND"] = "cli"
        jax_bp = jax.debug.breakpoint
        jaxdbg.install_jax_hook()
        out = io.StringIO()
        scale = 3
        jax.jit(lambda x: (jax_bp(stdin=io.StringIO("where\\nup\\nlocals\\nc\\n"), stdout=out), x)[1])(1.0)
        print(out.getvalue())
    """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    where = done.stdout.split("(jaxdbg) where\n")[1].split("(jaxdbg)")[0]
    assert where.splitlines()[0].startswith(">  0  <lambda>"), done.stdout + done.stderr
    assert "   1  <module>" in where and "?" not in where
    module_locals = done.stdout.split("(jaxdbg) locals\n")[1].split("(jaxdbg)")[0]
    assert "scale " in module_locals and "jnp " not in module_locals, module_locals


@pytest.mark.filterwarnings("ignore:Python iterable type:DeprecationWarning")
def test_after_uninstall_stops_traced_under_the_hook_go_to_jax_debugger():
    from jaxdbg.internals import jax_debugger

    got = []

    def jax_side_debugger(frames, thread_id, **kwargs):
        got.append((frames, kwargs))

    jaxdbg.install_jax_hook()
    try:
        t = Transcript("c")

        @jax.jit
        def f(x):
            y = x + 1
            jax.debug.breakpoint(stdin=t.stdin, stdout=t.stdout)  # the hook: jaxdbg's breakpoint
            return y

        f(1.0)
        assert len(t.stops()) == 1
    finally:
        jaxdbg.uninstall_jax_hook()
    jax_debugger.register_with_jax_debugger("test-jax-side", jax_side_debugger, 10**9)
    try:
        f(2.0)  # compiled while hooked; now JAX's debugger serves it
    finally:
        jax_debugger.unregister_from_jax_debugger("test-jax-side")
    assert len(t.stops()) == 1  # jaxdbg did not open again
    ((frames, kwargs),) = got
    assert set(kwargs) == {"stdin", "stdout"}
    assert float(frames[0].locals["y"]) == 3.0
    assert frames[0].source[frames[0].offset].strip().startswith("jax.debug.breakpoint(")


def test_import_jaxdbg_does_not_import_rich():
    import subprocess
    import sys

    code = "import sys, jaxdbg; print('rich' in sys.modules, 'ipywidgets' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "False"], done


BROKEN_PLUGIN_SCRIPT = r"""
import jaxdbg
from jaxdbg.ipython import magics
print("AVAILABLE", jaxdbg.available_debuggers())
jaxdbg.get_debugger()
jaxdbg.get_debugger()  # the notice is given once
rows = {row.item: (row.value, row.detail) for row in magics.status_table().rows}
print("STATUS", " | ".join(rows.get("brokenpanel backend", ("missing",))))
"""


def test_a_backend_whose_import_fails_is_named_once_with_its_error(tmp_path):
    """An installed backend plugin that cannot be imported (a panel whose browser file was
    left out of the wheel) is named, with the failing module and the error, in one line the
    first time a backend is chosen, and %jaxdbg lists it."""
    import subprocess
    import sys

    site = tmp_path / "site"
    pkg = site / "brokenpanel"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from brokenpanel import widget\n")
    (pkg / "widget.py").write_text(
        "from pathlib import Path\n_ESM = (Path(__file__).parent / 'panel.js').read_text()\n"
    )
    dist_info = site / "brokenpanel-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenpanel\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[jaxdbg.backends]\nbrokenpanel = brokenpanel\n")

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), JAX_PLATFORMS="cpu")
    env.pop("JAXDBG_BACKEND", None)
    proc = subprocess.run(
        [sys.executable, "-c", BROKEN_PLUGIN_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    notices = [line for line in proc.stderr.splitlines() if "brokenpanel" in line]
    assert len(notices) == 1, proc.stderr
    assert notices[0].startswith("jaxdbg: the 'brokenpanel' backend could not be loaded (")
    assert "brokenpanel.widget: FileNotFoundError:" in notices[0] and "panel.js" in notices[0]
    assert "STATUS not loaded | brokenpanel.widget: FileNotFoundError:" in proc.stdout, proc.stdout
    assert "brokenpanel" not in proc.stdout.split("STATUS")[0]  # not offered as available
