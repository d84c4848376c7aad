"""A stop served at the job's debug host: the owner's side.

A process that is not the debug host publishes its stop (banner facts, the frames'
source, never a value) at ``stops/<stop>`` and then answers what the host asks, one
numbered request at a time: each command runs here, in this process's own
:class:`~jaxdbg.engine.session.Session`, where the values are, and only its Output
(text, and the structured source or stack) goes back, cut as every view cuts it.
The host ends the stop with an ``end`` request that says how (continue, skip, quit),
and whether the host was interrupted (the stop then ends with DebuggerQuit and says so).

Every wait is a slice of :data:`jaxdbg.job.membership.WAIT_SLICE_S`; between slices the
owner checks that the host is alive. A stop whose host has left the job (it says so
in the store on its way out), or died, ends with DebugHostGone (a DebuggerQuit),
shown as one line that says why, at once for a host that left.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import math
import secrets
import time
from typing import Any

import numpy as np

from jaxdbg.engine import breakpoint_checks, watches
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import FrameRow, Output, OutputKind, Resume, SourceView
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import array_picture, summaries
from jaxdbg.internals import coordination
from jaxdbg.job import host_passes, message_signing
from jaxdbg.job import membership as job_mod
from jaxdbg.runtime.errors import DebugHostGone

# How long a stop waits for the host to say it serves the job (it says so when it
# traces a breakpoint or calls serve_here()) before this process serves it itself.
HOST_READY_S = 10.0
# A frame's source beyond this many lines travels cut (the host shows what came).
MAX_SOURCE_LINES = 5000

_sequence = itertools.count(1)
_in_flight = 0  # this process's stops published at the host and not ended yet


def stops_in_flight() -> int:
    """This process's stops that wait at the debug host, or are served there, now."""
    return _in_flight


def _host_left(job: job_mod.Job, host: int, session: Session) -> DebugHostGone:
    return DebugHostGone(
        f"the debug host (process {host}) has left the job, so the stop of "
        f"{job.label()} at {_place(session)} was not served and its "
        "computation was stopped"
    )


def _place(session: Session) -> str:
    frame = session.frames[0] if session.frames else None  # the breakpoint's own
    return "?" if frame is None else f"{frame.filename}:{frame.lineno}"


# -- what travels -------------------------------------------------------------------
def frame_skeleton(frame: Frame) -> dict[str, Any]:
    return {
        "filename": frame.filename,
        "lineno": frame.lineno,
        "function": frame.function,
        "first_lineno": frame.first_lineno,
        "source": frame.source[:MAX_SOURCE_LINES],
    }


def frame_from_skeleton(data: dict[str, Any]) -> Frame:
    """A frame with the owner's source and no values (the values stay there)."""
    return Frame(
        str(data["filename"]),
        int(data["lineno"]),
        str(data["function"]),
        {},
        {},
        [str(line) for line in data["source"]],
        int(data["first_lineno"]),
    )


_INFO_FIELDS = ("reason", "batch_index", "batch_size", "device", "device_axes", "mesh", "process", "nothing_to_quit")


def info_message(info: StopInfo) -> dict[str, Any]:
    return {name: getattr(info, name) for name in _INFO_FIELDS}


def info_from_message(data: dict[str, Any]) -> StopInfo:
    return StopInfo(
        reason=data.get("reason"),
        batch_index=tuple(data.get("batch_index") or ()),
        batch_size=tuple(data.get("batch_size") or ()),
        device=data.get("device"),
        device_axes=tuple((str(n), int(i)) for n, i in data.get("device_axes") or ()),
        mesh=data.get("mesh"),
        process=data.get("process"),
        nothing_to_quit=data.get("nothing_to_quit"),
    )


def _array_message(values: np.ndarray) -> dict[str, Any]:
    values = np.ascontiguousarray(values)
    return {
        "dtype": values.dtype.str,
        "shape": list(values.shape),
        "data": base64.b64encode(values.tobytes()).decode("ascii"),
    }


