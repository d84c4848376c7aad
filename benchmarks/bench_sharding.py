"""How fast jaxdbg draws a sharding layout, side by side with its peers, in one run.

    python benchmarks/bench_sharding.py [--repeat N] [--show]

Part 1 (this process, 8 forced host devices): an (8, 8) array over a 2×4 mesh,
``P('x', 'y')``. Peers: ``jax.debug.visualize_array_sharding`` (rich, printed to a
buffer) and treescope's ``render_array_sharding`` (HTML). jaxdbg: HTML
(``_repr_html_``), rich (printed to a buffer) and plain text.

Part 2 (a subprocess with ``--xla_force_host_platform_device_count=512``): an
8×8×8 mesh; a (64, 64, 64) array over ``P('x', 'y', 'z')`` (JAX's function cannot draw
3-D) and a (1024, 512) array over ``P(('x', 'y'), 'z')``. The terminal rendering's size
is printed to show it stays legible (``--show`` prints it).

Every layout is built from scratch on each call (no caching across calls). Times are
the median of ``--repeat`` runs after two warm-up calls; ratios are to the fastest
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
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
PEERS = ("jax.debug.visualize_array_sharding", "treescope.render_array_sharding (HTML)")


def _time(fn: Callable[[], Any], repeat: int) -> float:
    for _ in range(2):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def _rich_to_buffer(renderable: Any) -> str:
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, width=160, color_system="truecolor").print(renderable)
    return buffer.getvalue()


def _cases(mesh_shape: tuple[int, ...], arrays: list[tuple[str, tuple[int, ...], Any]],
           repeat: int) -> dict[str, Any]:
    import jax
    import numpy as np
    from jax.sharding import NamedSharding

    from jaxdbg.engine.sharding_layout import sharding_view

    try:
        import treescope
    except ImportError:
        treescope = None

    names = ("x", "y", "z")[:len(mesh_shape)]
    mesh = jax.make_mesh(mesh_shape, names)
    results: dict[str, Any] = {}
    for label, shape, spec in arrays:
        x = jax.device_put(np.zeros(shape, np.float32), NamedSharding(mesh, spec))
        timings: dict[str, float | str] = {}

        def jax_visualize() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                jax.debug.visualize_array_sharding(x)

        try:
            timings[PEERS[0]] = _time(jax_visualize, repeat)
        except Exception as e:  # 3-D is not supported by JAX's function
            timings[PEERS[0]] = f"fails: {type(e).__name__}"
        if treescope is not None:
            timings[PEERS[1]] = _time(lambda: treescope.render_array_sharding(x)._repr_html_(), repeat)
        else:
            timings[PEERS[1]] = "not installed"
        timings["jaxdbg HTML"] = _time(lambda: sharding_view(x)._repr_html_(), repeat)
        timings["jaxdbg rich"] = _time(lambda: _rich_to_buffer(sharding_view(x)), repeat)
        timings["jaxdbg text"] = _time(lambda: str(sharding_view(x)), repeat)
        text = str(sharding_view(x))
        lines = text.splitlines()
        results[label] = {"timings": timings, "text_lines": len(lines),
                          "text_width": max(len(line) for line in lines), "text": text}
    return results


def _report(title: str, results: dict[str, Any], show: bool) -> None:
    print(f"\n== {title}")
    for label, result in results.items():
        timings = result["timings"]
        peers = [v for k, v in timings.items() if k in PEERS and isinstance(v, float)]
        fastest = min(peers) if peers else None
        print(f"-- {label}")
        for name, value in timings.items():
            if isinstance(value, float):
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
    return _cases((8, 8, 8), [
        ("(64, 64, 64) over an 8×8×8 mesh, P('x', 'y', 'z')", (64, 64, 64), P("x", "y", "z")),
        ("(1024, 512) over an 8×8×8 mesh, P(('x', 'y'), 'z')", (1024, 512), P(("x", "y"), "z")),
    ], repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--show", action="store_true", help="print the terminal renderings")
    parser.add_argument("--part", choices=("8", "512"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:  # inside a subprocess with its own device count
        print(json.dumps(_part(args.part, args.repeat)))
        return

    results = {}
    for part, devices in (("8", 8), ("512", 512)):
        env = dict(os.environ, JAX_PLATFORMS="cpu",
                   XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, __file__, "--part", part, "--repeat", str(args.repeat)],
                             env=env, capture_output=True, text=True, check=True)
        results[part] = json.loads(out.stdout.strip().splitlines()[-1])
    _report("8 forced host devices", results["8"], args.show)
    _report("512 forced host devices", results["512"], args.show)


if __name__ == "__main__":
    main()
