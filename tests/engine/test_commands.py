"""Every Session command through the terminal backend, on a real jitted stop."""

import re
import sys
import threading  # noqa: F401  (a typed command reads it from the module globals)

import jax
import jax.numpy as jnp
import pytest

import jaxdbg
from support.transcript import Transcript

GLOBAL_SCALE = 10.0


def inner(x, t):
    y = jnp.tanh(x) * GLOBAL_SCALE
    z = {"w": y + 1, "n": 3}  # noqa: F841
    label = "layer"  # noqa: F841
    jaxdbg.breakpoint(**t.options)
    return y.sum()


def outer(x, t):
    factor = 2
    return inner(x * factor, t)


def run(*commands):
    t = Transcript(*commands)
    result = jax.jit(lambda x: outer(x, t))(jnp.arange(4.0))
    return t, result


def test_print_sees_runtime_values_and_globals():
    t, result = run("p y", "p jnp.mean(y)", "p GLOBAL_SCALE", "c")
    assert float(result) == pytest.approx(float((jnp.tanh(jnp.arange(4.0) * 2) * 10).sum()))
    y_text, mean_text, scale_text = t.answers("p y")[0], t.answers("p jnp.mean(y)")[0], t.answers("p GLOBAL_SCALE")[0]
    assert y_text.startswith("Array([0.") and "dtype=float32" in y_text
    assert mean_text.startswith("Array(7.")
    assert scale_text == "10.0"


def test_untraced_locals_keep_their_values():
    t, _ = run("p label", "p z['n']", "c")
    assert t.answers("p label") == ["'layer'"]
    assert t.answers("p z['n']") == ["3"]


def test_pp_whatis_and_locals_table():
    t, _ = run("pp z", "pp z --full", "whatis y", "locals", "c")
    # a pytree with arrays: a tree of leaf summaries; --full: every element, as pprint
    assert t.answers("pp z")[0].splitlines()[1:] == [
        "├── ['n']  int  3",
        "└── ['w']  Array  float32[4] · min=1 max=11 mean=8.408 · [ 1. , 10.640276, 10.993292, 10.999876]",
    ]
    assert "'w': Array(" in t.answers("pp z --full")[0]
    assert t.answers("whatis y")[0].startswith("Array float32[4]")
    table = t.answers("locals")[0]
    row = next(line for line in table.splitlines() if line.startswith("y "))
    assert "float32[4]" in row and "min=0" in row and "max=" in row and "mean=" in row
    assert "label" in table and "'layer'" in table


def test_pp_of_plain_values_prints_them_as_pdbs_pp_does():
    # No array among the leaves: pprint's text, as pdb's pp and as `locals` show it, not an
    # outline of leaves ("2 leaves, no arrays" for a shape).
    t, _ = run("pp y.shape", "pp {'lr': 0.001, 'betas': (0.9, 0.999)}", "pp [label, z['n']]", "c")
    assert t.answers("pp y.shape") == ["(4,)"]
    assert t.answers("pp {'lr': 0.001, 'betas': (0.9, 0.999)}") == ["{'betas': (0.9, 0.999), 'lr': 0.001}"]
    assert t.answers("pp [label, z['n']]") == ["['layer', 3]"]


def test_args_lists_the_functions_arguments_as_pdb_does():
    t, _ = run("args", "a", "up", "args", "c")
    table = t.answers("args")[0]
    assert [line.split()[0] for line in table.splitlines()] == ["x", "t"], table
    assert "float32[4]" in table.splitlines()[0] and "min=0" in table
    assert t.answers("a")[0] == table
    assert [line.split()[0] for line in t.answers("args")[1].splitlines()] == ["x", "t"]


def test_a_small_2d_arrays_row_stays_on_one_line():
    t = Transcript("locals", "c")

    def step(grid):
        jaxdbg.breakpoint(**t.options)
        return grid

    jax.jit(step)(jnp.zeros((4, 1)))
    grid_row, transcript_row = t.answers("locals")[0].splitlines()
    assert grid_row.startswith("grid ") and "float32[4,1]" in grid_row, grid_row
    assert "[[0.], [0.], [0.], [0.]]" in grid_row, grid_row
    assert transcript_row.startswith("t "), transcript_row


