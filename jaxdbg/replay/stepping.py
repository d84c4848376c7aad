"""``replay``: run the selected frame's function again, eagerly, in a stepping debugger.

At a stop every captured frame holds concrete values, its arguments among them
(:mod:`jaxdbg.replay.inputs` makes the call). The replay calls the function
again under ``jax.disable_jit()`` on its own thread, traced by a ``bdb.Bdb`` (the
engine pdb is built on). Each time the replay pauses, its live frames are shown
above the stop's, marked as a replay, so ``p``, ``locals``, ``where``, ``up`` and
every other command read them; ``step``, ``next``, ``return``, ``until`` and
``continue`` go on; ``quit`` leaves the replay (as in pdb's recursive debugger).
When it returns, raises or is interrupted, the session is back at the stop, whose
frames and values were never touched.

The replay costs nothing until asked for: it uses only what the stop already holds.
"""

from __future__ import annotations

import ast
import bdb
import contextlib
import dataclasses
import functools
import linecache
import os
import queue
import sys
import sysconfig
import threading
import types
from typing import TYPE_CHECKING, Any

import jax

from jaxdbg.engine import command_output, evaluation
from jaxdbg.engine import frames as frames_mod
from jaxdbg.engine.command_table import ArgumentKind, command, error
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.values import summaries, tree_summaries
from jaxdbg.replay.collectives import collective_reached
from jaxdbg.replay.inputs import ReplayCall, ReplayRefused, parse_given, placed_on, replay_call, replay_device
from jaxdbg.runtime import interrupts
from jaxdbg.runtime.guarded_calls import format_exception

if TYPE_CHECKING:
    from jaxdbg.engine.session import Session

BANNER = (
    "Replaying {function} eagerly (jax.disable_jit()) on the values of this stop{where}{on}. "
    "This runs your Python again: prints print and host callbacks run again. "
    "step, next, return, until, continue go on; quit leaves the replay; "
    "the stop itself is unchanged."
)
#: How long an interrupted replay may take to end before it is left behind (under the
#: time after which an interrupted command is given up: interrupts.STUCK_GRACE_S).
INTERRUPT_GRACE_S = 0.5
_POLL_S = 0.05  # how often a wait looks up, so that an interrupt reaches it

_replaying = threading.local()


def replaying() -> bool:
    """Whether this thread runs a replay (a breakpoint reached in it does not stop:
    the replay's own debugger is already stepping through)."""
    return bool(getattr(_replaying, "active", False))


@dataclasses.dataclass
class _Paused:
    frames: list[Frame]
    live: list[types.FrameType]
    note: str


@dataclasses.dataclass
class _Finished:
    value: Any = None
    raised: BaseException | None = None
    where: str = ""  # the innermost user line of the traceback, for a replay that raised
    quit: bool = False


class _Debugger(bdb.Bdb):
    """Traces the replay's thread; each stop hands its frames to the session's thread
    and waits there for the next stepping command."""

    def __init__(self, run: "ReplayRun") -> None:
        super().__init__()
        self._run = run
        self._leaving_collective = False  # a collective's error is on its way out of the replay
        # ``continue`` given inside the stop's statement: (that frame, the statement's lines).
        # Python reports a statement spread over lines again each time its evaluation moves
        # back to a line (a call's arguments, then the call), which must not count as
        # reaching the stop's line anew.
        self.passing: tuple[types.FrameType, range] | None = None

    def break_here(self, frame: types.FrameType) -> bool:
        if self.passing is not None and frame is self.passing[0]:
            if frame.f_lineno in self.passing[1]:
                return False
            self.passing = None  # the statement is done: the stop's line counts again
        return super().break_here(frame)

    def stop_here(self, frame: types.FrameType) -> bool:  # only in the user's own code
        return _is_users(frame) and super().stop_here(frame)

    def user_call(self, frame: types.FrameType, argument_list: Any) -> None:
        pass  # pdb's rule: a call is shown at its first line, not before it

    def user_line(self, frame: types.FrameType) -> None:
        self._leaving_collective = False  # (the user's code caught it and goes on)
        self._run.pause(frame, "")

    def user_return(self, frame: types.FrameType, return_value: Any) -> None:
        if self._leaving_collective:
            return
        self._run.pause(frame, f"--Return-- {_short_repr(return_value)}")

    def user_exception(self, frame: types.FrameType, exc_info: Any) -> None:
        exc = exc_info[1]
        # (the event's traceback: the exception's own holds only the frames passed so far)
        if collective_reached(exc, exc_info[2]) is not None:
            self._leaving_collective = True  # the replay cannot go on past it: it ends, and says why
            return
        self._run.pause(frame, f"--Exception-- {format_exception(exc)}")


