"""Session.complete on real stops (jit and vmap), and Tab at a real terminal prompt."""

import os
import sys
import textwrap

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from support.transcript import Transcript

GLOBAL_SCALE = 10.0


class Touchy:
    """Attributes that run code: completion may only call getattr and dir."""

    calls = 0

    def method(self):
        Touchy.calls += 1
        return self

    @property
    def exits(self):
        raise SystemExit("a property that exits")

    @property
    def fine(self):
        return 3


class NoDir:
    def __dir__(self):
        raise RuntimeError("dir fails")


def _capture(run) -> jaxdbg.Session:
    """The session of the first stop ``run()`` makes, through the terminal backend."""
    sessions = []
    t = Transcript("c", "c", "c")

    def backend(session, **options):
        sessions.append(session)
        jaxdbg.get_debugger("cli")(session, stdin=t.stdin, stdout=t.stdout)

    jaxdbg.register_debugger("capture", backend, priority=-1000)
    try:
        run()
    finally:
        jaxdbg.unregister_debugger("capture")
    return sessions[0]


def inner(x):
    y = jnp.tanh(x) * GLOBAL_SCALE
    z = {"w": y + 1, "n": 3, "with space": 0}  # noqa: F841
    label = "layer"  # noqa: F841
    touchy, nodir = Touchy(), NoDir()  # noqa: F841
    jaxdbg.breakpoint(backend="capture")
    return y.sum()


def outer(x):
    factor = 2
    return inner(x * factor)


@pytest.fixture(scope="module")
def jit_session():
    return _capture(lambda: jax.jit(outer)(jnp.arange(4.0)))


@pytest.fixture(scope="module")
def vmap_session():
    def f(x):
        batch_value = x * 3
        jaxdbg.breakpoint(backend="capture")
        return batch_value

    return _capture(lambda: jax.jit(jax.vmap(f))(jnp.arange(3.0)))


def test_locals_globals_builtins_and_commands(jit_session):
    s = jit_session
    assert s.complete("lab") == ["label"]
    assert s.complete("p GLOBAL_S") == ["p GLOBAL_SCALE"]
    assert "p len" in s.complete("p le")  # builtins
    assert s.complete("con") == ["condition", "cont", "continue"]  # command words at the start of a line
    assert "breakpoints" in s.complete("brea")
    assert s.complete("pp tou") == ["pp touchy"]
    assert s.complete("whatis y") == ["whatis y"]
    assert s.complete("help wh") == ["help whatis", "help where"]
    assert s.complete("p lab") == ["p label"]
    assert s.complete("p undefined_na") == []


def test_attributes_after_a_dot(jit_session):
    s = jit_session
    assert s.complete("p y.sha") == ["p y.shape", "p y.sharding"]
    assert s.complete("y.dty") == ["y.dtype"]
    assert s.complete("pp z['w'].shap") == ["pp z['w'].shape"]
    assert "p jnp.mean" in s.complete("p jnp.me")
    public = s.complete("whatis y.")
    assert "whatis y.shape" in public and not any(c.startswith("whatis y._") for c in public)
    assert "p y.__class__" in s.complete("p y.__cl")
    assert s.complete("!c = y.shap") == ["!c = y.shape"]  # Python that starts with a command word
    assert s.complete("c = y.shap") == []  # ... is the command c without the "!"
    assert s.complete("p y.shape + GLOBAL_") == ["p y.shape + GLOBAL_SCALE"]
    assert s.complete("p 'y.sha") == []  # inside a string


def test_dict_keys(jit_session):
    s = jit_session
    assert s.complete("p z[") == ["p z['n']", "p z['w']", "p z['with space']"]
    assert s.complete('p z["w') == ['p z["w"]', 'p z["with space"]']
    assert s.complete("p label[") == []


def test_scratch_names_and_the_selected_frame(jit_session):
    s = jit_session
    s.scratch["scratch_total"] = 1
    try:
        assert s.complete("p scratch_t") == ["p scratch_total"]
    finally:
        del s.scratch["scratch_total"]
    assert s.complete("p fac") == []
    s.index = 1  # the caller, outer()
    try:
        assert s.complete("p fac") == ["p factor"]
        assert s.complete("p lab") == []
    finally:
        s.index = 0