def test_args_of_module_code_and_of_star_parameters():
    def step(x, *rest, scale=1.0, **extra):
        total = x * scale  # noqa: F841
        jaxdbg.breakpoint(**extra["t"].options)
        return x

    t = Transcript("args", "c")
    jax.jit(lambda x: step(x, 1, 2, t=t))(jnp.ones(2))
    assert [line.split()[0] for line in t.answers("args")[0].splitlines()] == ["x", "scale", "rest", "extra"]
    module_code = Transcript("args", "c")
    namespace = {"jaxdbg": jaxdbg, "t": module_code}
    exec(compile("jaxdbg.breakpoint(**t.options)", "<module-code>", "exec"), namespace)
    assert module_code.answers("args") == ["(no arguments)"]


def test_where_up_down_frame():
    t, _ = run("where", "up", "p factor", "down", "p label", "frame 1", "p factor", "frame 99", "down", "c")
    where = t.answers("where")[0].splitlines()
    assert where[0].startswith(">  0  inner")
    assert any(line.startswith("   1  outer") for line in where)
    assert "-> " in t.answers("up")[0] and "return inner(x * factor, t)" in t.answers("up")[0]
    assert t.answers("p factor") == ["2", "2"]
    assert t.answers("p label") == ["'layer'"]
    assert t.answers("frame 99")[0].startswith("*** no frame 99")
    # after 'frame 1' then 'frame 99' (rejected) we are still at 1, so down works
    assert not t.answers("down")[1].startswith("***")


def test_up_at_oldest_and_down_at_newest_are_errors():
    t, _ = run("down", "up 1000", "up", "where", "c")
    assert t.answers("down") == ["*** Newest frame"]
    assert t.answers("up 1000")[0].startswith("> ")  # moved, to the oldest frame
    assert t.answers("up") == ["*** Oldest frame"]
    headers = [line for line in t.answers("where")[0].splitlines() if not line.startswith("    ")]
    assert headers[-1].startswith(">") and len(headers) > 2  # still at the oldest


def test_list_and_longlist():
    t, _ = run("l", "ll", "c")
    listing = t.answers("l")[0]
    assert "->     jaxdbg.breakpoint(**t.options)" in listing
    whole = t.answers("ll")[0]
    assert "def inner(x, t):" in whole and "return y.sum()" in whole
    assert "def outer" not in whole


def test_comprehensions_lambdas_and_statements():
    t, _ = run(
        "p [float(v) for v in y][:1]", "p (lambda k: y * k)(0).sum()", "w2 = y * 0 + 5", "p w2.sum()", "p y.sum()", "c"
    )
    assert t.answers("p [float(v) for v in y][:1]") == ["[0.0]"]
    assert t.answers("p (lambda k: y * k)(0).sum()")[0].startswith("Array(0.")
    assert t.answers("w2 = y * 0 + 5") == [""]
    assert t.answers("p w2.sum()")[0].startswith("Array(20.")


def test_statement_does_not_touch_the_program():
    t, result = run("y = y * 0", "GLOBAL_SCALE = 0", "c")
    assert float(result) > 1.0
    assert GLOBAL_SCALE == 10.0


def test_errors_are_reported_and_session_goes_on():
    t, _ = run("p foo", "p 1/0", "p (", "frame x", "up 0", "help nope", "p y.shape", "c")
    assert t.answers("p foo") == ["*** NameError: name 'foo' is not defined"]
    assert t.answers("p 1/0") == ["*** ZeroDivisionError: division by zero"]
    assert t.answers("p (")[0].startswith("*** SyntaxError")
    assert t.answers("frame x")[0].startswith("*** frame takes a frame number")
    assert t.answers("up 0")[0].startswith("*** up takes a positive count")
    assert t.answers("help nope")[0].startswith("*** no command 'nope'")
    assert t.answers("p y.shape") == ["(4,)"]