def statement_lines(source: list[str], lineno: int) -> range:
    """The lines of the innermost statement of ``source`` (a file's lines) that holds line
    ``lineno``; that line alone when the source does not parse."""
    try:
        tree = ast.parse("".join(source))
    except (SyntaxError, ValueError):
        return range(lineno, lineno + 1)
    best = range(lineno, lineno + 1)
    found = False
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            if not found or len(lines) < len(best):
                best, found = lines, True
    return best


def _short_repr(value: Any, limit: int = 400) -> str:
    """A returned value as a replay says it: its repr, if that is short; a pytree that
    holds arrays (a step's carry, a model and its loss) as its one-line summary, as
    ``locals`` shows it, not as a repr cut in the middle; else its repr cut past ``limit``."""
    try:
        text = repr(value)
    except Exception as e:  # a user __repr__ may fail
        text = f"<repr failed: {format_exception(e)}>"
    if len(text) <= limit:
        return text
    summary = tree_summaries.tree_summary(value) if tree_summaries.holds_arrays(value) else None
    if summary is not None:
        return f"{summaries.type_name(value)} · {summary.line()}"
    return text[:limit] + " ..."


class ReplayRun:
    """One replay of one frame: its thread, its debugger, and the session it shows in."""

    def __init__(self, session: "Session", call: ReplayCall, frame: Frame) -> None:
        self.session = session
        # A pmap / shard_map device's replay runs there, on its values put there.
        self.device = replay_device(session.info)
        self.call = call if self.device is None else placed_on(call, self.device)
        self.frame = frame
        self.stop_frames = session.frames
        self.stop_index = session.index
        self._events: queue.Queue[_Paused | _Finished] = queue.Queue()
        self._commands: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._debugger = _Debugger(self)
        self._root: types.FrameType | None = None  # the replayed function's live frame
        self._buffer: Any = None  # where the replay's prints go (the running command's)
        self._paused: _Paused | None = None
        self._thread = threading.Thread(target=self._main, name="jaxdbg-replay", daemon=True)
        self.abandoned = False

    # -- the replay's thread -------------------------------------------------------
    def _main(self) -> None:
        _replaying.active = True
        debugger = self._debugger
        code = self.frame.code
        if code is not None and self.frame.lineno:  # 'continue' runs to the stop's line
            debugger.set_break(code.co_filename, self.frame.lineno)
        try:
            with command_output.writing_to(self._buffer), jax.disable_jit(), _default_device(self.device):
                value = debugger.runcall(self.call.call)
            self._events.put(_Finished(value))
        except bdb.BdbQuit:
            self._events.put(_Finished(quit=True))
        except BaseException as e:  # the user's code may raise anything, MemoryError included
            self._events.put(_Finished(raised=e, where=_user_line_of(e)))
        finally:
            debugger.clear_all_breaks()
            sys.settrace(None)

    def pause(self, frame: types.FrameType, note: str) -> None:
        """On the replay's thread: show this frame and wait for the next command."""
        if self._root is None:
            self._root = frame
        live = _live_stack(frame, self._root)
        shown = []
        for f in live:
            snapshot = frames_mod.live_frame(f)
            snapshot.replay = True
            shown.append(snapshot)
        self._events.put(_Paused(shown, live, note))
        how, target = self._commands.get()
        self._buffer = target[1]
        debugger = self._debugger
        if how == "step":
            debugger.set_step()
        elif how == "next":
            debugger.set_next(target[0])
        elif how == "return":
            debugger.set_return(target[0])
        elif how == "until":
            debugger.set_until(target[0])
        elif how == "continue":
            statement = self._stop_statement()
            inside = frame.f_code is self.frame.code and frame.f_lineno in statement
            debugger.passing = (frame, statement) if inside else None
            debugger.set_continue()
        else:
            debugger.set_quit()
        # The prints of what runs next belong to the command that ran it on.
        command_output.route_this_thread(self._buffer)

    def _stop_statement(self) -> range:
        """The lines of the statement holding the stop's line (the stop's line alone when
        the source cannot be read)."""
        code, lineno = self.frame.code, self.frame.lineno
        if code is None or not lineno:
            return range(0)
        return statement_lines(linecache.getlines(code.co_filename), lineno)

    # -- the session's thread ------------------------------------------------------
    def start(self) -> Output:
        self._buffer = command_output.current_buffer()
        self._thread.start()
        return self._wait(banner=True)

    def go(self, how: str) -> Output:
        """Resume the paused replay with a stepping command, then wait for it to pause again."""
        paused = self._paused
        assert paused is not None
        frame = self._selected_live_frame(paused)
        self._commands.put((how, (frame, command_output.current_buffer())))
        return self._wait()

    def _selected_live_frame(self, paused: _Paused) -> types.FrameType:
        index = self.session.index
        return paused.live[index] if index < len(paused.live) else paused.live[0]

    def _wait(self, banner: bool = False) -> Output:
        try:
            event = self._next_event()
        except KeyboardInterrupt:
            return self._interrupted()
        if isinstance(event, _Paused):
            self._paused = event
            self.session.frames = event.frames + self.stop_frames
            self.session.index = 0
            shown = self.session.source_around()
            lead = [self.banner()] if banner else []
            if event.note:
                lead.append(event.note)
            if lead:
                note = "\n".join(lead)
                shown = dataclasses.replace(shown, text=f"{note}\n{shown.text}", note=note)
            return shown
        return self._finished(event)

    def _next_event(self) -> _Paused | _Finished:
        while True:
            try:
                return self._events.get(timeout=_POLL_S)
            except queue.Empty:
                if not self._thread.is_alive() and self._events.empty():
                    return _Finished(raised=RuntimeError("the replay's thread ended unexpectedly"))

    def banner(self) -> str:
        info = self.session.info
        where = ", ".join(p for p in (info.batch_label(), info.device_label()) if p)
        return BANNER.format(
            function=self.frame.function,
            where=f" ({where})" if where else "",
            on=f", on {self.device}" if self.device is not None else "",
        )

    def _back_at_the_stop(self) -> str:
        self.session.frames = self.stop_frames
        self.session.index = self.stop_index
        self.session.replay = None
        return f"Back at the stop ({self.session.frame_label()})."

    def _finished(self, event: _Finished) -> Output:
        name = self.frame.function
        if event.quit:
            return Output(OutputKind.TEXT, f"Left the replay of {name}. {self._back_at_the_stop()}")
        if event.raised is not None:
            where = f" at {event.where}" if event.where else ""
            collective = collective_reached(event.raised)
            if collective is not None:
                if collective.caller is not None:  # the line that called it, a lambda's too
                    file, line, function = collective.caller
                    where = f" at {frames_mod.display_filename(file)}:{line} in {function}"
                text = (
                    f"The replay of {name} reached {collective.call()}{where}: {collective.why()}. "
                    f"{self._back_at_the_stop()}"
                )
                return Output(OutputKind.ERROR, f"*** {text}")
            text = f"The replay of {name} raised {format_exception(event.raised)}{where}. {self._back_at_the_stop()}"
            return Output(OutputKind.ERROR, f"*** {text}")
        self.session.scratch["_replay_result"] = event.value
        return Output(
            OutputKind.TEXT,
            f"The replay of {name} returned {_short_repr(event.value)} "
            f"(kept as _replay_result). {self._back_at_the_stop()}",
        )

    def _interrupted(self) -> Output:
        """Ctrl-C while the replay ran: end it there, and keep the stop."""
        interrupts.interrupt_handled()
        self._debugger.set_quit()
        interrupts.raise_in_thread(self._thread.ident, KeyboardInterrupt)
        self._thread.join(INTERRUPT_GRACE_S)
        if self._thread.is_alive():
            self.abandoned = True  # inside one long call: it ends, unseen, when that returns
            self._buffer = None
            message = (
                "The replay is inside a call that cannot be interrupted; it is left to end "
                "on its own, and what it prints is dropped."
            )
        else:
            message = "The replay was interrupted."
        while not self._events.empty():
            self._events.get_nowait()
        return Output(OutputKind.TEXT, f"{message} {self._back_at_the_stop()}")

    def abandon(self) -> None:
        """The stop ends while the replay waits: let its thread end too."""
        if self._paused is not None and self._thread.is_alive():
            self._commands.put(("quit", (None, None)))
        if self.session.replay is self:
            self.session.frames, self.session.index = self.stop_frames, self.stop_index
            self.session.replay = None