def test_completion_calls_nothing_and_survives_what_getattr_raises(jit_session):
    s = jit_session
    before = Touchy.calls
    assert s.complete("p touchy.method().") == []
    assert s.complete("p touchy.exits.") == []  # the property raises SystemExit
    assert s.complete("p touchy.fine.real") == ["p touchy.fine.real"]  # getattr is allowed
    assert s.complete("p nodir.") == []
    assert s.complete("p (touchy.") == ["p (touchy.calls", "p (touchy.exits", "p (touchy.fine", "p (touchy.method"]
    assert Touchy.calls == before


def test_completion_in_a_vmap_stop(vmap_session):
    s = vmap_session
    assert "batch 1/3" in s.banner()
    assert s.complete("p batch_v") == ["p batch_value"]
    assert s.complete("p batch_value.nd") == ["p batch_value.ndim"]


TERMINAL_SCRIPT = textwrap.dedent("""
    import readline
    import jax, jax.numpy as jnp, jaxdbg

    def original(text, state):
        return None

    readline.set_completer(original)
    delimiters = readline.get_completer_delims()

    @jax.jit
    def f(x):
        value_one = x * 2
        value_two = {"alpha": x}
        jaxdbg.breakpoint(backend="cli")
        return value_one

    f(1.0)
    print("completer restored:", readline.get_completer() is original,
          readline.get_completer_delims() == delimiters)
""")


class _Terminal:
    """A child process on a pseudo-terminal, read until expected text appears."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        import pty
        import subprocess

        self._master, slave = pty.openpty()
        self.process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.seen = b""

    def send(self, text: str) -> None:
        os.write(self._master, text.encode())

    def expect(self, text: str, timeout: float = 120) -> None:
        import select
        import time

        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            ready, _, _ = select.select([self._master], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(
                    f"{text!r} did not appear; the terminal shows:\n{self.seen[-2000:].decode(errors='replace')}"
                )
            try:
                chunk = os.read(self._master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(
                    f"{text!r} did not appear before the end:\n{self.seen[-2000:].decode(errors='replace')}"
                )
            self.seen += chunk
        self.seen = self.seen[self.seen.index(text.encode()) + len(text) :]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        os.close(self._master)


@pytest.mark.timeout(240)
def test_tab_completes_at_a_real_terminal_prompt(tmp_path):
    pytest.importorskip("readline")
    script = tmp_path / "tab.py"
    script.write_text(TERMINAL_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TERM="xterm", JAX_PLATFORMS="cpu")
    terminal = _Terminal([sys.executable, str(script)], env)
    try:
        terminal.expect("(jaxdbg) ")
        terminal.send("p value_o\t")
        terminal.expect("value_one")  # the only match, completed in place
        terminal.send("\r")
        terminal.expect("Array(2., dtype=float32")
        terminal.expect("(jaxdbg) ")
        terminal.send("p value_two['al\t")
        terminal.expect("alpha'")  # readline closes the quote; the bracket is typed
        terminal.send("]\r")
        terminal.expect("Array(1., dtype=float32")
        terminal.expect("(jaxdbg) ")
        terminal.send("c\r")
        terminal.expect("completer restored: True True")
        assert terminal.process.wait(timeout=60) == 0
    finally:
        terminal.close()


def test_private_names_only_when_asked(jit_session):
    s = jit_session
    everything = s.complete("p ")
    assert "p label" in everything and "p GLOBAL_SCALE" in everything
    assert not any(c.startswith("p _") for c in everything)
    assert "p __name__" in s.complete("p __na")


def test_bang_and_sharding_prefixes(jit_session):
    s = jit_session
    assert s.complete("!lab") == ["!label"]
    assert s.complete("sharding y.shap") == ["sharding y.shape"]
    assert s.complete("  p lab") == ["  p label"]
    assert s.complete("frame 1") == []  # no expression after frame