def test_a_pdb_command_it_lacks_or_a_misspelt_command_says_what_to_type():
    t, _ = run("display y", "b 12", "contine", "lcoals", "y.sum(", "foo", "label = 'x'", "contine = 1", "contine", "c")
    assert t.answers("display y") == [
        "*** SyntaxError: invalid syntax\n    (pdb's display is 'watch EXPR' here: it keeps the value at every later stop.)"
    ]
    assert "jaxdbg's breakpoints are jaxdbg.breakpoint() calls in the code" in t.answers("b 12")[0]
    assert t.answers("contine")[0] == (
        "*** NameError: name 'contine' is not defined\n    (did you mean the command 'continue'? 'help' lists them.)"
    )
    assert t.answers("lcoals")[0].endswith("(did you mean the command 'locals'? 'help' lists them.)")
    # Python's own mistakes, and names nothing is like, get Python's error alone.
    assert t.answers("y.sum(")[0].startswith("*** SyntaxError") and "\n" not in t.answers("y.sum(")[0]
    assert t.answers("foo") == ["*** NameError: name 'foo' is not defined"]
    # A name the frame binds is Python: no hint.
    assert t.answers("label = 'x'") == [""] and t.answers("contine")[1] == "1"
    assert t.stops() and "(jaxdbg) c" in t.text


def test_unknown_line_is_evaluated_and_empty_line_repeats():
    t, _ = run("y.shape", "p label", "", "c")
    assert t.answers("y.shape") == ["(4,)"]
    assert t.answers("p label") == ["'layer'"]
    assert t.answers("") == ["'layer'"]


def test_help_lists_every_command():
    t, _ = run("help", "help up", "c")
    text = t.answers("help")[0]
    for name in (
        "where",
        "up",
        "down",
        "frame",
        "list",
        "ll",
        "p expr",
        "pp",
        "locals",
        "whatis",
        "continue",
        "skip",
        "quit",
        "help",
    ):
        assert name in text
    assert "aliases: up, u" in t.answers("help up")[0]


def test_banner_and_prompt():
    t, _ = run("c")
    assert t.stops()[0].startswith("Stopped at ") and "test_commands.py" in t.stops()[0]
    assert re.search(r" in inner \(breakpoint \d+, hit \d+\)$", t.stops()[0]), t.stops()[0]
    assert "(jaxdbg) c" in t.text


def test_huge_result_is_truncated():
    t, _ = run("p 'x' * 100000", "c")
    answer = t.answers("p 'x' * 100000")[0]
    assert "output truncated" in answer and len(answer) < 30_000


def test_quit_eagerly_raises_debugger_quit():
    t = Transcript("q")
    with pytest.raises(jaxdbg.DebuggerQuit):
        jaxdbg.breakpoint(**t.options)


def test_end_of_input_quits():
    t = Transcript()
    with pytest.raises(jaxdbg.DebuggerQuit):
        jaxdbg.breakpoint(**t.options)


def test_python_using_a_command_name_starts_with_a_bang():
    t, _ = run("!c = 41", "p c + 1", "!c == 41", "!l = [1, 2]", "p l[1]", "c")
    assert t.answers("p c + 1") == ["42"]
    assert t.answers("!c == 41") == ["True"]
    assert t.answers("p l[1]") == ["2"]
    assert len(t.stops()) == 1


def test_skip_outside_vmap_is_refused():
    t, _ = run("skip", "c")
    assert t.answers("skip")[0].startswith("*** skip works inside vmap")


def test_locals_in_a_module_frame_with_modules_and_odd_values():
    import types

    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr")

    t = Transcript("locals", "c")
    mod = types.ModuleType("jnp_like")  # noqa: F841
    broken = Broken()  # noqa: F841
    jaxdbg.breakpoint(**t.options)
    table = t.answers("locals")[0]
    assert "mod " in table and "<module 'jnp_like'>" in table
    assert "<repr failed: RuntimeError: no repr>" in table


def test_module_frame_locals_leave_out_imports_and_shell_names():
    t = Transcript("locals", "p np.float32(1)", "c")
    namespace = {"t": t, "__name__": "notebook_like"}
    source = (
        "import numpy as np\nimport jaxdbg\nIn = ['']\n_hidden = 1\nweights = np.ones(3)\n"
        "jaxdbg.breakpoint(**t.options)\n"
    )
    exec(compile(source, "<notebook-like>", "exec"), namespace)
    table = t.answers("locals")[0]
    assert "weights" in table and "float64[3]" in table
    assert "np " not in table and "jaxdbg" not in table and "_hidden" not in table
    assert "In " not in table
    assert t.answers("p np.float32(1)")[0] in ("1.0", "np.float32(1.0)")


