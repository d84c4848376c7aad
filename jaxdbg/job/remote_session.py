"""Another process's stop, as a Session at the debug host.

:class:`RemoteSession` is what the host's backend (prompt, script, panel) drives, so
frontends stay the same thin views. It holds the stop's frames with their source and
no values; a command line runs in the owner's Session (``p``, ``pp``, statements,
``up`` / ``down``, ``locals``, ``sharding``, completion) and its Output comes back; the
panel's locals rows are made there too (:meth:`local_rows`).
The commands that end the stop or change breakpoint state (``continue``, ``continue
all``, ``skip``, ``quit``, ``disable``, ``enable``, ``ignore``, ``condition``, ``log``,
``breakpoints``) run here, on the host's breakpoint state, which admits every process's
stops: so they apply to the same breakpoint on every process.
"""

from __future__ import annotations

from typing import Any

from jaxdbg.engine import watches
from jaxdbg.engine.command_table import TABLE, error, split_command
from jaxdbg.engine.outputs import Output, Resume
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import array_picture
from jaxdbg.internals import coordination
from jaxdbg.job import membership as job_mod
from jaxdbg.job import message_signing, remote_stops
from jaxdbg.runtime import phrases

# Commands answered by the host's own state (their primary names in the table).
HOST_COMMANDS = frozenset(
    {
        "continue",
        "skip",
        "quit",
        "ca",
        "disable",
        "enable",
        "ignore",
        "condition",
        "log",
        "breakpoints",
        "help",
        "watch",
        "unwatch",
    }
)


class OwnerGone(Exception):
    """The process that owns the stop left the job."""


