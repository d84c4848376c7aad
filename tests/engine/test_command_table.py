"""The public command table: help, completion and dispatch all read it, and a plugin's
command registered through it is a command like any other."""

import ast
import sys
from pathlib import Path

import pytest

import jaxdbg
from jaxdbg.engine import breakpoint_state, completion, frames
from jaxdbg.engine import command_table as commands
from jaxdbg.engine.command_table import TABLE, ArgumentKind
from jaxdbg.engine.stop_info import StopInfo

ENGINE = Path(jaxdbg.__file__).parent / "engine"


def _session() -> jaxdbg.Session:
    """A stop of two live frames: this helper (0) and its caller (1)."""
    local_value = {"alpha": 1}  # noqa: F841 (a name for completion to find)
    here = sys._getframe()
    return jaxdbg.Session([frames.live_frame(here), frames.live_frame(here.f_back)], StopInfo())


@pytest.fixture
def session():
    return _session()


@pytest.fixture
def known_breakpoints():
    """Every known breakpoint's number (they last for the process), three of them new."""
    for line in (1, 2, 3):
        breakpoint_state.register(__file__, line, "f")
    return [str(r.number) for r in breakpoint_state.rows()]


def test_every_command_has_help_and_an_argument_kind():
    table = TABLE.commands()
    assert len(table) >= 20
    for command in table:
        assert command.names and all(n == n.strip() and n for n in command.names), command
        assert isinstance(command.argument, ArgumentKind), command.name
        help_ = command.help()
        assert help_.usage.split()[0] == command.name, command.name
        assert help_.summary and "\n" not in help_.summary, command.name
        assert callable(command.run), command.name


def test_a_commands_help_names_its_sub_words_once_each_in_a_sentence_of_its_own():
    """``library_frames [on|off]``, not ``library_frames [on|off] [on|off]``; and each
    sub-word's sentence ends before the next begins."""
    for command in TABLE.commands():
        help_ = command.help()
        for sub in command.sub_words:
            assert help_.summary.count(f"'{command.name} {sub.word}'") == 1, help_.summary
            words = command.usage.replace("[", " ").replace("]", " ").replace("|", " ").split()
            assert sub.word not in words, f"{command.usage!r}: help adds [{sub.word}|...] itself"
        sentences = [command.summary, *(sub.summary for sub in command.sub_words)]
        assert all(s.endswith(".") for s in sentences), help_.summary  # read one after another
        assert help_.usage.count("[") == help_.usage.count("]"), help_.usage


def test_names_are_unique_across_commands():
    names = TABLE.names()
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_help_lists_exactly_the_table(session):
    out = session.execute("help")
    assert out.kind is jaxdbg.OutputKind.HELP
    assert [h.names for h in out.data] == [c.names for c in TABLE.commands()]
    lines = out.text.splitlines()
    assert [line.split()[0] for line in lines[: len(TABLE.commands())]] == [c.name for c in TABLE.commands()]
    assert len(lines) == len(TABLE.commands()) + 2  # the command-word rule and the ! rule


def test_each_kind_has_a_completer():
    assert set(completion.COMPLETERS) == set(ArgumentKind)


def test_completion_by_argument_kind(session, known_breakpoints):
    s = session
    # expression: the names of the selected frame
    assert s.complete("p local_v") == ["p local_value"]
    assert s.complete("whatis local_value['al") == ["whatis local_value['alpha']"]
    # frame number: the frames' indices, at an empty word only
    assert s.complete("frame ") == ["frame 0", "frame 1"]
    assert s.complete("f ") == ["f 0", "f 1"]
    assert s.complete("frame 1") == [] and s.complete("frame 0 ") == []
    # breakpoint numbers: the known breakpoints, each once
    known = known_breakpoints
    one, two = known[0], known[1]
    assert s.complete("disable ") == sorted(f"disable {n}" for n in known)
    assert s.complete(f"enable {two} ") == sorted(f"enable {two} {n}" for n in known if n != two)
    assert s.complete(f"disable {one}") == []
    # breakpoint and count: a breakpoint number first, then the count is the user's
    assert s.complete("ignore ") == sorted(f"ignore {n}" for n in known)
    assert s.complete(f"ignore {one} ") == []
    # count: nothing to choose from
    assert s.complete("up ") == [] and s.complete("down 2") == []
    # command name
    assert s.complete("help disa") == ["help disable"]
    # sub-words: what the command declares
    assert s.complete("continue a") == ["continue all"]
    assert s.complete("c ") == ["c all"]
    assert s.complete("continue all") == ["continue all"]
    assert s.complete("continue x") == []
    # none
    assert s.complete("where ") == [] and s.complete("breakpoints ") == []