def test_repeated_list_continues_and_up_starts_again():
    t, _ = run("l", "l", "", "up", "l", "c")
    first, second, third = t.answers("l")[0], t.answers("l")[1], t.answers("")[0]
    assert "->" in first and "->" not in second
    last_first = int(first.splitlines()[-1].split()[0])
    assert int(second.splitlines()[1].split()[0]) == last_first + 1
    assert int(third.splitlines()[1].split()[0]) > int(second.splitlines()[-1].split()[0])
    assert "->" in t.answers("l")[2]  # a new frame lists around its own line


class _ExitsOnEverything:
    """User code that raises BaseExceptions from every hook the debugger might call."""

    shape = property(lambda self: (_ for _ in ()).throw(SystemExit("shape")))

    def __repr__(self):
        raise SystemExit("repr")

    def __str__(self):
        raise SystemExit("str")

    def __len__(self):
        raise GeneratorExit


def test_user_code_raising_base_exceptions_does_not_lose_the_stop():
    t = Transcript("locals", "p obj", "pp obj", "whatis obj", "p obj.shape", "obj", "where", "c")

    @jax.jit
    def f(x):
        obj = _ExitsOnEverything()  # noqa: F841
        y = x + 1
        jaxdbg.breakpoint(**t.options)
        return y

    assert float(f(1.0)) == 2.0  # the stop ended by "c", the computation went on
    table = t.answers("locals")[0]
    assert "obj" in table and "<repr failed: SystemExit: repr>" in table and "y " in table
    assert t.answers("p obj") == ["*** could not show the value: SystemExit: repr"]
    assert t.answers("pp obj") == ["*** could not show the value: SystemExit: repr"]
    assert t.answers("whatis obj") == ["_ExitsOnEverything"]
    assert t.answers("p obj.shape") == ["*** SystemExit: shape"]
    assert t.answers("obj")[0].startswith("*** could not show the value")
    assert len(t.stops()) == 1 and "Continuing." in t.text


def test_debugger_quit_is_an_exception_as_bdbquit_is():
    """Documented choice: a program's `except Exception:` catches a quit, as it
    catches pdb's BdbQuit (and, inside jit, the JaxRuntimeError wrapping it)."""
    import bdb

    assert issubclass(bdb.BdbQuit, Exception) and issubclass(jaxdbg.DebuggerQuit, Exception)
    t = Transcript("q")
    caught = []
    try:
        jaxdbg.breakpoint(**t.options)
    except Exception as e:
        caught.append(type(e))
    assert caught == [jaxdbg.DebuggerQuit]


class _InterruptsInRepr:
    def __repr__(self):
        raise KeyboardInterrupt("from a repr")


def _raises_keyboard_interrupt():
    raise KeyboardInterrupt("raised by the program")


@pytest.mark.parametrize("transform", ["jit", "pmap"])
def test_keyboard_interrupt_raised_by_user_code_is_reported_and_the_stop_goes_on(transform):
    """Only a real interrupt (SIGINT) ends a stop; user code raising KeyboardInterrupt
    is reported as pdb reports it and the session goes on."""
    t = Transcript("g()", "p g()", "p obj", "locals", "p x + 1", "c")

    def f(x):
        g = _raises_keyboard_interrupt  # noqa: F841
        obj = _InterruptsInRepr()  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return x + 1

    if transform == "jit":
        result = jax.jit(f)(jnp.float32(1.0))
    else:
        result = jax.pmap(f)(jnp.ones(1))
    assert jnp.ravel(result).tolist()[0] == 2.0
    assert t.answers("g()") == ["*** KeyboardInterrupt: raised by the program"]
    assert t.answers("p g()") == ["*** KeyboardInterrupt: raised by the program"]
    assert t.answers("p obj") == ["*** could not show the value: KeyboardInterrupt: from a repr"]
    assert "obj" in t.answers("locals")[0]
    assert t.answers("p x + 1")[0].startswith("Array(2")
    assert len(t.stops()) == 1 and "Continuing." in t.text


