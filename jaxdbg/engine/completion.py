"""Tab completion of a debugger command line against the selected frame.

Completes command words at the start of a line, names visible in the frame
(scratch names, locals, module globals, builtins), attributes after a dot and
string keys of a dict after ``[``. After a command word, what completes is what
its :class:`~jaxdbg.engine.command_table.ArgumentKind` in the command table says: an
expression as above, a command name, a sub-word (``continue all``), the frame
numbers or the known breakpoint numbers. A number is offered only at an empty
word: typed digits are left as they are.

Completion must never run the program: the object before a dot is looked up
only through plain names, attributes (``getattr``) and subscripts of built-in
dicts, lists and tuples (and of two library mappings: Flax NNX's ``State``, a reopened
saved tree); ``getattr`` and ``dir`` are the only user code it can
reach (a property, ``__getattr__``, ``__dir__``), and whatever they raise,
KeyboardInterrupt aside, only means "no completions".
"""

from __future__ import annotations

import builtins
import re
from typing import Any, Callable, Protocol

from jaxdbg.engine import breakpoint_state
from jaxdbg.engine.command_table import TABLE, ArgumentKind, Command, split_command
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.values import saved_values, tree_summaries


class CompletionContext(Protocol):
    """What completion reads of a :class:`jaxdbg.engine.session.Session` (the Session
    calls this module, so this module does not import it)."""

    frames: list[Frame]
    scratch: dict[str, Any]

    @property
    def current(self) -> Frame: ...


_NAME = r"[A-Za-z_]\w*"
_KEY = r"""\[\s*(?:'[^'\\]*'|"[^"\\]*"|-?\d+)\s*\]"""
# A chain of plain names, attributes and constant subscripts: a.b['k'][0].c
_CHAIN = rf"{_NAME}(?:\.{_NAME}|{_KEY})*"
_ATTRIBUTE_AT_END = re.compile(rf"({_CHAIN})\.(\w*)$")
_KEY_AT_END = re.compile(rf"""({_CHAIN})\[\s*(['"]?)([^'"\]]*)$""")
_NAME_AT_END = re.compile(rf"({_NAME})$|()$")
_CHAIN_PART = re.compile(rf"""\.({_NAME})|\[\s*(?:'([^'\\]*)'|"([^"\\]*)"|(-?\d+))\s*\]""")


class _Unresolved(Exception):
    pass


def complete_line(session: CompletionContext, text: str) -> list[str]:
    """Every completion of ``text`` as a whole line, sorted; [] when there is none."""
    try:
        return sorted(set(_complete(session, text)))
    except KeyboardInterrupt:
        raise
    except BaseException:  # completion must never break the prompt
        return []


def _complete(session: CompletionContext, text: str) -> list[str]:
    if text.startswith("!"):
        return ["!" + c for c in _complete_expression(session, text[1:])]
    stripped = text.lstrip()
    indent = text[: len(text) - len(stripped)]
    word = split_command(stripped)[0]
    rest = stripped[len(word) :].lstrip()  # as typed, trailing spaces kept
    if word == stripped:
        # The first word: a command, or the start of an expression.
        commands = [indent + w for w in TABLE.names() if w.startswith(word) and w.isidentifier()]
        return commands + [indent + c for c in _complete_expression(session, stripped)]
    command = TABLE.get(word)
    if command is None:
        # A line that is Python throughout: "z = x.sh" (a command word makes the line
        # that command, as Session.execute reads it: "!c = x.sh" is Python).
        return [indent + c for c in _complete_expression(session, stripped)]
    head = text[: len(text) - len(rest)]
    return [head + c for c in COMPLETERS[command.argument](session, command, rest)]


# -- arguments, by kind: each gives completions of ``rest`` (the text after the command word)


