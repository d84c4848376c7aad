"""Tab completion of a debugger command line against the selected frame.

Completes command words at the start of a line, names visible in the frame
(scratch names, locals, module globals, builtins), attributes after a dot and
string keys of a dict after ``[``. Expressions after ``p``, ``pp``, ``whatis``
and the other expression commands complete the same way.

Completion must never run the program: the object before a dot is looked up
only through plain names, attributes (``getattr``) and subscripts of built-in
dicts, lists and tuples; ``getattr`` and ``dir`` are the only user code it can
reach (a property, ``__getattr__``, ``__dir__``), and whatever they raise,
KeyboardInterrupt aside, only means "no completions".
"""

from __future__ import annotations

import builtins
import re
from typing import Any

from jaxdbg.engine.session import Session, split_command

# Commands whose argument is a Python expression.
EXPRESSION_COMMANDS = frozenset({"p", "pp", "whatis", "sharding"})
# Commands whose argument is a command name.
COMMAND_NAME_COMMANDS = frozenset({"help", "h", "?"})

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


def complete_line(session: Session, text: str) -> list[str]:
    """Every completion of ``text`` as a whole line, sorted; [] when there is none."""
    try:
        return sorted(set(_complete(session, text)))
    except KeyboardInterrupt:
        raise
    except BaseException:  # completion must never break the prompt
        return []


def _complete(session: Session, text: str) -> list[str]:
    if text.startswith("!"):
        return ["!" + c for c in _complete_expression(session, text[1:])]
    stripped = text.lstrip()
    indent = text[:len(text) - len(stripped)]
    word = split_command(stripped)[0]
    rest = stripped[len(word):].lstrip()  # as typed, trailing spaces kept
    command_words = _command_words(session)
    if word == stripped:
        # The first word: a command, or the start of an expression.
        commands = [indent + w for w in command_words if w.startswith(word) and w.isidentifier()]
        return commands + [indent + c for c in _complete_expression(session, stripped)]
    if word not in command_words:
        # A line that is Python throughout: "z = x.sh" (a command word makes the line
        # that command, as Session.execute reads it: "!c = x.sh" is Python).
        return [indent + c for c in _complete_expression(session, stripped)]
    head = text[:len(text) - len(rest)]
    if word in COMMAND_NAME_COMMANDS:
        return [head + w for w in command_words if w.startswith(rest) and " " not in rest]
    if word in EXPRESSION_COMMANDS:
        return [head + c for c in _complete_expression(session, rest)]
    return []


def _command_words(session: Session) -> list[str]:
    return [name for command in session.commands() for name in command.names]


def _complete_expression(session: Session, text: str) -> list[str]:
    match = _KEY_AT_END.search(text)
    if match:
        return [text[:match.start(2)] + c for c in _keys(session, match.group(1), match.group(2),
                                                           match.group(3))]
    match = _ATTRIBUTE_AT_END.search(text)
    if match and not _inside_string(text[:match.start()]):
        before = text[:match.end(1) + 1]
        return [before + a for a in _attributes(session, match.group(1), match.group(2))]
    match = _NAME_AT_END.search(text)
    start = match.start()
    if _inside_string(text[:start]) or (start > 0 and (text[start - 1].isdigit() or text[start - 1] == ".")):
        return []
    prefix = text[start:]
    return [text[:start] + n for n in _public(_names(session), prefix) if n.startswith(prefix)]


def _inside_string(text: str) -> bool:
    """Roughly whether ``text`` ends inside a string literal (count of unescaped quotes)."""
    quotes = re.sub(r"\\.", "", text)
    return quotes.count("'") % 2 == 1 or quotes.count('"') % 2 == 1


def _namespace(session: Session) -> dict[str, Any]:
    """What evaluation sees, lowest priority first: builtins, globals, locals, scratch."""
    frame = session.current
    ns: dict[str, Any] = dict(vars(builtins))
    ns.update(frame.globals)
    ns.update(frame.locals)
    ns.update(session.scratch)
    return ns


def _names(session: Session) -> list[str]:
    return [n for n in _namespace(session) if n.isidentifier() and n != "__builtins__"]


def _resolve(session: Session, chain: str) -> Any:
    """The object a plain name chain refers to, without calling anything but getattr."""
    name = re.match(_NAME, chain).group(0)
    ns = _namespace(session)
    if name not in ns:
        raise _Unresolved(name)
    value = ns[name]
    for part in _CHAIN_PART.finditer(chain, len(name)):
        attribute, single, double, number = part.groups()
        if attribute is not None:
            value = getattr(value, attribute)
        elif type(value) is dict:  # built-in containers only: no user __getitem__
            value = dict.__getitem__(value, single if single is not None else
                                     double if double is not None else int(number))
        elif type(value) in (list, tuple) and number is not None:
            value = value[int(number)]
        else:
            raise _Unresolved(chain)
    return value


def _public(names: list[str], prefix: str) -> list[str]:
    """As rlcompleter: private names only once the prefix asks for them."""
    if not prefix.startswith("_"):
        return [n for n in names if not str(n).startswith("_")]
    if not prefix.startswith("__"):
        return [n for n in names if not str(n).startswith("__")]
    return names


def _attributes(session: Session, chain: str, prefix: str) -> list[str]:
    try:
        value = _resolve(session, chain)
        names = dir(value)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return []
    return [n for n in _public(names, prefix) if isinstance(n, str) and n.startswith(prefix)]


def _keys(session: Session, chain: str, quote: str, prefix: str) -> list[str]:
    try:
        value = _resolve(session, chain)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return []
    if type(value) is not dict:
        return []
    quote = quote or "'"
    return [f"{quote}{k}{quote}]" for k in list(value) if isinstance(k, str) and k.startswith(prefix)
            and quote not in k and "\\" not in k]
