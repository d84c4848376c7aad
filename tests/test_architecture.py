"""The import graph of jaxdbg and jaxdbg_widgets: no cycles, and the core never names
the widgets package.

Every import counts, including those inside functions and under ``if TYPE_CHECKING``:
an import moved into a function still ties the two modules together, it only hides the
cycle from the interpreter. ``from pkg import name`` is an edge to ``pkg.name`` when
that is a module, else to ``pkg``; ``import a.b.c`` is an edge to ``a.b.c`` only (the
parents' ``__init__`` files run too, but they hold re-exports, and ``jaxdbg/__init__.py``
is itself a node: a module that imports from ``jaxdbg`` depends on all of it).

It also checks that imports go down the layers, and that the core never names the
widgets packages (jaxdbg finds jaxdbg_widgets through its entry point).
"""

from __future__ import annotations

import ast
import functools
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jaxdbg", "jaxdbg_widgets")
# Names the core must never import: it learns about the widgets through entry points.
FORBIDDEN_IN_CORE = ("jaxdbg_widgets", "ipywidgets", "anywidget")


def module_files() -> dict[str, Path]:
    """Every module of the two packages, by dotted name (a package is its __init__)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import statement in the
    file, wherever it sits; relative imports resolved against ``module``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.extend((target, alias.name, node.lineno) for alias in node.names)
    return found


@functools.lru_cache(maxsize=None)
def import_graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line}, within the two packages."""
    modules = module_files()
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for target, name, line in imported_names(module, path):
            submodule = f"{target}.{name}" if name else None
            if submodule in modules:
                target = submodule
            if target in modules and target != module:
                graph[module].setdefault(target, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def shortest_cycle_through(graph, start: str, within: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside one component."""
    previous = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor not in within:
                continue
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if successor not in previous:
                previous[successor] = node
                queue.append(successor)
    raise AssertionError(f"{start} is in a component but on no cycle")


def import_cycles(graph) -> list[list[str]]:
    """A shortest cycle through every module that is on one, each cycle named once
    (rotated to start at its smallest module)."""
    cycles = {}
    for component in strongly_connected(graph):
        members = set(component)
        for module in component:
            cycle = shortest_cycle_through(graph, module, members)
            ring = cycle[:-1]
            first = ring.index(min(ring))
            ring = ring[first:] + ring[:first]
            cycles[tuple(ring)] = ring + [ring[0]]
    return sorted(cycles.values())


def describe(graph, cycle: list[str]) -> str:
    steps = [f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(steps + [cycle[-1]])


def test_the_walker_sees_imports_inside_functions_and_resolves_submodules(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text(
        "def later():\n    from jaxdbg.engine import session\n"
        "    import jaxdbg.views.text\n"
        "from . import html\nfrom ..engine.frames import Frame\n"
    )
    names = imported_names("jaxdbg.views.probe", source)
    assert ("jaxdbg.engine", "session", 2) in names
    assert ("jaxdbg.views.text", None, 3) in names
    assert ("jaxdbg.views", "html", 4) in names
    assert ("jaxdbg.engine.frames", "Frame", 5) in names


def test_the_cycle_finder_names_each_cycle():
    graph = {"a": {"b": 1}, "b": {"a": 2, "c": 3}, "c": {"d": 4}, "d": {"c": 5}, "e": {"a": 6}}
    assert import_cycles(graph) == [["a", "b", "a"], ["c", "d", "c"]]
    assert describe(graph, ["a", "b", "a"]) == "a (line 1) -> b (line 2) -> a"


def test_the_graph_has_the_package_modules():
    graph = import_graph()
    assert "jaxdbg.engine.session" in graph
    assert "jaxdbg_widgets.panel.backend" in graph
    # `from jaxdbg.engine import registry` is an edge to the registry module itself.
    assert "jaxdbg.engine.registry" in graph["jaxdbg_widgets.plugin"]


def test_no_import_cycles():
    graph = import_graph()
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(describe(graph, c) for c in cycles)


# The layers, lowest first: a module imports from its own layer and those below it only.
LAYERS = [
    # The base: JAX's and IPython's private names behind their adapters, the settings,
    # and what every layer uses (where Ctrl-C goes, calling user code safely, notices,
    # the debugger's exceptions and words).
    ("runtime", ("jaxdbg.internals", "jaxdbg.config", "jaxdbg.runtime")),
    # What a stop holds: its frames and what it is, and the program's shardings; and what
    # a frame captures in place of a bound Linen Module or of a value holding traced values
    # (values, kept with the values).
    (
        "stop data",
        (
            "jaxdbg.engine.frames",
            "jaxdbg.engine.stop_info",
            "jaxdbg.engine.program_shardings",
            "jaxdbg.engine.values.linen_modules",
            "jaxdbg.engine.values.traced_holders",
        ),
    ),
    ("values", ("jaxdbg.engine.values",)),  # what the views draw of a value
    ("engine", ("jaxdbg.engine",)),  # the bdb half: Session, breakpoints, serving, registry
    ("commands and replay", ("jaxdbg.commands", "jaxdbg.replay")),  # the pdb half
    ("job", ("jaxdbg.job",)),  # one debugger for a jax.distributed job
    ("views", ("jaxdbg.views",)),
    # what user code calls: breakpoint, print, checkify, post_mortem, visualize_sharding
    ("capture", ("jaxdbg.capture",)),
    ("frontends and ipython", ("jaxdbg.frontends", "jaxdbg.ipython")),
    ("package", ("jaxdbg",)),  # jaxdbg/__init__.py, jaxdbg.demo, jaxdbg.distributed
    ("widgets", ("jaxdbg_widgets",)),
]


def layer_of(module: str) -> int:
    matches = [
        (len(prefix), rank)
        for rank, (_, prefixes) in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(matches)[1]


def upward_imports(graph) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    )


def test_imports_go_down_the_layers():
    """No exceptions: a feature above the engine plugs in through a hook it registers."""
    graph = import_graph()
    wrong = upward_imports(graph)
    assert not wrong, "imports from a higher layer:\n" + "\n".join(
        f"{edge} (line {graph[edge.split(' -> ')[0]][edge.split(' -> ')[1]]}): "
        f"{LAYERS[layer_of(edge.split(' -> ')[0])][0]} imports {LAYERS[layer_of(edge.split(' -> ')[1])][0]}"
        for edge in wrong
    )


# The one core module allowed to name ipywidgets: its private-API adapter, which only
# jaxdbg_widgets calls (private names live in jaxdbg/internals/).
IPYWIDGETS_ADAPTER = "jaxdbg.internals.ipywidgets_api"


def core_imports():
    for module, path in module_files().items():
        if module.split(".")[0] == "jaxdbg":
            for target, name, line in imported_names(module, path):
                yield module, path, target, name, line


@pytest.mark.parametrize("forbidden", FORBIDDEN_IN_CORE)
def test_the_core_never_imports_the_widget_packages(forbidden):
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for module, path, target, name, line in core_imports()
        if target.split(".")[0] == forbidden and not (module == IPYWIDGETS_ADAPTER and forbidden == "ipywidgets")
    ]
    assert not offenders, "\n".join(offenders)


def test_only_the_widgets_package_uses_the_ipywidgets_adapter():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for module, path, target, name, line in core_imports()
        if IPYWIDGETS_ADAPTER in (target, f"{target}.{name}")
    ]
    assert not offenders, "\n".join(offenders)


# A module longer than this, or a folder with more modules, holds more than one concern.
MAX_MODULE_LINES = 500
MAX_FOLDER_MODULES = 20


def test_every_module_is_at_most_500_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in module_files().values()
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {long}"


def test_no_folder_holds_more_than_20_modules():
    folders: dict[str, int] = {}
    for path in module_files().values():
        if path.name != "__init__.py":
            folder = str(path.parent.relative_to(ROOT))
            folders[folder] = folders.get(folder, 0) + 1
    crowded = {folder: n for folder, n in folders.items() if n > MAX_FOLDER_MODULES}
    assert not crowded, f"folders over {MAX_FOLDER_MODULES} modules (one folder per concern): {crowded}"
