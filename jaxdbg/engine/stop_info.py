"""Why and where a breakpoint stopped, beyond the stack itself."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


@dataclasses.dataclass
class StopInfo:
    """Context shown in every backend's banner or header.

    ``batch_index`` / ``batch_size`` are 0-based indices and sizes per vmap
    level, outermost first; they are shown counted from 1 (``batch 1/3``).
    """

    reason: str | None = None
    batch_index: tuple[int, ...] = ()
    batch_size: tuple[int, ...] = ()
    device: int | None = None
    device_axes: tuple[tuple[str, int], ...] = ()  # (axis name, index) for labels
    placed_on: Any = None  # the jax.Device at that position, when the trace knew it (shard_map)
    # A sharded jit's mesh ("x=8"): the stop sees values gathered from all of it.
    mesh: str | None = None
    waiting: Callable[[], int] = lambda: 0  # other stops queued behind this one
    breakpoint_id: int | None = None  # pdb-style number of the breakpoint (breakpoint_state)
    hit: int | None = None  # how many times that breakpoint has been hit, this one included
    process: str | None = None  # "process 1/4" in a jax.distributed job of several processes
    # A neutral line about the stop that is not why it stopped ("reopened from FILE").
    note: str | None = None
    # What Quit says where no computation is left to stop (a post-mortem, a NaN stop,
    # whose call has failed already, a reopened stop): it leaves the stop, nothing more.
    nothing_to_quit: str | None = None
    # The bytes of an innermost local that this program sends whole to a watch of it at
    # every stop, passed ones too, where a program traced with that watch set would send
    # only its statistics; None for any other name (and no function where none can be).
    sent_whole: Callable[[str], int | None] | None = None

    @property
    def batched(self) -> bool:
        return bool(self.batch_size)

    def batch_label(self) -> str | None:
        if not self.batch_size:
            return None
        return "batch " + ", ".join(f"{i + 1}/{n}" for i, n in zip(self.batch_index, self.batch_size))

    def device_label(self) -> str | None:
        if self.device is None:
            return None
        # Axis positions only help when there are several axes (a 2-D mesh).
        named = [f"{name}={i}" for name, i in self.device_axes if name] if len(self.device_axes) > 1 else []
        return f"device {self.device}" + (f" ({', '.join(named)})" if named else "")

    def place_label(self) -> str | None:
        """``process 1/4 · device 3``: where in the job the stop is."""
        parts = [p for p in (self.process, self.device_label()) if p]
        return " · ".join(parts) if parts else None

    def breakpoint_label(self) -> str | None:
        if self.breakpoint_id is None:
            return None
        return f"breakpoint {self.breakpoint_id}" + (f", hit {self.hit}" if self.hit else "")

    def mesh_label(self) -> str | None:
        """``mesh x=8``: the locals' sharding column names the same mesh."""
        return None if self.mesh is None else f"mesh {self.mesh}"

    def details(self, reason: bool = True) -> str:
        parts = [
            p
            for p in (
                self.breakpoint_label(),
                self.batch_label(),
                self.place_label(),
                self.mesh_label(),
                self.note if reason else None,
                self.reason if reason else None,
            )
            if p
        ]
        waiting = self.waiting()
        if waiting:
            parts.append(f"{waiting} more breakpoint{'s' if waiting != 1 else ''} waiting")
        return "; ".join(parts)