def _no_argument(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return []


def _expression(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return _complete_expression(session, rest)


def _command_name(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return [w for w in TABLE.names() if w.startswith(rest) and " " not in rest]


def _sub_word(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return [s.word for s in command.sub_words if s.word.startswith(rest) and " " not in rest]


def _numbers(choices: list[int], rest: str, *, first_only: bool = False) -> list[str]:
    """``rest`` with each of ``choices`` not yet in it as its last word, when that word is
    empty (``disable 1 `` -> ``disable 1 2``); ``first_only``: only as the first word."""
    if rest and not rest[-1].isspace():
        return []
    typed = rest.split()
    if first_only and typed:
        return []
    return [rest + str(n) for n in choices if str(n) not in typed]


def _frame_number(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return _numbers(list(range(len(session.frames))), rest, first_only=True)


def _breakpoint_numbers(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return _numbers([r.number for r in breakpoint_state.rows()], rest)


def _breakpoint_and_count(session: CompletionContext, command: Command, rest: str) -> list[str]:
    return _numbers([r.number for r in breakpoint_state.rows()], rest, first_only=True)


#: How the argument of each kind completes: (session, command, text after the word) -> endings.
COMPLETERS: dict[ArgumentKind, Callable[[CompletionContext, Command, str], list[str]]] = {
    ArgumentKind.NONE: _no_argument,
    ArgumentKind.COUNT: _no_argument,  # any positive number: nothing to choose from
    ArgumentKind.EXPRESSION: _expression,
    ArgumentKind.COMMAND_NAME: _command_name,
    ArgumentKind.SUB_WORDS: _sub_word,
    ArgumentKind.FRAME_NUMBER: _frame_number,
    ArgumentKind.BREAKPOINT_NUMBERS: _breakpoint_numbers,
    ArgumentKind.BREAKPOINT_AND_COUNT: _breakpoint_and_count,
    ArgumentKind.PATH: _no_argument,  # a new file's name: nothing to choose from
}


def _complete_expression(session: CompletionContext, text: str) -> list[str]:
    match = _KEY_AT_END.search(text)
    if match:
        return [text[: match.start(2)] + c for c in _keys(session, match.group(1), match.group(2), match.group(3))]
    match = _ATTRIBUTE_AT_END.search(text)
    if match and not _inside_string(text[: match.start()]):
        before = text[: match.end(1) + 1]
        return [before + a for a in _attributes(session, match.group(1), match.group(2))]
    match = _NAME_AT_END.search(text)
    assert match is not None  # its empty alternative matches at the end of any text
    start = match.start()
    if _inside_string(text[:start]) or (start > 0 and (text[start - 1].isdigit() or text[start - 1] == ".")):
        return []
    prefix = text[start:]
    return [text[:start] + n for n in _public(_names(session), prefix) if n.startswith(prefix)]


def _inside_string(text: str) -> bool:
    """Roughly whether ``text`` ends inside a string literal (count of unescaped quotes)."""
    quotes = re.sub(r"\\.", "", text)
    return quotes.count("'") % 2 == 1 or quotes.count('"') % 2 == 1


def _namespace(session: CompletionContext) -> dict[str, Any]:
    """What evaluation sees, lowest priority first: builtins, globals, locals, scratch."""
    frame = session.current
    ns: dict[str, Any] = dict(vars(builtins))
    ns.update(frame.globals)
    ns.update(frame.locals)
    ns.update(session.scratch)
    return ns


def _names(session: CompletionContext) -> list[str]:
    return [n for n in _namespace(session) if n.isidentifier() and n != "__builtins__"]


def _resolve(session: CompletionContext, chain: str) -> Any:
    """The object a plain name chain refers to, without calling anything but getattr."""
    match = re.match(_NAME, chain)
    assert match is not None  # a chain starts with a name (see _CHAIN)
    name = match.group(0)
    ns = _namespace(session)
    if name not in ns:
        raise _Unresolved(name)
    value = ns[name]
    for part in _CHAIN_PART.finditer(chain, len(name)):
        attribute, single, double, number = part.groups()
        mapping = None if attribute is not None else _plain_mapping(value)
        if attribute is not None:
            value = getattr(value, attribute)
        elif mapping is not None:  # built-in or known library mappings: no user __getitem__
            value = dict.__getitem__(
                mapping, single if single is not None else double if double is not None else int(number)
            )
        elif type(value) in (list, tuple) and number is not None:
            value = value[int(number)]
        else:
            raise _Unresolved(chain)
    return value


def _plain_mapping(value: Any) -> dict | None:
    """A dict, or the keys and values of a mapping whose code is a library's, never the
    user's: Flax NNX's ``State`` (gradients, ``nnx.state(model)``), a reopened tree."""
    if type(value) is dict:
        return value
    if isinstance(value, saved_values.SavedTree):
        return {k: value[k] for k in value.keys()}
    if tree_summaries.library_kind(value) == "nnx.State":
        return dict(value.items())
    return None


def _public(names: list[str], prefix: str) -> list[str]:
    """As rlcompleter: private names only once the prefix asks for them."""
    if not prefix.startswith("_"):
        return [n for n in names if not str(n).startswith("_")]
    if not prefix.startswith("__"):
        return [n for n in names if not str(n).startswith("__")]
    return names


def _attributes(session: CompletionContext, chain: str, prefix: str) -> list[str]:
    try:
        value = _resolve(session, chain)
        names = dir(value)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return []
    return [n for n in _public(names, prefix) if isinstance(n, str) and n.startswith(prefix)]


def _keys(session: CompletionContext, chain: str, quote: str, prefix: str) -> list[str]:
    try:
        value = _resolve(session, chain)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return []
    value = _plain_mapping(value)
    if value is None:
        return []
    quote = quote or "'"
    return [
        f"{quote}{k}{quote}]"
        for k in list(value)
        if isinstance(k, str) and k.startswith(prefix) and quote not in k and "\\" not in k
    ]
