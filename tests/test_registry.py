"""Backend selection and JAX's own jax.debug.breakpoint routed to jaxdbg."""

import io

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from jaxdbg import registry
from transcript import Transcript


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
    jaxdbg.register_debugger("top", registry._registry["recorder"].debugger, priority=10_000,
                             replace=True)
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