def _default_device(device: Any) -> Any:
    return contextlib.nullcontext() if device is None else jax.default_device(device)


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Where installed packages and the standard library live: ``step`` does not go
    into numpy's dispatchers or ``contextlib`` (JAX and jaxdbg are hidden anyway)."""
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(k)}
    return tuple(root + os.sep for root in roots)


def _is_users(frame: types.FrameType) -> bool:
    if frames_mod.is_hidden(frame):
        return False
    filename = frame.f_code.co_filename
    if os.path.isabs(filename) and os.path.realpath(filename).startswith(_library_roots()):
        return False
    # Generated code (namedtuple's, numpy's dispatch, <string>) has no lines to show.
    return bool(frames_mod.source_lines(filename, frame.f_globals))


def _live_stack(frame: types.FrameType, root: types.FrameType) -> list[types.FrameType]:
    """The replay's user frames, innermost first, down to the replayed function's."""
    stack: list[types.FrameType] = []
    current: types.FrameType | None = frame
    while current is not None:
        if _is_users(current):
            stack.append(current)
        if current is root:
            break
        current = current.f_back
    return stack


def _user_line_of(exc: BaseException) -> str:
    """Where in the user's code an exception was raised: the innermost such line."""
    tb = exc.__traceback__
    found = ""
    while tb is not None:
        if not frames_mod.is_hidden(tb.tb_frame):
            code = tb.tb_frame.f_code
            found = f"{frames_mod.display_filename(code.co_filename)}:{tb.tb_lineno} in {code.co_name}"
        tb = tb.tb_next
    return found