def test_a_scripted_stdin_is_read_across_calls_and_says_so_when_used_up():
    """A breakpoint's options are taken once, when the function is traced: the same
    ``stdin=`` stream serves every call. Used up by an earlier call, the stop says why
    it quits and points to ``commands=``."""
    t = Transcript("p x", "c")

    @jax.jit
    def f(x):
        jaxdbg.breakpoint(**t.options)
        return x + 1

    def notices(text):  # the printed notice, not the source lines the stop shows
        return [line for line in text.splitlines() if line.startswith("jaxdbg: the stdin=")]

    assert float(f(1.0)) == 2.0
    assert not notices(t.text)
    with pytest.raises(Exception) as caught:
        f(2.0).block_until_ready()
    assert "DebuggerQuit" in str(caught.value) or isinstance(caught.value, jaxdbg.DebuggerQuit)
    assert len(t.stops()) == 2
    (notice,) = notices(t.text.split("Stopped at")[2])
    assert "stream of this breakpoint is used up: earlier stops read it" in notice, notice
    assert "commands= is the per-breakpoint queue" in notice, notice


def _nested_target(y, t):
    jaxdbg.breakpoint(**t.options)
    return y


@pytest.mark.parametrize("transform", ["eager", "jit", "pmap"])
def test_quit_in_a_nested_stop_is_one_line_at_the_outer_prompt(transform):
    t = Transcript("inner_f(jnp.ones(1))", "q", "p x + 1", "c")
    wrap = {"eager": lambda f: f, "jit": jax.jit, "pmap": jax.pmap}[transform]
    nested = wrap(lambda y: _nested_target(y, t))

    def outer(x):
        inner_f = nested  # noqa: F841  (a local of the stop, called from its prompt)
        jaxdbg.breakpoint(**t.options)
        return x + 1

    result = (jax.pmap if transform == "pmap" else jax.jit)(outer)(jnp.ones(1))
    assert jnp.ravel(result).tolist() == [2.0]
    assert len(t.stops()) == 2
    after_quit = t.answers("q")[0]
    assert after_quit.splitlines() == [
        "Quitting: the computation stops with jaxdbg.DebuggerQuit.",
        "*** DebuggerQuit: the nested stop was quit",
    ], after_quit
    assert t.answers("p x + 1")[0].startswith("Array(")


def _scan_step(t):
    """A training step in ``lax.scan`` whose locals are named like commands: p, l, c, n, u, d, w, q."""

    def step(p, x):
        l = jnp.sum(p["w"] * x)
        c, n, u, d, w, q = 1, 2, 3, 4, 5, 6  # noqa: F841
        jaxdbg.breakpoint(**t.options)
        return {"w": p["w"] - 0.1 * l}, l

    return jax.jit(lambda p, xs: jax.lax.scan(step, p, xs))


def test_a_line_starting_with_a_command_word_is_that_command_even_when_a_local_has_its_name():
    t = Transcript("p l", "p(l)", "pp l", "p p", "p c + n", "whatis p", "l", "u", "d", "w", "c")
    params, losses = _scan_step(t)({"w": jnp.ones(2)}, jnp.ones((1, 2)))
    assert float(losses[0]) == 2.0  # the stop ended with "c", the scan went on
    assert t.answers("p l") == ["Array(2., dtype=float32)"]
    assert t.answers("p(l)") == ["Array(2., dtype=float32)"]  # as pdb: the p command, argument "(l)"
    assert t.answers("pp l") == ["Array(2., dtype=float32)"]
    assert t.answers("p p") == ["{'w': Array([1., 1.], dtype=float32)}"]
    assert t.answers("p c + n") == ["3"]
    assert t.answers("whatis p").__len__() == 1 and t.answers("whatis p")[0].startswith("dict")
    assert "->" in t.answers("l")[0]  # list, not the value of l
    assert t.answers("u")[0].startswith("> ") and t.answers("d")[0].startswith("> ")
    assert "step" in t.answers("w")[0] and "Continuing." in t.text
    assert len(t.stops()) == 1


def test_bang_forces_python_for_a_line_starting_with_a_command_word():
    t = Transcript("!p = 3", "p p", "!c", "!l", "!q = 9", "p q", "c")
    _scan_step(t)({"w": jnp.ones(2)}, jnp.ones((1, 2)))
    assert t.answers("p p") == ["3"]
    assert t.answers("!c") == ["1"]  # the local c, the stop goes on
    assert t.answers("!l") == ["Array(2., dtype=float32)"]
    assert t.answers("p q") == ["9"]
    assert len(t.stops()) == 1