def _array_from_message(data: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(str(data["data"]))
    return np.frombuffer(raw, dtype=np.dtype(str(data["dtype"]))).reshape([int(n) for n in data["shape"]]).copy()


def picture_message(pic: array_picture.ArrayPicture) -> dict[str, Any]:
    """An array row's picture as it travels: its cells (cut to the picture's side, as
    the panel shows them), never the array itself."""
    values: np.ndarray = np.asarray(pic.values, dtype=np.float64)
    single = values.astype(np.float32)
    if np.array_equal(single, values, equal_nan=True):
        values = single  # half the size where float32 holds every value exactly
    return {
        "shape": list(pic.shape),
        "dtype": pic.dtype,
        "axes": list(pic.axes),
        "index": list(pic.index),
        "rows": _array_message(pic.rows),
        "cols": _array_message(pic.cols),
        "codes": _array_message(pic.codes),
        "values": _array_message(values),
        "low": pic.low,
        "high": pic.high,
        "sampling": pic.sampling.value if pic.sampling is not None else None,
        "histogram": _array_message(pic.histogram),
        "edges": _array_message(pic.histogram_edges),
        "classes": dict(pic.class_counts),
        "magnitudes": pic.magnitudes,
        "row_cuts": list(pic.row_cuts),
        "col_cuts": list(pic.col_cuts),
        "stats": pic.stats.to_json() if pic.stats is not None else None,
        "slice_nonfinite": pic.slice_nonfinite,
        "nonfinite_kept": pic.nonfinite_kept,
    }


def picture_from_message(data: dict[str, Any]) -> array_picture.ArrayPicture:
    axes = data["axes"]
    return array_picture.ArrayPicture(
        tuple(int(n) for n in data["shape"]),
        str(data["dtype"]),
        (None if axes[0] is None else int(axes[0]), int(axes[1])),
        tuple(None if i is None else int(i) for i in data["index"]),
        _array_from_message(data["rows"]),
        _array_from_message(data["cols"]),
        _array_from_message(data["codes"]),
        _array_from_message(data["values"]).astype(np.float64),
        data["low"],
        data["high"],
        array_picture.Sampling(data["sampling"]) if data.get("sampling") else None,
        _array_from_message(data["histogram"]),
        _array_from_message(data["edges"]),
        {str(k): int(v) for k, v in dict(data["classes"]).items()},
        bool(data["magnitudes"]),
        tuple(int(n) for n in data["row_cuts"]),
        tuple(int(n) for n in data["col_cuts"]),
        summaries.ArrayStats.from_json(data["stats"]) if data.get("stats") else None,
        int(data.get("slice_nonfinite") or 0),
        int(data.get("nonfinite_kept") or 0),
    )


def output_message(output: Output) -> dict[str, Any]:
    """An Output as it travels: its text, and the structured source or stack."""
    data: Any = None
    if output.kind is OutputKind.SOURCE and output.source is not None:
        data = dataclasses.asdict(output.source)
    elif output.kind is OutputKind.WHERE:
        data = [dataclasses.asdict(row) for row in output.frames]
    return {
        "kind": output.kind.value,
        "text": output.text,
        "data": data,
        "resume": output.resume.value if output.resume else None,
        "truncated": output.truncated,
        "printed": output.printed,
    }


def output_from_message(data: dict[str, Any]) -> Output:
    kind = OutputKind(data["kind"])
    structured: Any = None
    if kind is OutputKind.SOURCE and data.get("data"):
        structured = SourceView(**data["data"])
    elif kind is OutputKind.WHERE and data.get("data"):
        structured = [FrameRow(**row) for row in data["data"]]
    resume = Resume(data["resume"]) if data.get("resume") else None
    return Output(
        kind, str(data["text"]), structured, resume, bool(data.get("truncated")), str(data.get("printed") or "")
    )


def watch_value_message(value: watches.WatchValue) -> dict[str, Any]:
    """A watch's value as it travels: small by construction (a number, statistics, text)."""
    data = dataclasses.asdict(dataclasses.replace(value, leaves=None))
    if value.stats is not None:
        data["stats"] = value.stats.to_json()  # JSON has no complex, no named tuple
    if value.leaves is not None:  # JSON has no numpy arrays
        leaves = value.leaves
        data["leaves"] = {
            "paths": list(leaves.paths),
            "norms": [float(x) if math.isfinite(x) else None for x in leaves.norms],
            "nans": leaves.nans.tolist(),
            "infs": leaves.infs.tolist(),
        }
    return data


def watch_value_from_message(data: dict[str, Any]) -> watches.WatchValue:
    stats = data.get("stats")
    if isinstance(stats, dict):
        stats = summaries.ArrayStats.from_json(stats)
    shape = data.get("shape")
    leaves = data.get("leaves")
    return watches.WatchValue(
        hit=data.get("hit"),
        text=str(data.get("text", "")),
        number=data.get("number"),
        stats=stats,
        shape=tuple(shape) if shape is not None else None,
        dtype=data.get("dtype"),
        error=data.get("error"),
        leaves=None
        if not isinstance(leaves, dict)
        else watches.LeafNorms(
            tuple(str(p) for p in leaves["paths"]),
            np.array([math.nan if x is None else x for x in leaves["norms"]], dtype=np.float64),
            np.array(leaves["nans"], dtype=np.int64),
            np.array(leaves["infs"], dtype=np.int64),
        ),
    )


# -- the owner's loop ---------------------------------------------------------------
def host_ready(job: job_mod.Job, host: int) -> bool:
    """Whether ``host`` serves the job's stops, waiting up to HOST_READY_S for it to say so."""
    deadline = time.monotonic() + HOST_READY_S
    while True:
        if job.has_left(host):
            return False
        if job.try_read(f"watching/{host}") is not None:
            return True
        if time.monotonic() > deadline or not job.alive(host):
            return False
        time.sleep(0.05)


def serve_at_host(
    job: job_mod.Job, session: Session, location: tuple[str, int, str] | None, devices: int | None, every_device: bool
) -> Resume | None:
    """Serve ``session`` at the debug host; how it ended, or None when no host serves
    (this process then serves it itself). Raises DebugHostGone when the host left."""
    host = job.host()
    ready = host_ready(job, host)
    if job.has_left(host):
        raise _host_left(job, host, session)
    if not ready:
        job_mod.say_once(
            "no host",
            f"{job.label()}: the debug host (process {host}) does not serve "
            "stops (jaxdbg must trace a breakpoint there, or call "
            "jaxdbg.distributed.serve_here()); serving this stop here",
        )
        return None
    stop = f"p{job.process}-{next(_sequence)}-{secrets.token_hex(4)}"
    job.write(
        f"stops/{stop}",
        {
            "stop": stop,
            "process": job.process,
            "banner": session.banner(),
            "info": info_message(session.info),
            "frames": [frame_skeleton(f) for f in session.frames],
            "breakpoint": list(location) if location else None,
            "devices": devices,
            "every_device": every_device,
            "index": session.index,
        },
    )
    global _in_flight
    _in_flight += 1
    try:
        interrupted = _answer_requests(job, host, stop, session)
    finally:
        _in_flight -= 1
        job.delete(f"stops/{stop}")
        job.delete(f"{stop}/")
    if interrupted:  # once for the stops of this process that one interrupt ended
        job_mod.say_once(
            f"host interrupted {interrupted}",
            f"{job.label()}: the debug host (process {host}) was interrupted; this stop ends with jaxdbg.DebuggerQuit",
        )
    return session.resume


def _answer_requests(job: job_mod.Job, host: int, stop: str, session: Session) -> int:
    """Answer the host's requests until it ends the stop; the number of the host's
    interrupt that ended it, or 0."""
    number, interrupted = 0, 0
    while not session.finished:
        try:
            request = job.read(f"{stop}/in/{number}", job_mod.WAIT_SLICE_S)
        except coordination.Timeout:
            if job.has_left(host):
                raise _host_left(job, host, session) from None
            if not job.alive(host):
                raise DebugHostGone(
                    f"the debug host (process {host}) is gone (its heartbeat in "
                    f"the job's store stopped), so the stop of {job.label()} at "
                    f"{_place(session)} ended and its computation was stopped"
                ) from None
            continue
        except message_signing.Refused:
            continue  # reported once; the host's own request at this number still counts
        except Exception as e:  # the coordination service itself is gone
            raise DebugHostGone(
                f"the job's coordination service is gone ({str(e).splitlines()[0]}), "
                f"so the stop of {job.label()} at {_place(session)} ended and its "
                "computation was stopped"
            ) from None
        job.write(f"{stop}/out/{number}", _answer(session, request))
        number += 1  # each number is used once; serve_at_host deletes them all at the end
        if request.get("op") == "end":
            interrupted = int(request.get("interrupted") or 0)
    return interrupted


def _answer(session: Session, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "execute":
        output = session.execute(str(request.get("line", "")), pretty=bool(request.get("pretty")))
        return {"output": output_message(output), "index": session.index}
    if op == "watch_values":
        hit = request.get("hit")
        values = session.watch_values(
            [str(e) for e in request.get("expressions") or []], int(hit) if isinstance(hit, int) else None
        )
        return {"values": [watch_value_message(v) for v in values]}
    if op == "screen":
        return {"holds": _screened(session, str(request.get("condition") or ""), str(request.get("template") or ""))}
    if op == "complete":
        return {"completions": session.complete(str(request.get("text", "")))}
    if op in ("local_names", "local_rows"):
        return _at_frame(session, request.get("frame"), lambda: _locals_answer(session, request))
    if op in ("row_children", "row_in_full", "row_picture"):
        return _at_frame(session, request.get("frame"), lambda: _opened_row(session, request))
    if op == "end":
        host_passes.accept(session.info.breakpoint_id, request.get("passes"))
        session.end(Resume(request["resume"]))
        return {"ended": True}
    return {"output": output_message(Output(OutputKind.ERROR, f"*** unknown request {op!r}"))}


def _screened(session: Session, condition: str, template: str) -> bool:
    """The host's condition of this stop's breakpoint, evaluated here where the values
    are; where it holds, its log template's line written to the print log."""
    frame, number = session.frames[0], session.info.breakpoint_id or 0
    holds = not condition or breakpoint_checks.holds(number, condition, frame)
    if holds and template and _write_log is not None:
        _write_log(breakpoint_checks.format_template(number, template, frame), frame, session.info)
    return holds


_write_log: breakpoint_checks.LogWriter | None = None


def write_logs_with(write: breakpoint_checks.LogWriter) -> None:
    """How a logpoint's line is written here (the capture layer's print log, which
    sends it on to the debug host as it sends this process's other rows)."""
    global _write_log
    _write_log = write


def _locals_answer(session: Session, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("op") == "local_names":
        return {"names": session.local_names()}
    return {
        "rows": session.local_rows(
            int(request.get("start") or 0), int(request.get("count") or 0), lazy=bool(request.get("lazy", True))
        )
    }


def _opened_row(session: Session, request: dict[str, Any]) -> dict[str, Any]:
    """What opening a row of the host's panel shows, made here from the value; a
    path that names nothing, or a value that cannot be drawn, answers its message."""
    op, path = request.get("op"), request.get("path")
    try:
        if op == "row_children":
            rows, total = session.row_children(path, int(request.get("limit") or 0))
            return {"rows": rows, "total": total}
        if op == "row_in_full":
            return {"row": session.row_in_full(path)}
        axes, indices = request.get("axes"), request.get("indices")
        label, pic, stats = session.row_picture(
            path,
            large=bool(request.get("large")),
            axes=(int(axes[0]), int(axes[1])) if axes else None,
            indices={int(k): int(v) for k, v in indices.items()} if indices else None,
            sampling=array_picture.Sampling(request["sampling"]) if request.get("sampling") else None,
        )
        return {"label": label, "picture": picture_message(pic), "stats": stats}
    except array_picture.PictureError as e:
        return {"picture_error": str(e)}
    except LookupError as e:
        return {"error": str(e)}
    except Exception as e:  # a malformed request or a value's own code: the stop goes on
        return {"error": f"{type(e).__name__}: {e}"}


def _at_frame(session: Session, frame: Any, answer: Any) -> dict[str, Any]:
    """``answer()`` for frame ``frame`` of the stop (the host's panel asks for each
    frame's table), the stop's own selected frame left as it was."""
    here = session.index
    if isinstance(frame, int) and 0 <= frame < len(session.frames):
        session.index = frame
    try:
        return dict(answer())
    finally:
        session.index = here