# -- the commands ---------------------------------------------------------------------


def _start(s: "Session", arg: str) -> Output:
    if s.replay is not None:
        return error("a replay is already running; quit leaves it")
    frame = s.current
    if frame.replay:
        return error("this is a frame of the replay; 'up' to a frame of the stop to replay it")

    def evaluate(source: str) -> Any:
        try:
            return evaluation.evaluate(source, frame, s.scratch, expression_only=True)
        except SyntaxError as e:
            raise ReplayRefused(f"SyntaxError in {source!r}: {e.msg}") from None
        except evaluation.EvaluationError as e:
            raise ReplayRefused(str(e)) from None

    try:
        call = replay_call(frame, parse_given(arg, evaluate))
    except ReplayRefused as refused:
        return error(f"cannot replay: {refused}")
    run = ReplayRun(s, call, frame)
    s.replay = run
    return run.start()


def _stepping(how: str):
    def run(s: "Session", arg: str) -> Output:
        if s.replay is None:
            return error(
                f"{how} steps through a replay; 'replay' re-runs the selected frame's "
                "function eagerly, to step through it"
            )
        return s.replay.go(how)

    return run


command(
    "replay",
    usage="replay [name=value, ...]",
    summary="Run the selected frame's function again, eagerly, on this stop's values, "
    "and step through it (your Python runs again).",
    argument=ArgumentKind.EXPRESSION,
)(_start)
command("step", "s", usage="step", summary="In a replay: run the current line, stopping in a function it calls.")(
    _stepping("step")
)
command("next", "n", usage="next", summary="In a replay: run the current line, stepping over calls.")(_stepping("next"))
command("return", "r", usage="return", summary="In a replay: run until the selected function returns.")(
    _stepping("return")
)
command("until", "unt", usage="until", summary="In a replay: run until a line past the current one (out of a loop).")(
    _stepping("until")
)