def test_a_command_given_python_it_cannot_take_refuses_and_names_the_bang():
    t = Transcript("c = 41", "q = 5", "l[1]", "where now", "p c", "c")
    _scan_step(t)({"w": jnp.ones(2)}, jnp.ones((1, 2)))
    for line in ("c = 41", "q = 5", "l[1]"):
        answer = t.answers(line)[0]
        assert answer.startswith("*** ") and f"!{line}" in answer, (line, answer)
    assert t.answers("where now")[0] == "*** where takes no argument, not 'now'"
    assert t.answers("p c") == ["1"]  # nothing ran: the local is untouched
    assert len(t.stops()) == 1 and "Continuing." in t.text  # neither c = 41 nor q = 5 resumed


def test_help_states_the_command_word_rule():
    t = Transcript("help", "c")
    jaxdbg.breakpoint(**t.options)
    text = t.answers("help")[0]
    assert "starts with a command word" in text and "!" in text


def _run_cell_like(source: str, t: Transcript, filename: str = "<cell-like ll>") -> None:
    """Run ``source`` as a notebook cell runs: its lines in linecache, module code around the def."""
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), {"jaxdbg": jaxdbg, "jax": jax, "jnp": jnp, "t": t})


@pytest.mark.parametrize("jit", [False, True])
def test_ll_shows_the_function_not_the_whole_cell_even_when_it_starts_on_line_1(jit):
    t = Transcript("ll", "c")
    cell = (
        "def f(x):\n"
        "    y = x + 1\n"
        "    jaxdbg.breakpoint(**t.options)\n"
        "    return y\n"
        "\n"
        "after_the_function = 1\n"
        f"f = jax.jit(f) if {jit} else f\n"
        "f(jnp.ones(2))\n"
    )
    _run_cell_like(cell, t)
    listing = t.answers("ll")[0].splitlines()
    assert [line.split(None, 1)[0] for line in listing[1:]] == ["1", "2", "3", "4"], listing
    assert "after_the_function" not in "\n".join(listing)


def test_ll_of_a_function_further_down_a_cell_shows_only_its_lines():
    t = Transcript("ll", "c")
    cell = "before = 0\ndef g(x):\n    jaxdbg.breakpoint(**t.options)\n    return x\nlater = g(1)\n"
    _run_cell_like(cell, t, "<cell-like ll 2>")
    listing = t.answers("ll")[0].splitlines()
    assert [line.split(None, 1)[0] for line in listing[1:]] == ["2", "3", "4"], listing


def test_print_is_python_not_a_command():
    """As in pdb, print(...) is Python's print: its text, not a repr."""
    t = Transcript("print('hello', 6 * 7)", "c")
    jaxdbg.breakpoint(**t.options)
    assert t.answers("print('hello', 6 * 7)") == ["hello 42"]


def test_what_a_command_prints_comes_in_order_before_its_result():
    t = Transcript("p [print('first'), print('second', file=sys.stderr), 3][-1]", "c")
    jaxdbg.breakpoint(**t.options)
    assert t.answers("p [print('first'), print('second', file=sys.stderr), 3][-1]") == ["first\nsecond\n3"]


def test_other_threads_print_where_they_did_while_a_command_runs(capsys):
    t = Transcript(
        "!th = threading.Thread(target=print, args=('from another thread',)); "
        "th.start(); th.join(); print('from the command')",
        "c",
    )
    stdout_before = sys.stdout
    jaxdbg.breakpoint(**t.options)
    assert t.answers(t.stdin.getvalue().splitlines()[0]) == ["from the command"]
    assert "from another thread" in capsys.readouterr().out
    assert sys.stdout is stdout_before  # the command's wrapper is gone with it


@pytest.mark.parametrize("function", ["<module>", "<cell line: 3>"])
def test_module_code_locals_leave_out_the_shells_names_whatever_ipython_calls_it(function):
    """Top-level cell code (IPython 7 names it ``<cell line: N>``) shows the user's names,
    not the shell's history variables and private names; a function shows every local."""
    from jaxdbg.engine.frames import Frame
    from jaxdbg.engine.session import Session

    names = {"x": 1, "In": [], "_": None, "_i3": "", "get_ipython": print}
    cell = Frame("<ipython-input-3>", 1, function, dict(names), {}, ["x = 1\n"], 1)
    assert list(Session([cell]).visible_locals()) == ["x"]
    body = Frame("<ipython-input-3>", 1, "step", dict(names), {}, ["x = 1\n"], 1)
    assert list(Session([body]).visible_locals()) == list(names)
