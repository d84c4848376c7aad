"""How fast jaxdbg draws a sharding layout, side by side with its peers, in one run.

    python benchmarks/bench_sharding.py [--repeat N] [--show] [--quick] [--json PATH]

Part 1 (this process, 8 forced host devices): an (8, 8) array over a 2×4 mesh,
``P('x', 'y')``. Peers: ``jax.debug.visualize_array_sharding`` (rich, printed to a
buffer) and treescope's ``render_array_sharding`` (HTML). jaxdbg: HTML
(``_repr_html_``), rich (printed to a buffer) and plain text.

Part 2 (a subprocess with ``--xla_force_host_platform_device_count=512``): an
8×8×8 mesh; a (64, 64, 64) array over ``P('x', 'y', 'z')`` (JAX's function cannot draw
3-D) and a (1024, 512) array over ``P(('x', 'y'), 'z')``. The terminal rendering's size
is printed to show it stays legible (``--show`` prints it).

Every layout is built from scratch on each call (no caching across calls). Times are
the median of ``--repeat`` interleaved runs after two warm-up rounds; ratios are to the fastest
peer in the same case (below 1.0 means faster than every peer). treescope is
measured when installed (it is not a jaxdbg dependency).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import arguments, finish, interleave, ratio_row, timed  # noqa: E402

PEERS = ("jax.debug.visualize_array_sharding", "treescope.render_array_sharding (HTML)")


def _rich_to_buffer(renderable: Any) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=160, color_system="truecolor").print(renderable)
    return buffer.getvalue()


def _cases(mesh_shape: tuple[int, ...], arrays: list[tuple[str, tuple[int, ...], Any]], repeat: int) -> dict[str, Any]:
    import jax
    import numpy as np
    from jax.sharding import NamedSharding

    from jaxdbg.engine.values.layout_reading import sharding_view

    try:
        import treescope
    except ImportError:
        treescope = None

    names = ("x", "y", "z")[: len(mesh_shape)]
    mesh = jax.make_mesh(mesh_shape, names)
    results: dict[str, Any] = {}
    for label, shape, spec in arrays:
        x = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))
        candidates: dict[str, Callable[[], float]] = {}
        failures: dict[str, str] = {}

        def jax_visualize() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                jax.debug.visualize_array_sharding(x)

        try:
            jax_visualize()
            candidates[PEERS[0]] = lambda: timed(jax_visualize)
        except Exception as e:  # 3-D is not supported by JAX's function
            failures[PEERS[0]] = f"fails: {type(e).__name__}"
        if treescope is not None:
            candidates[PEERS[1]] = lambda: timed(lambda: treescope.render_array_sharding(x)._repr_html_())
        else:
            failures[PEERS[1]] = "not installed"
        candidates["jaxdbg HTML"] = lambda: timed(lambda: sharding_view(x)._repr_html_())
        candidates["jaxdbg rich"] = lambda: timed(lambda: _rich_to_buffer(sharding_view(x)))
        candidates["jaxdbg text"] = lambda: timed(lambda: str(sharding_view(x)))
        timings: dict[str, list[float] | str] = {**interleave(candidates, repeat, warmup=2), **failures}
        text = str(sharding_view(x))
        lines = text.splitlines()
        results[label] = {
            "timings": timings,
            "text_lines": len(lines),
            "text_width": max(len(line) for line in lines),
            "text": text,
        }
    return results


def _report(title: str, results: dict[str, Any], show: bool) -> None:
    print(f"\n== {title}")
    for label, result in results.items():
        timings = result["timings"]
        peers = [statistics.median(v) * 1e3 for k, v in timings.items() if k in PEERS and isinstance(v, list)]
        fastest = min(peers) if peers else None
        print(f"-- {label}")
        for name, value in timings.items():
            if isinstance(value, list):
                value = statistics.median(value) * 1e3
                ratio = f"{value / fastest:5.2f}x fastest peer" if fastest else ""
                print(f"   {name:<42} {value:8.2f} ms   {ratio}")
            else:
                print(f"   {name:<42} {value}")
        print(f"   terminal rendering: {result['text_lines']} lines, {result['text_width']} columns wide")
        if show:
            print(result["text"])


def _part(which: str, repeat: int) -> dict[str, Any]:
    from jax.sharding import PartitionSpec as P

    if which == "8":
        return _cases((2, 4), [("(8, 8) over a 2×4 mesh, P('x', 'y')", (8, 8), P("x", "y"))], repeat)
    return _cases(
        (8, 8, 8),
        [
            ("(64, 64, 64) over an 8×8×8 mesh, P('x', 'y', 'z')", (64, 64, 64), P("x", "y", "z")),
            ("(1024, 512) over an 8×8×8 mesh, P(('x', 'y'), 'z')", (1024, 512), P(("x", "y"), "z")),
        ],
        repeat,
    )


def _rows(part: str, results: dict[str, Any]) -> list:
    """The goals: in the 8-device case jaxdbg's HTML and rich no slower than JAX's function;
    in the 512-device cases its HTML no slower than treescope (when installed)."""
    rows = []
    wanted = (("jaxdbg HTML", PEERS[0]), ("jaxdbg rich", PEERS[0])) if part == "8" else (("jaxdbg HTML", PEERS[1]),)
    for label, result in results.items():
        timings = result["timings"]
        for ours, peer in wanted:
            if isinstance(timings.get(peer), list):
                rows.append(
                    ratio_row(
                        f"sharding layout {label}: {ours.split()[1]}",
                        timings[ours],
                        timings[peer],
                        1.0,
                        unit="ms",
                        baseline_name=f"({peer.split()[0]})",
                    )
                )
    return rows


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--show", action="store_true", help="print the terminal renderings")
    parser.add_argument("--part", choices=("8", "512"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:  # inside a subprocess with its own device count
        print(json.dumps(_part(args.part, args.repeat)))
        return

    results = {}
    repeat = 1 if args.quick else args.repeat
    for part, devices in (("8", 8), ("512", 512)):
        env = dict(
            os.environ,
            JAX_PLATFORMS="cpu",
            XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        )
        out = subprocess.run(
            [sys.executable, __file__, "--part", part, "--repeat", str(repeat)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        results[part] = json.loads(out.stdout.strip().splitlines()[-1])
    _report("8 forced host devices", results["8"], args.show)
    _report("512 forced host devices", results["512"], args.show)
    finish(_rows("8", results["8"]) + _rows("512", results["512"]), args.json)


if __name__ == "__main__":
    main()
