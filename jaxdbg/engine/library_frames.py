"""Installed libraries' frames (Flax, Equinox, Optax, anything in site-packages), folded.

Between a user's ``train_step`` and ``loss_fn`` a Flax transform puts five frames of its
own; ``where`` and the panel's frame list show each run of such frames as one row (``…
5 frames in flax``) and ``up`` / ``down`` step over them, as VS Code's "just my code"
does. The stop's own innermost frame and the selected one are never folded, so a
breakpoint inside an installed package still opens there. ``library_frames on`` (the
command), ``%jaxdbg library_frames on`` and ``$JAXDBG_LIBRARY_FRAMES=on`` show them all.
JAX's own frames stay hidden at capture (:mod:`jaxdbg.engine.frames`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Sequence

from jaxdbg import config

#: Directories that hold installed distributions, whatever the platform or installer.
INSTALL_DIRS = ("site-packages", "dist-packages")


@functools.lru_cache(maxsize=4096)
def library_of(filename: str) -> str:
    """The installed library a file belongs to (``flax``), or "" for the user's code."""
    parts = filename.replace("\\", "/").split("/")
    for i in range(len(parts) - 2, -1, -1):  # the innermost install directory
        if parts[i] in INSTALL_DIRS:
            top = parts[i + 1]
            return top[:-3] if top.endswith(".py") else top
    return ""


def shown() -> bool:
    """Whether library frames are listed one by one (the setting)."""
    return config.LIBRARY_FRAMES.get().strip().lower() in config.ON_WORDS


def setting(on: bool) -> str | None:
    """The environment variable's value that shows (``on``) or folds library frames."""
    return "on" if on else None


def set_shown(on: bool) -> None:
    config.LIBRARY_FRAMES.set(setting(on))


@dataclasses.dataclass(frozen=True)
class Fold:
    """A run of library frames ``first`` .. ``last`` shown as one row."""

    first: int
    last: int
    libraries: tuple[str, ...]

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    @property
    def text(self) -> str:
        """``… 5 frames in flax``, ``… 1 frame in optax``."""
        return f"… {self.count} {'frame' if self.count == 1 else 'frames'} in {', '.join(self.libraries)}"


def _foldable(frames: Sequence, index: int, current: int) -> bool:
    frame = frames[index]
    return index not in (0, current) and not getattr(frame, "replay", False) and bool(library_of(frame.filename))


def layout(frames: Sequence, current: int) -> list[int | Fold]:
    """The rows of a frame list: frame indices, and a :class:`Fold` for each run of
    library frames (none when :func:`shown`)."""
    if shown():
        return list(range(len(frames)))
    out: list[int | Fold] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            names = tuple(dict.fromkeys(library_of(frames[i].filename) for i in run))
            out.append(Fold(run[0], run[-1], names))
            run.clear()

    for i in range(len(frames)):
        if _foldable(frames, i, current):
            run.append(i)
            continue
        flush()
        out.append(i)
    flush()
    return out


def step(frames: Sequence, current: int, count: int, *, older: bool) -> int | None:
    """The frame ``count`` steps older (or newer) than ``current``, library frames
    stepped over unless :func:`shown`; None where there is none."""
    folded = not shown()
    order = range(current + 1, len(frames)) if older else range(current - 1, -1, -1)
    stops = [i for i in order if not (folded and _foldable(frames, i, current))]
    if not stops:
        return None
    return stops[min(count, len(stops)) - 1]
