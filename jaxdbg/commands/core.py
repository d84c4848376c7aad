"""The core commands: moving between frames, source, evaluation, locals, continue and quit.

Each is registered in :mod:`jaxdbg.engine.command_table` as any plugin's command would
be; :class:`~jaxdbg.engine.session.Session` holds what they do.
"""

from __future__ import annotations

from typing import Callable

from jaxdbg.commands import sharding as sharding_command
from jaxdbg.commands import show as show_command
from jaxdbg.commands import trees as tree_commands
from jaxdbg.engine import library_frames
from jaxdbg.engine.command_table import TABLE as COMMANDS
from jaxdbg.engine.command_table import ArgumentKind, add_sub_word, command, error
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Output, OutputKind, Resume
from jaxdbg.engine.session import Session
from jaxdbg.replay import inputs as replay_inputs
from jaxdbg.runtime import phrases


def _count(arg: str) -> int | None:
    if not arg:
        return 1
    try:
        n = int(arg)
    except ValueError:
        return None
    return n if n > 0 else None


# -- the core commands (registered in the public table, as any other) -------------
_EXPRESSION, _COUNT = ArgumentKind.EXPRESSION, ArgumentKind.COUNT


@command("where", "w", "bt", usage="where", summary="Show the stack, innermost frame first.")
def _where(s: Session, arg: str) -> Output:
    return s.where()


@command(
    "library_frames",
    usage="library_frames",
    summary="Show the stack as 'where' does, installed libraries' frames listed or folded.",
    argument=ArgumentKind.SUB_WORDS,
)
def _library_frames(s: Session, arg: str) -> Output:
    return s.where()  # the stack as it reads now


def _library_frames_set(on: bool) -> Callable[[Session, str], Output]:
    def run(s: Session, arg: str) -> Output:
        library_frames.set_shown(on)
        return s.where()

    return run


add_sub_word(
    "library_frames", "on", summary="list installed libraries' frames one by one.", run=_library_frames_set(True)
)
add_sub_word(
    "library_frames", "off", summary="fold each run of them into one row (the default).", run=_library_frames_set(False)
)


@command("up", "u", usage="up [count]", summary="Move to an older (calling) frame.", argument=_COUNT)
def _up(s: Session, arg: str) -> Output:
    n = _count(arg)
    return error(f"up takes a positive count, not {arg!r}") if n is None else s.up(n)


@command("down", "d", usage="down [count]", summary="Move to a newer (called) frame.", argument=_COUNT)
def _down(s: Session, arg: str) -> Output:
    n = _count(arg)
    return error(f"down takes a positive count, not {arg!r}") if n is None else s.down(n)


@command(
    "frame",
    "f",
    usage="frame n",
    summary="Select frame n (0 is innermost, as in 'where').",
    argument=ArgumentKind.FRAME_NUMBER,
)
def _frame(s: Session, arg: str) -> Output:
    if not arg:
        return error(f"frame needs a frame number, 0 (innermost) to {len(s.frames) - 1}; 'where' lists them")
    try:
        return s.select(int(arg))
    except ValueError:
        return error(f"frame takes a frame number, not {arg!r}")


@command("list", "l", usage="list", summary="Show source around the current line; again: the next lines.")
def _list(s: Session, arg: str) -> Output:
    return s.list_source()


@command("ll", "longlist", usage="ll", summary="Show the whole current function.")
def _longlist(s: Session, arg: str) -> Output:
    return s.function_source()


@command("p", usage="p expr", summary="Evaluate expr and print its repr.", argument=_EXPRESSION)
def _print(s: Session, arg: str) -> Output:
    return s.evaluate(arg, expression_only=True)


@command(
    "pp",
    usage="pp expr [--full]",
    summary="Pretty-print expr; a pytree as a tree of leaf summaries (--full: every element).",
    argument=_EXPRESSION,
)
def _pretty(s: Session, arg: str) -> Output:
    return tree_commands.pretty(s, arg)


