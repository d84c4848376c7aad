"""The debugger's command table: every command once, with what it takes and how it runs.

:meth:`Session.execute <jaxdbg.engine.session.Session.execute>` dispatches through
:data:`TABLE`; ``help`` lists it; completion reads each command's
:class:`ArgumentKind`; the panel's buttons take their tooltips from it. The core
commands (in :mod:`jaxdbg.engine.session`), the many-stops ones
(:mod:`jaxdbg.commands.breakpoints`) and a plugin's all register the same way::

    from jaxdbg.engine import command_table as commands

    @commands.command("shape", usage="shape expr", summary="Show the shape of expr.",
                      argument=commands.ArgumentKind.EXPRESSION)
    def _shape(session, arg):
        ...  # return an Output

A command that takes a few fixed words (``continue all``) declares them with
:func:`add_sub_word`, so help, completion and dispatch all know them.

This module knows nothing of the Session: a command's ``run`` is given one.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
from typing import Any, Callable

from jaxdbg.engine.outputs import CommandHelp, Output, OutputKind


class ArgumentKind(enum.Enum):
    """What follows a command word; completion offers what fits it."""

    NONE = "none"  # where, list, quit: nothing may follow
    EXPRESSION = "expression"  # p x: Python in the selected frame
    COUNT = "count"  # up 2: a positive count, 1 when left out
    FRAME_NUMBER = "frame number"  # frame 1: an index that 'where' lists
    BREAKPOINT_NUMBERS = "breakpoint numbers"  # disable 1 2: this stop's when left out
    BREAKPOINT_AND_COUNT = "breakpoint and count"  # ignore [N] COUNT
    COMMAND_NAME = "command name"  # help up: a word of this table
    SUB_WORDS = "sub-words"  # continue all: the words the command declares
    PATH = "path"  # save stop.npz: a file to write


#: How a command runs: ``run(session, argument)`` -> what to show. ``argument`` is the
#: line after the command word, stripped ("" when there is none).
Runner = Callable[[Any, str], Output]


@dataclasses.dataclass(frozen=True)
class SubWord:
    """A fixed word after a command that makes it do something else: ``continue all``."""

    word: str
    summary: str
    run: Runner  # given "" (a sub-word takes nothing after it)


@dataclasses.dataclass(frozen=True)
class Command:
    """One debugger command: its names (the first is its own, then aliases), a usage and
    one line of help, the kind of argument it takes, and how it runs."""

    names: tuple[str, ...]
    usage: str
    summary: str
    argument: ArgumentKind
    run: Runner
    sub_words: tuple[SubWord, ...] = ()

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def help_usage(self) -> str:
        """The usage ``help`` shows, with the declared sub-words: ``continue [all]``."""
        if not self.sub_words:
            return self.usage
        return f"{self.usage} [{'|'.join(s.word for s in self.sub_words)}]"

    @property
    def help_summary(self) -> str:
        """The line of help ``help`` shows, with a sentence for each sub-word."""
        sentences = [self.summary] + [f"'{self.name} {s.word}': {s.summary}" for s in self.sub_words]
        return " ".join(s if s.endswith((".", "!", "?")) else s + "." for s in sentences)  # a plugin's too

    def help(self) -> CommandHelp:
        return CommandHelp(self.names, self.help_usage, self.help_summary)

    def sub_word(self, word: str) -> SubWord | None:
        return next((s for s in self.sub_words if s.word == word), None)

    def argument_error(self, word: str, arg: str) -> str | None:
        """Why ``arg`` cannot follow this command (typed as ``word``), or None."""
        if not arg:
            return None
        if self.argument is ArgumentKind.NONE:
            return f"{word} takes no argument, not {arg!r}"
        if self.argument is ArgumentKind.SUB_WORDS and self.sub_word(arg) is None:
            if not self.sub_words:
                return f"{word} takes no argument, not {arg!r}"
            words = " or ".join(repr(s.word) for s in self.sub_words)
            return f"{self.name} takes no argument but {words}, not {arg!r}"
        return None

    def runner(self, arg: str) -> Runner:
        """What runs for ``arg`` (checked with :meth:`argument_error` first)."""
        sub = self.sub_word(arg) if self.argument is ArgumentKind.SUB_WORDS and arg else None
        return sub.run if sub is not None else self.run


class CommandTable:
    """Commands by every name they have, listed in the order they were first added."""

    def __init__(self) -> None:
        self._commands: list[Command] = []

    def add(self, command: Command) -> Command:
        """Add ``command``. One that shares a name with a command already here replaces
        it, in its place (a module registered again, a plugin's own ``p``)."""
        if not command.names:
            raise ValueError("a command needs at least one name")
        if command.argument is not ArgumentKind.SUB_WORDS and command.sub_words:
            raise ValueError(f"{command.name}: sub-words need ArgumentKind.SUB_WORDS")
        clashing = [i for i, c in enumerate(self._commands) if set(c.names) & set(command.names)]
        if clashing:
            self._commands[clashing[0]] = command
            for i in reversed(clashing[1:]):
                del self._commands[i]
        else:
            self._commands.append(command)
        return command

    def remove(self, name: str) -> None:
        """Take out the command that has ``name`` (with all its names); no error if none."""
        self._commands = [c for c in self._commands if name not in c.names]

    def add_sub_word(self, name: str, word: str, *, summary: str, run: Runner) -> None:
        """Declare ``name word`` (``continue all``): ``run`` runs for it, and help and
        completion show it. The command must take ArgumentKind.SUB_WORDS."""
        command = self.get(name)
        if command is None:
            raise KeyError(f"no command {name!r} to add {word!r} to")
        if command.argument is not ArgumentKind.SUB_WORDS:
            raise ValueError(f"{command.name} does not take sub-words")
        kept = tuple(s for s in command.sub_words if s.word != word)
        self.add(dataclasses.replace(command, sub_words=kept + (SubWord(word, summary, run),)))

    def get(self, name: str) -> Command | None:
        return next((c for c in self._commands if name in c.names), None)

    def commands(self) -> list[Command]:
        """Every command once, in the order ``help`` lists them."""
        return list(self._commands)

    def names(self) -> list[str]:
        """Every command word, aliases included."""
        return [n for c in self._commands for n in c.names]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def summary_of(self, line: str) -> str | None:
        """The line of help for a command line as a button runs it (``continue all``:
        the sub-word's; ``ignore 3``: the command's), or None when it is no command."""
        word, arg = split_command(line.strip())
        command = self.get(word)
        if command is None:
            return None
        if not arg or command.argument is not ArgumentKind.SUB_WORDS:
            return command.summary
        sub = command.sub_word(arg)
        return sub.summary if sub is not None else None


#: The debugger's commands, for every Session and every view.
TABLE = CommandTable()

_BREAKPOINTS_ARE_CALLS = (
    "jaxdbg's breakpoints are jaxdbg.breakpoint() calls in the code; 'breakpoints' lists them, and "
    "'disable', 'enable', 'ignore' and 'condition' change them"
)
# pdb's commands that jaxdbg has under another name or cannot have: a pdb user types them
# first, and Python's error for them (display x: invalid syntax) would not say why.
PDB_ONLY_WORDS = {
    "display": "pdb's display is 'watch EXPR' here: it keeps the value at every later stop",
    "undisplay": "pdb's undisplay is 'unwatch EXPR' here",
    **dict.fromkeys(("b", "break", "tbreak", "clear", "cl"), _BREAKPOINTS_ARE_CALLS),
    **dict.fromkeys(("j", "jump"), "a compiled program cannot jump; 'replay' re-runs this frame's function eagerly"),
    **dict.fromkeys(("run", "restart"), "a stop cannot restart its program: 'quit', then run it again"),
    "interact": "every line that is not a command already runs as Python in the frame",
    "source": "'ll' shows this frame's function; p inspect.getsource(obj) shows another's",
    **dict.fromkeys(("retval", "rv"), "the stopped call has not returned yet"),
    "info": "as gdb's info: 'locals', 'breakpoints' and 'where' show the frame, the breakpoints and the stack",
}


def unknown_word_hint(word: str, failed: str) -> str | None:
    """What to type instead, when a line starting with ``word`` (no command, nor a name
    the frame knows) failed as Python with ``failed`` (the error shown): pdb's name for
    a command, or a command word misspelt (``contine``). None when the line was Python."""
    if not (failed.startswith("*** SyntaxError") or failed == f"*** NameError: name '{word}' is not defined"):
        return None
    if word in PDB_ONLY_WORDS:
        return PDB_ONLY_WORDS[word]
    close = difflib.get_close_matches(word, TABLE.names(), n=1, cutoff=0.8) if len(word) > 2 else []
    return f"did you mean the command '{close[0]}'? 'help' lists them" if close else None


def command(
    *names: str, usage: str, summary: str, argument: ArgumentKind = ArgumentKind.NONE, table: CommandTable = TABLE
) -> Callable[[Runner], Runner]:
    """Decorator: register ``run(session, arg)`` as the command ``names`` in ``table``."""

    def register(run: Runner) -> Runner:
        table.add(Command(tuple(names), usage, summary, argument, run))
        return run

    return register


def add_sub_word(name: str, word: str, *, summary: str, run: Runner) -> None:
    """Declare ``name word`` in the table (see :meth:`CommandTable.add_sub_word`)."""
    TABLE.add_sub_word(name, word, summary=summary, run=run)


def error(message: str) -> Output:
    """The Output of a command that could not do what was asked: ``*** message``."""
    return Output(OutputKind.ERROR, f"*** {message}")


_COMMAND_WORD = re.compile(r"\?|\w+")


def split_command(line: str) -> tuple[str, str]:
    """``(command word, argument)`` as pdb splits a line: ``p(l)`` is ``("p", "(l)")``.

    The word is the line's leading identifier characters (or ``?``); for a line
    that is not a command the word is simply not in the table.
    """
    match = _COMMAND_WORD.match(line)
    word = match.group() if match else ""
    return word, line[len(word) :].strip()
