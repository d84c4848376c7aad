"""Backend selection and JAX's own jax.debug.breakpoint routed to jaxdbg."""

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg import registry
from transcript import Transcript


@pytest.fixture
def recorder():
    seen = []

    def debugger(session, **options):
        seen.append((session, options))
        session.execute("c")

    jaxdbg.register_debugger("recorder", debugger, priority=-1000)
    yield seen
    jaxdbg.unregister_debugger("recorder")


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


def test_priority_and_availability(recorder, monkeypatch):
    monkeypatch.delenv("JAXDBG_BACKEND", raising=False)
    jaxdbg.register_debugger("top", lambda s, **o: s.execute("c"), priority=10_000, available=lambda: False)
    try:
        assert "top" not in jaxdbg.available_debuggers()
        assert jaxdbg.get_debugger() is not registry._registry["top"].debugger
        jaxdbg.register_debugger("top", registry._registry["recorder"].debugger, priority=10_000)
        assert jaxdbg.available_debuggers()[0] == "top"
        jaxdbg.breakpoint()
        assert len(recorder) == 1
    finally:
        jaxdbg.unregister_debugger("top")


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

    from jaxdbg import backend_plugins, cli
    from jaxdbg.frames import live_frame
    from jaxdbg.internals import ipykernel_api
    from jaxdbg.registry import _registry

    import sys
    session = jaxdbg.Session([live_frame(sys._getframe())])
    monkeypatch.setattr(ipykernel_api, "current_kernel", lambda: object())
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
    monkeypatch.setattr(ipykernel_api, "current_kernel", lambda: None)
    assert backend_plugins.panel_hint() is None