def test_without_breakpoints_breakpoint_numbers_complete_nothing(session, monkeypatch):
    monkeypatch.setattr(breakpoint_state, "rows", lambda: [])
    assert session.complete("disable ") == [] and session.complete("ignore ") == []


@pytest.fixture
def plugin_command():
    """A command a plugin registers through the public API, taken out afterwards."""

    @commands.command(
        "shapeof", "so", usage="shapeof expr", summary="Show the shape of expr.", argument=ArgumentKind.EXPRESSION
    )
    def shapeof(session, arg):
        value, failed = session.value_of(arg)
        return failed or jaxdbg.Output(jaxdbg.OutputKind.TEXT, str(getattr(value, "shape", None)))

    yield TABLE.get("shapeof")
    TABLE.remove("shapeof")
    assert "shapeof" not in TABLE and "so" not in TABLE


def test_a_plugin_command_is_in_help_completes_and_runs(session, plugin_command):
    text = session.execute("help").text
    assert "shapeof expr" in text and "Show the shape of expr." in text
    assert "aliases: shapeof, so" in session.execute("help so").text
    assert session.complete("shap") == ["shapeof"]
    assert session.complete("help shape") == ["help shapeof"]
    assert session.complete("so local_v") == ["so local_value"]  # its argument kind completes
    assert session.execute("so (2, 3)").text == "None"
    assert session.execute("shapeof __import__('numpy').zeros((2, 3))").text == "(2, 3)"


def test_a_command_registered_again_replaces_the_old_in_its_place():
    table = commands.CommandTable()
    first = commands.command("one", usage="one", summary="First.", table=table)(lambda s, a: None)
    commands.command("two", "t", usage="two", summary="Second.", table=table)(lambda s, a: None)
    commands.command("three", usage="three", summary="Third.", table=table)(lambda s, a: None)
    commands.command("t", usage="t", summary="New t.", table=table)(first)
    assert [c.names for c in table.commands()] == [("one",), ("t",), ("three",)]
    assert table.get("two") is None and table.get("t").summary == "New t."


def test_continue_declares_its_all_form(session):
    cont = TABLE.get("continue")
    assert cont.argument is ArgumentKind.SUB_WORDS
    assert [s.word for s in cont.sub_words] == ["all"]
    assert cont.help().usage == "continue [all]"
    assert TABLE.get("c") is cont and TABLE.get("cont") is cont
    # dispatch goes to the sub-word's runner; this stop has no breakpoint number
    out = session.execute("continue all")
    assert out.is_error and "does not come from a numbered breakpoint" in out.text
    assert session.execute("c").resume is jaxdbg.Resume.CONTINUE


def test_sub_words_need_a_command_that_takes_them():
    table = commands.CommandTable()
    commands.command("go", usage="go", summary="Go.", table=table)(lambda s, a: None)
    with pytest.raises(ValueError):
        table.add_sub_word("go", "far", summary="Far.", run=lambda s, a: None)
    with pytest.raises(KeyError):
        table.add_sub_word("missing", "far", summary="Far.", run=lambda s, a: None)


def test_summary_of_a_button_line():
    assert TABLE.summary_of("continue") == TABLE.get("continue").summary
    assert TABLE.summary_of("continue all") == TABLE.get("continue").sub_word("all").summary
    assert TABLE.summary_of("ignore 3") == TABLE.get("ignore").summary
    assert TABLE.summary_of("continue later") is None and TABLE.summary_of("nope") is None


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_table_and_completion_do_not_import_the_session():
    """The Session imports both; either importing it back would be a cycle."""
    for module in ("command_table.py", "completion.py"):
        assert "jaxdbg.engine.session" not in _imports(ENGINE / module), module


def test_no_module_imports_private_names_of_the_session():
    root = Path(jaxdbg.__file__).parent.parent
    offenders = []
    for path in [*root.joinpath("jaxdbg").rglob("*.py"), *root.joinpath("jaxdbg_widgets").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "jaxdbg.engine.session"
                and any(a.name.startswith("_") for a in node.names)
            ):
                offenders.append(str(path.relative_to(root)))
    assert not offenders
