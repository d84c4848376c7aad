"""``save PATH`` and ``jaxdbg.open_stop(PATH)``: a stop in one file, reopened anywhere.

The file is an ``.npz`` (a zip of ``.npy`` files, which numpy reads without pickle):

- ``metadata``: UTF-8 JSON bytes: the format name and :data:`VERSION`, the banner,
  the breakpoint (number, hit, condition, log template), the stop's context (reason,
  batch, device, mesh), the frames (file, line, function, every source line, the
  locals and their shardings), the selected frame and the breakpoint's watches with
  their values over hits (a pytree watch's per-leaf norms and NaN / Inf counts as three
  arrays, its key paths once per tree structure);
- ``array_N``: each array local (and each array inside a dict / list / tuple local) as
  its raw bytes (``uint8``); the metadata names its dtype and shape, so bfloat16 and
  the other ml_dtypes types come back as themselves.

Other values are kept as JSON where they are JSON (None, bool, int, float, str) and as
their repr otherwise; module globals (``np``, ``jnp``) are kept by name when they are
one of :data:`REIMPORTABLE`. Opening a file never runs code from it: ``np.load`` with
``allow_pickle=False``, ``json.loads``, dtypes from a fixed list. Everything is read and
checked before a session is made: a corrupt, truncated or newer file raises
:class:`SavedStopError` and nothing opens.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import os
import types
import zipfile
from typing import Any, Mapping

import numpy as np

from jaxdbg.engine import breakpoint_state, registry, watches
from jaxdbg.engine.command_table import ArgumentKind, command, error
from jaxdbg.engine.frames import Frame
from jaxdbg.engine.outputs import Output, OutputKind
from jaxdbg.engine.session import Session
from jaxdbg.engine.stop_info import StopInfo
from jaxdbg.engine.values import summaries
from jaxdbg.engine.values.saved_values import Reader, SavedStopError, Writer, fail
from jaxdbg.engine.watches import WatchBook
from jaxdbg.runtime.guarded_calls import format_exception

FORMAT = "jaxdbg-saved-stop"
VERSION = 1
METADATA = "metadata"
#: Modules a frame's globals may name that reopen as themselves (imported, never a user file).
REIMPORTABLE = frozenset(
    {"numpy", "jax", "jax.numpy", "jax.lax", "jax.nn", "jax.random", "jax.tree_util", "math", "ml_dtypes"}
)


def _modules(frame: Frame) -> dict[str, str]:
    return {
        name: v.__name__
        for name, v in frame.globals.items()
        if isinstance(v, types.ModuleType) and v.__name__ in REIMPORTABLE
    }


def _watch_json(w: watches.Watch, writer: Writer) -> dict:
    return {
        "expression": w.expression,
        "leaves": _leaves_json(w.values, writer),
        "values": [
            {
                "hit": v.hit,
                "text": v.text,
                "number": None if v.number is None else repr(v.number),
                "stats": None
                if v.stats is None
                else {
                    "min": _num(v.stats.min),
                    "max": _num(v.stats.max),
                    "mean": _num(v.stats.mean),
                    "nan_count": v.stats.nan_count,
                    "inf_count": v.stats.inf_count,
                },
                "shape": None if v.shape is None else list(v.shape),
                "dtype": v.dtype,
                "error": v.error,
            }
            for v in w.values
        ],
    }


def _leaves_json(values: list[watches.WatchValue], writer: Writer) -> dict | None:
    """A pytree watch's per-leaf numbers at the hits that kept them: the key paths once
    per tree structure, the numbers as three arrays (every hit's, one after another)."""
    layouts: list[tuple[str, ...]] = []
    hits, kept = [], []
    for i, v in enumerate(values):
        if v.leaves is None:
            continue
        if not layouts or (v.leaves.paths is not layouts[-1] and v.leaves.paths != layouts[-1]):
            layouts.append(v.leaves.paths)
        hits.append([i, len(layouts) - 1])
        kept.append(v.leaves)
    if not kept:
        return None
    return {
        "paths": [list(paths) for paths in layouts],
        "hits": hits,  # [position in "values", its layout in "paths"]
        "norms": writer.array(np.concatenate([k.norms for k in kept]).astype(np.float64)),
        "nans": writer.array(np.concatenate([k.nans for k in kept]).astype(np.int64)),
        "infs": writer.array(np.concatenate([k.infs for k in kept]).astype(np.int64)),
    }


def _num(x: Any) -> str | None:
    return None if x is None else repr(complex(x) if isinstance(x, complex) else float(x))


def stop_metadata(session: Session, writer: Writer) -> dict:
    info = session.info
    number = info.breakpoint_id
    row = next((r for r in breakpoint_state.rows() if r.number == number), None)
    book = session.watch_book if session.watch_book is not None else watches.LIVE
    frames = []
    for f in session.frames:
        frames.append(
            {
                "filename": f.filename,
                "lineno": f.lineno,
                "function": f.function,
                "first_lineno": f.first_lineno,
                "source": list(f.source),
                "locals": {str(k): writer.value(v) for k, v in _saved_locals(f).items()},
                # where each array was, as the stop showed it: a reopened one is on this
                # machine's default device, its sharding column says where it came from
                "shardings": {**_runtime_shardings(f), **dict(f.shardings)},
                "traced": sorted(f.traced),
                "modules": _modules(f),
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "banner": session.banner(),
        "selected": session.index,
        "info": {
            "reason": info.reason,
            "batch_index": list(info.batch_index),
            "batch_size": list(info.batch_size),
            "device": info.device,
            "device_axes": [list(a) for a in info.device_axes],
            "mesh": info.mesh,
            "breakpoint": number,
            "hit": info.hit,
        },
        "breakpoint": None
        if row is None
        else {
            "number": row.number,
            "location": row.location,
            "function": row.function,
            "hits": row.hits,
            "condition": row.condition,
            "log_template": row.log_template,
        },
        "frames": frames,
        "watches": [_watch_json(w, writer) for w in book.watches(number)] if number is not None else [],
    }


def _runtime_shardings(frame: Frame) -> dict[str, str]:
    found = {}
    for name, value in _saved_locals(frame).items():
        label = summaries.describe_sharding(value) if summaries.is_array(value) else None
        if label:
            found[str(name)] = label
    return found


def _saved_locals(frame: Frame) -> Mapping[str, Any]:
    """What a frame's table shows: a module frame's globals without modules and private names."""
    if not frame.is_module_code:
        return frame.locals
    return {
        k: v
        for k, v in frame.locals.items()
        if not k.startswith("_") and not isinstance(v, types.ModuleType) and not callable(v)
    }


def save(session: Session, path: str) -> str:
    """Write ``session``'s stop to ``path`` (``.npz`` added when it has no extension);
    returns the path written. The file appears whole or not at all."""
    path = os.path.expanduser(path)
    if not os.path.splitext(path)[1]:
        path += ".npz"
    writer = Writer()
    metadata = json.dumps(stop_metadata(session, writer), allow_nan=False)
    arrays = {METADATA: np.frombuffer(metadata.encode("utf-8"), dtype=np.uint8), **writer.arrays}
    partial = f"{path}.partial"
    try:
        with open(partial, "wb") as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    return path


@command(
    "save",
    usage="save path",
    summary="Write this stop (frames, source, locals with arrays, watches) to one .npz file; "
    "jaxdbg.open_stop(path) reopens it anywhere.",
    argument=ArgumentKind.PATH,
)
def _save(s: Session, arg: str) -> Output:
    if not arg:
        return error("save needs a file name: save stop.npz")
    try:
        path = save(s, arg.strip().strip("'\""))
    except OSError as e:
        return error(f"could not write {arg!r}: {format_exception(e)}")
    return Output(OutputKind.TEXT, f"Saved the stop to {path}; jaxdbg.open_stop({path!r}) reopens it.")


def _module_globals(modules: dict) -> dict[str, Any]:
    found = {}
    for name, module in modules.items():
        if module in REIMPORTABLE:
            found[str(name)] = importlib.import_module(module)
    return found


def _leaf_norms(data: dict | None, count: int, reader: Reader) -> dict[int, watches.LeafNorms]:
    """The per-leaf numbers :func:`_leaves_json` wrote, by position in the values."""
    if data is None:
        return {}
    layouts = [tuple(str(p) for p in paths) for paths in data["paths"]]
    norms, nans, infs = (reader.host_array(data[name]) for name in ("norms", "nans", "infs"))
    if norms.dtype != np.float64 or nans.dtype != np.int64 or infs.dtype != np.int64:
        raise fail(reader.path, "a watch's leaf norms have the wrong dtype")
    found, start = {}, 0
    for position, layout in data["hits"]:
        paths = layouts[int(layout)]
        end = start + len(paths)
        if not 0 <= int(position) < count or end > norms.size or norms.size != nans.size or nans.size != infs.size:
            raise fail(reader.path, "a watch's leaf norms do not match its values")
        found[int(position)] = watches.LeafNorms(paths, norms[start:end], nans[start:end], infs[start:end])
        start = end
    if start != norms.size:
        raise fail(reader.path, "a watch's leaf norms do not match its values")
    return found


def _watch_values(entries: list, leaves: dict[int, watches.LeafNorms]) -> list[watches.WatchValue]:
    def f(x: Any) -> float | None:
        return None if x is None else float(x)

    values = []
    for position, v in enumerate(entries):
        stats = v.get("stats")
        values.append(
            watches.WatchValue(
                v.get("hit"),
                str(v.get("text", "")),
                f(v.get("number")),
                None
                if stats is None
                else summaries.ArrayStats(
                    f(stats["min"]),
                    f(stats["max"]),
                    None
                    if stats["mean"] is None
                    else (complex(stats["mean"]) if "j" in stats["mean"] else float(stats["mean"])),
                    int(stats["nan_count"]),
                    int(stats["inf_count"]),
                ),
                None if v.get("shape") is None else tuple(v["shape"]),
                v.get("dtype"),
                v.get("error"),
                leaves.get(position),
            )
        )
    return values


@dataclasses.dataclass
class SavedStop:
    """A saved stop, read and checked: what :func:`open_stop` opens a session on."""

    path: str
    frames: list[Frame]
    info: StopInfo
    selected: int
    banner: str
    watches: list[watches.Watch]
    breakpoint: dict | None

    def watch_book(self) -> WatchBook:
        """The saved watches in a book of their own (never this process's)."""
        book = WatchBook()
        if self.info.breakpoint_id is not None:
            book.load(self.info.breakpoint_id, self.watches)
        return book

    def session(self) -> Session:
        session = Session(self.frames, self.info)
        session.index = self.selected
        session.watch_book = self.watch_book()
        return session


def load(path: str) -> SavedStop:
    """Read ``path`` whole; SavedStopError when it is not a stop this version can open."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            content = f.read()
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except OSError as e:
        raise SavedStopError(f"could not read {path}: {format_exception(e)}") from None
    except (ValueError, zipfile.BadZipFile, EOFError, KeyError) as e:
        raise fail(path, f"the archive is corrupt or truncated ({format_exception(e)})") from None
    if METADATA not in arrays:
        raise fail(path, "it has no metadata")
    try:
        meta = json.loads(arrays[METADATA].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise fail(path, f"its metadata is not JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise fail(path, "it was not written by jaxdbg's save")
    version = meta.get("version")
    if not isinstance(version, int) or version > VERSION or version < 1:
        raise fail(
            path,
            f"it has format version {version!r}; this jaxdbg reads version "
            f"{VERSION} (a newer jaxdbg wrote it: upgrade to open it)",
        )
    try:
        return _saved_stop(path, meta, Reader(path, arrays))
    except SavedStopError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise fail(path, f"its metadata is malformed ({format_exception(e)})") from None


def _saved_stop(path: str, meta: dict, reader: Reader) -> SavedStop:
    frames = []
    for f in meta["frames"]:
        module_globals = _module_globals(f.get("modules", {}))
        frames.append(
            Frame(
                str(f["filename"]),
                int(f["lineno"]),
                str(f["function"]),
                {str(k): reader.value(v) for k, v in f["locals"].items()},
                module_globals,
                [str(line) for line in f["source"]],
                int(f["first_lineno"]),
                {str(k): str(v) for k, v in f["shardings"].items()},
                frozenset(str(n) for n in f["traced"]),
            )
        )
    if not frames:
        raise fail(path, "it has no frames")
    i = meta["info"]
    info = StopInfo(
        reason=i.get("reason") or None,
        note=f"reopened from {os.path.basename(path)}",
        nothing_to_quit="a reopened stop runs nothing",
        batch_index=tuple(i["batch_index"]),
        batch_size=tuple(i["batch_size"]),
        device=i["device"],
        device_axes=tuple((str(a), int(b)) for a, b in i["device_axes"]),
        mesh=i["mesh"],
        breakpoint_id=i["breakpoint"],
        hit=i["hit"],
    )
    selected = int(meta.get("selected", 0))
    if not 0 <= selected < len(frames):
        selected = 0
    saved_watches = [
        watches.Watch(
            str(w["expression"]), _watch_values(w["values"], _leaf_norms(w.get("leaves"), len(w["values"]), reader))
        )
        for w in meta.get("watches", [])
    ]
    return SavedStop(path, frames, info, selected, str(meta.get("banner", "")), saved_watches, meta.get("breakpoint"))


def open_stop(path: str, *, backend: str | None = None, **backend_options: Any) -> None:
    """Reopen a stop written by ``save PATH``: navigation, ``p`` / ``pp``, locals and the
    watches' histories, in the chosen backend (the panel in a notebook, else the prompt).

    Works without the program that stopped: nothing of it is imported or run. Raises
    :class:`SavedStopError` for a file that is corrupt, truncated or from a newer jaxdbg.
    """
    saved = load(path)
    registry.check_options(backend, backend_options)
    registry.serve_with_backend(saved.session(), backend, backend_options)
