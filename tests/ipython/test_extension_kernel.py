"""``%load_ext jaxdbg`` / ``%unload_ext jaxdbg`` in a real kernel: unloading leaves
IPython as it was, and jaxdbg's quit reporting shares IPython's one custom
exception slot with a handler installed before it."""

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.matrix, pytest.mark.timeout(300)]

SNAPSHOT = """
def snapshot():
    import logging, signal, sys, jax
    from jax._src.debugger import core as jax_debugger_core
    ip = get_ipython()
    registry = sys.modules.get("jaxdbg.engine.registry")  # None until jaxdbg is imported
    wakeup = signal.set_wakeup_fd(-1); signal.set_wakeup_fd(wakeup)
    return {
        "events": {name: list(cbs) for name, cbs in ip.events.callbacks.items()},
        "custom_exceptions": ip.custom_exceptions,
        "CustomTB": ip.CustomTB,
        "excepthook": sys.excepthook,
        "jax.debug.breakpoint": jax.debug.breakpoint,
        "jax debugger registry": sorted(jax_debugger_core._debugger_registry),
        "jaxdbg backends": registry and sorted(registry.registered_debuggers()),
        "wakeup fd": wakeup,
        "jax callback log filters": list(logging.getLogger("jax._src.debugging").filters),
        "jax.debug.print": jax.debug.print,
        "html printers": list(ip.display_formatter.formatters["text/html"].type_printers),
        "cell magics": sorted(ip.magics_manager.magics["cell"]),
    }
"""


def test_unload_ext_leaves_ipython_as_it_was(kernel):
    assert kernel.run(SNAPSHOT + "import jaxdbg\nbefore = snapshot()", timeout=120).status == "ok"
    loaded = kernel.run(
        "%load_ext jaxdbg\nduring = snapshot()\nprint(sorted(k for k in before if before[k] != during[k]))", timeout=120
    )
    # loading did change each of these (so the comparison below can fail)
    # (the panel backend is registered by `import jaxdbg` already, through its entry point)
    for changed in (
        "events",
        "custom_exceptions",
        "jax.debug.breakpoint",
        "jax debugger registry",
        "wakeup fd",
        "jax callback log filters",
        "jax.debug.print",
        "html printers",
        "cell magics",
    ):
        assert repr(changed) in loaded.stdout, loaded
    after = kernel.run(
        "%unload_ext jaxdbg\nafter = snapshot()\n"
        "print('DIFF', {k: (before[k], after[k]) for k in before if before[k] != after[k]})"
    )
    assert after.status == "ok", after
    assert "DIFF {}" in after.stdout, after
    # and loading again works as the first time
    again = kernel.run("%load_ext jaxdbg\nprint(snapshot()['jaxdbg backends'])")
    assert "'widgets'" in again.stdout, again


def test_quit_reporting_chains_to_an_earlier_custom_exception_handler(kernel):
    setup = kernel.run(
        """
import jax, jaxdbg
def mine(self, etype, value, tb, tb_offset=None):
    print("my handler saw", etype.__name__)
get_ipython().set_custom_exc((ValueError,), mine)
mine_installed = get_ipython().CustomTB
%load_ext jaxdbg
""",
        timeout=120,
    )
    assert setup.status == "ok", setup
    mine = kernel.run("raise ValueError('x')")
    assert "my handler saw ValueError" in mine.stdout, mine
    kernel.answer_input("q")
    quit_result = kernel.run("jax.jit(lambda x: (jaxdbg.breakpoint(backend='cli'), x + 1)[1])(1.0)", timeout=120)
    [error] = quit_result.errors
    assert error["traceback"] == ["jaxdbg.DebuggerQuit: the debugger quit, so the computation was stopped"]
    other = kernel.run("raise KeyError('plain')")  # neither handler's: IPython's own traceback
    assert [e["ename"] for e in other.errors] == ["KeyError"], other
    restored = kernel.run(
        "%unload_ext jaxdbg\nprint('same', get_ipython().CustomTB is mine_installed, get_ipython().custom_exceptions)"
    )
    assert "same True (<class 'ValueError'>,)" in restored.stdout, restored


def test_import_jaxdbg_widgets_registers_and_nothing_more(kernel):
    # `import jaxdbg` loads the installed panel backend (jaxdbg_widgets) through its
    # entry point: that registers the backend and changes nothing else in the kernel.
    result = kernel.run(
        SNAPSHOT
        + """
import jax
before = snapshot()
import jaxdbg, jaxdbg_widgets
after = snapshot()
print('DIFF', sorted(k for k in before if before[k] != after[k]))
print('BACKENDS', after['jaxdbg backends'])
jax.jit(lambda x: (jaxdbg.breakpoint(), x)[1]).lower(1.0)  # traced for the panel: prepared now
traced = snapshot()
print('TRACED', sorted(k for k in after if after[k] != traced[k]))
""",
        timeout=120,
    )
    assert "DIFF ['jaxdbg backends']" in result.stdout, result
    assert "'widgets'" in result.stdout.split("BACKENDS", 1)[1], result
    assert "TRACED ['events', 'wakeup fd']" in result.stdout, result


def test_functions_traced_before_load_ext_get_named_filtered_frames(kernel):
    """`%load_ext jaxdbg` after a function was traced with JAX's own breakpoint."""
    result = kernel.run(
        """
import io, os, jax
os.environ["JAXDBG_BACKEND"] = "cli"
answers, out = io.StringIO("c\\nwhere\\nup\\nlocals\\nc\\n"), io.StringIO()

@jax.jit
def f(x):
    y = x + 1
    jax.debug.breakpoint(stdin=answers, stdout=out)
    return y

f(1.)  # JAX's own debugger: "c"
%load_ext jaxdbg
f(1.)  # the same compiled function, now served by jaxdbg
print(out.getvalue())
""",
        timeout=180,
    )
    assert result.status == "ok", result
    text = result.stdout.split("(jaxdbg) where\n", 1)[1]
    where, rest = text.split("(jaxdbg) up\n", 1)
    assert where.splitlines()[0].startswith(">  0  f  In[") and "   1  <module>  In[" in where, where
    headers = [line for line in where.splitlines() if not line.startswith("    ")]
    assert len(headers) == 2, where  # no IPython, ipykernel, asyncio or runpy frames
    assert "Stopped at In[" in result.stdout and " in f" in result.stdout
    module_locals = rest.split("(jaxdbg) locals\n", 1)[1].split("(jaxdbg)")[0]
    names = {line.split()[0] for line in module_locals.splitlines() if line.strip()}
    assert {"f", "answers", "out"} <= names, module_locals
    assert not names & {"_ih", "_oh", "In", "Out", "get_ipython", "exit", "os", "jax"}, names