class RemoteSession(Session):
    """A stop of process ``owner``, served here, its commands run there."""

    def __init__(self, job: job_mod.Job, announcement: dict[str, Any], info: StopInfo) -> None:
        frames = [remote_stops.frame_from_skeleton(f) for f in announcement["frames"]]
        super().__init__(frames, info)
        self.job = job
        self.stop = str(announcement["stop"])
        self.owner = int(announcement["process"])
        self.index = int(announcement.get("index") or 0)
        self.gone: str | None = None  # why the owner's stop ended without us
        self._number = 0

    # -- the owner's side ---------------------------------------------------------
    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.gone is not None:
            raise OwnerGone(self.gone)
        number, self._number = self._number, self._number + 1
        try:
            self.job.write(f"{self.stop}/in/{number}", request)
        except Exception as e:  # the service itself ended
            self.gone = (
                f"{self.job.label(self.owner)} can no longer be reached ({str(e).splitlines()[0]}), so its stop ended"
            )
            raise OwnerGone(self.gone) from None
        while True:
            try:
                reply = self.job.read(f"{self.stop}/out/{number}", job_mod.WAIT_SLICE_S)
            except coordination.Timeout:
                if self._owner_finished():
                    # The owner ended the stop and deleted its keys, the reply to our
                    # `end` with them, before our get for that reply reached the store.
                    if request.get("op") == "end":
                        return {"ended": True}
                    self.gone = f"{self.job.label(self.owner)} has ended its stop"
                    raise OwnerGone(self.gone) from None
                self._resend_if_replaced(f"{self.stop}/in/{number}", request)
                if not self.job.alive(self.owner):
                    self.gone = (
                        f"{self.job.label(self.owner)} is gone (its heartbeat in the "
                        "job's store stopped), so its stop ended"
                    )
                    self.job.delete(f"{self.stop}/")
                    self.job.delete(f"stops/{self.stop}")
                    raise OwnerGone(self.gone) from None
                continue
            except message_signing.Refused:
                continue  # reported once; the owner's reply at this number still counts
            except Exception as e:  # the service itself ended (the job is shutting down)
                self.gone = (
                    f"{self.job.label(self.owner)} can no longer be reached (the job's "
                    f"coordination service ended: {str(e).splitlines()[0]}), so its stop ended"
                )
                raise OwnerGone(self.gone) from None
            # Not deleted one by one: that would cost a store call per command; the owner
            # deletes the stop's keys together when it ends.
            return reply

    def _owner_finished(self) -> bool:
        """Whether the owner has finished with this stop: it deletes the stop's
        announcement last, when its stop has ended (one store call, made only when a
        reply is late)."""
        try:
            return self.job.store.try_get(f"{self.job.namespace}stops/{self.stop}") is None
        except Exception:
            return False  # the service is gone: the next get says so

    def _resend_if_replaced(self, name: str, request: dict[str, Any]) -> None:
        """A forged message written over our request was refused and deleted by the
        owner, taking ours with it: write ours again."""
        try:
            if (
                self.job.try_read(name) is None
                and self.job.store.try_get(self.job.namespace + name.replace("/in/", "/out/")) is None
            ):
                self.job.write(name, request)
        except Exception:
            pass  # the next slice looks again (or finds the service gone)

    def _dispatch(self, stripped: str, pretty: bool) -> Output:
        name, _ = split_command(stripped)
        found = None if stripped.startswith("!") else TABLE.get(name)
        if found is not None and found.name in HOST_COMMANDS:
            return super()._dispatch(stripped, pretty)
        try:
            reply = self._ask({"op": "execute", "line": stripped, "pretty": pretty})
        except OwnerGone as gone:
            self.end(Resume.CONTINUE)
            return error(str(gone))
        self.index = int(reply.get("index", self.index))
        return remote_stops.output_from_message(reply["output"])

    def watch_values(self, expressions: list[str], hit: int | None) -> list[watches.WatchValue]:
        """Evaluated in the owner's innermost frame; the watches and their histories stay
        here, in the host's book, with the values of every process's stops."""
        if not expressions:
            return []
        try:
            reply = self._ask({"op": "watch_values", "expressions": list(expressions), "hit": hit})
        except OwnerGone:
            return []
        return [remote_stops.watch_value_from_message(v) for v in reply.get("values") or [] if isinstance(v, dict)]

    def screen(self, condition: str, template: str) -> bool:
        """Whether ``condition`` ("": none) holds in the owner's innermost frame; where
        it does and ``template`` is set, the owner writes that logpoint's line to the
        print log (which brings it here, among that process's rows). A stop whose owner
        is gone is passed."""
        try:
            reply = self._ask({"op": "screen", "condition": condition, "template": template})
        except OwnerGone:
            return False
        return bool(reply.get("holds"))

    def complete(self, text: str) -> list[str]:
        try:
            return [str(c) for c in self._ask({"op": "complete", "text": text})["completions"]]
        except OwnerGone:
            return []

    def locals_table(self, names: list[str] | None = None, empty: str = phrases.NO_LOCALS) -> Output:
        # Made by the owner, where the values are; only `args` asks for some names, and a
        # typed `args` goes to the owner as it is.
        return self.execute("locals" if names is None else "args")

    def local_names(self) -> list[str]:
        try:
            reply = self._ask({"op": "local_names", "frame": self.index})
        except OwnerGone:
            return []
        return [str(name) for name in reply.get("names") or []]

    def local_rows(self, start: int, count: int, *, lazy: bool = True) -> list[dict[str, Any]]:
        """The owner's rows, summarised there."""
        try:
            reply = self._ask(
                {"op": "local_rows", "frame": self.index, "start": int(start), "count": int(count), "lazy": bool(lazy)}
            )
        except OwnerGone:
            return []
        return [dict(row) for row in reply.get("rows") or [] if isinstance(row, dict)]

    # Opening a row: the owner makes what it shows from the value, only that travels.
    def _ask_row(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = self._ask({**request, "frame": self.index})
        except OwnerGone as gone:
            raise LookupError(str(gone)) from None
        if "picture_error" in reply:
            raise array_picture.PictureError(str(reply["picture_error"]))
        if "error" in reply:
            raise LookupError(str(reply["error"]))
        return reply

    def row_children(self, path: Any, limit: int) -> tuple[list[dict[str, Any]], int]:
        reply = self._ask_row({"op": "row_children", "path": list(path), "limit": int(limit)})
        return [dict(row) for row in reply["rows"]], int(reply["total"])

    def row_in_full(self, path: Any) -> dict[str, Any]:
        return dict(self._ask_row({"op": "row_in_full", "path": list(path)})["row"])

    def row_picture(
        self,
        path: Any,
        *,
        large: bool = False,
        axes: tuple[int, int] | None = None,
        indices: dict[int, int] | None = None,
        sampling: Any = None,
    ) -> tuple[str, array_picture.ArrayPicture, str]:
        reply = self._ask_row(
            {
                "op": "row_picture",
                "path": list(path),
                "large": large,
                "axes": list(axes) if axes is not None else None,
                "indices": {str(k): v for k, v in indices.items()} if indices is not None else None,
                "sampling": array_picture.Sampling(sampling).value if sampling is not None else None,
            }
        )
        return str(reply["label"]), remote_stops.picture_from_message(reply["picture"]), str(reply["stats"])

    def visible_locals(self) -> dict[str, Any]:
        return {}  # the values stay with the owner; 'locals' shows their table

    def finish_remotely(self, how: Resume, *, interrupted: int = 0, passes: dict[str, Any] | None = None) -> None:
        """Tell the owner how its stop ended (it then resumes or quits there);
        ``interrupted``: the number of the host's interrupt that ended it (0: none),
        which the owner says once; ``passes``: the host's answer on the next stops of
        its breakpoint, which the owner may decide itself (host_passes.grant)."""
        if self.gone is not None:
            return
        try:
            self._ask({"op": "end", "resume": how.value, "interrupted": interrupted, "passes": passes})
        except OwnerGone:
            pass