@command("whatis", usage="whatis expr", summary="Show the type (and shape, dtype) of expr.", argument=_EXPRESSION)
def _whatis(s: Session, arg: str) -> Output:
    return s.whatis(arg) if arg else error("whatis needs an expression")


@command(
    "tree",
    usage="tree expr [depth]",
    summary="Walk a pytree (Module, params, optimizer state) by key path, depth levels deep.",
    argument=_EXPRESSION,
)
def _tree(s: Session, arg: str) -> Output:
    return tree_commands.tree(s, arg)


@command("locals", usage="locals", summary="Table of the frame's locals with array summaries.")
def _locals(s: Session, arg: str) -> Output:
    return s.locals_table()


@command("args", "a", usage="args", summary="Table of the function's arguments (pdb's args), as locals shows them.")
def _args(s: Session, arg: str) -> Output:
    names = _argument_names(s.current)
    if names is None:  # a frame whose code was not kept: every local
        return s.locals_table()
    return s.locals_table(names, empty=phrases.NO_ARGUMENTS)


def _argument_names(frame: Frame) -> list[str] | None:
    """The function's parameters in the order of its code, as pdb lists them (keyword-only
    ones before ``*args``); none for module code; None where the code is unknown."""
    if frame.is_module_code:
        return []
    if frame.code is None:
        return None
    positional, varargs, keyword_only, varkw = replay_inputs.argument_names(frame.code)
    return positional + keyword_only + [name for name in (varargs, varkw) if name]


@command(
    "sharding",
    usage="sharding expr",
    summary="Show how an array (or a Mesh, or 'sharding, shape') is laid out over devices.",
    argument=_EXPRESSION,
)
def _sharding(s: Session, arg: str) -> Output:
    return sharding_command.run(s, arg)


@command(
    "show",
    usage="show expr",
    summary="Draw an array (or each array of a pytree) as a heatmap: NaN, Inf and zero marked.",
    argument=_EXPRESSION,
)
def _show(s: Session, arg: str) -> Output:
    return show_command.run(s, arg)


# 'continue all' is declared as a sub-word where the many-stops state lives
# (jaxdbg.commands.breakpoints).
@command(
    "continue", "c", "cont", usage="continue", summary="Leave the debugger and resume.", argument=ArgumentKind.SUB_WORDS
)
def _continue(s: Session, arg: str) -> Output:
    if s.replay is not None and not arg:  # in a replay: run it on (to the stop's line or its end)
        return s.replay.go("continue")
    return s.end(Resume.CONTINUE)


@command("skip", usage="skip", summary="Continue and skip the remaining elements of this vmap batch.")
def _skip(s: Session, arg: str) -> Output:
    if not s.info.batched:
        return error("skip works inside vmap; this stop is not batched (use continue)")
    return s.end(Resume.SKIP)


@command("quit", "q", "exit", usage="quit", summary="Stop the computation with jaxdbg.DebuggerQuit.")
def _quit(s: Session, arg: str) -> Output:
    if s.replay is not None:  # as in pdb's recursive debugger: quit leaves the replay
        return s.replay.go("quit")
    return s.end(Resume.QUIT)


@command(
    "help",
    "h",
    "?",
    usage="help [command]",
    summary="List commands, or describe one.",
    argument=ArgumentKind.COMMAND_NAME,
)
def _help(s: Session, arg: str) -> Output:
    if arg:
        described = COMMANDS.get(arg)
        if described is None:
            return error(f"no command {arg!r}; type 'help' for the list")
        entry = described.help()
        aliases = ", ".join(entry.names)
        return Output(OutputKind.HELP, f"{entry.usage}\n    {entry.summary}\n    aliases: {aliases}", [entry])
    entries = [c.help() for c in COMMANDS.commands()]
    lines = [f"{entry.usage:<16} {entry.summary}" for entry in entries]
    lines.append(
        "A line that starts with a command word is that command, even where a local has "
        "its name (p l and p(l) print l)."
    )
    lines.append(
        "Start a line with ! to run it as Python: !p = 3, !c. Any other line is evaluated "
        "as a Python expression or statement in the current frame."
    )
    return Output(OutputKind.HELP, "\n".join(lines), entries)
