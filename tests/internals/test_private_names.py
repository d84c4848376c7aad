"""Private names of other libraries are used only in ``jaxdbg/internals/``.

Scans the sources of ``jaxdbg`` and ``jaxdbg_widgets`` (outside ``internals/``) and
fails on:

- an import of a private module or name of jax, jaxlib, IPython, ipykernel,
  ipywidgets, traitlets or comm (``from jax._src import core``);
- ``obj._name`` where ``_name`` is not defined by the module itself: a private
  attribute of a library's object (``err._pred``, ``shell._showtraceback``) or of
  another jaxdbg module (``frames._hidden_file_test``);
- ``from jaxdbg.x import _name``: another jaxdbg module's private name;
- a dunder outside :data:`PUBLIC_DUNDERS`.

Such a use goes behind a named, version-guarded function in ``jaxdbg/internals/``,
with a test in ``tests/internals/`` that fails when the library moves it.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("jaxdbg", "jaxdbg_widgets")
LIBRARIES = {"jax", "jaxlib", "IPython", "ipykernel", "ipywidgets", "traitlets", "comm"}

# Dunders that are the language's or a library's documented, public protocol.
PUBLIC_DUNDERS = {
    "__name__",
    "__qualname__",
    "__doc__",
    "__module__",
    "__wrapped__",
    "__traceback__",
    "__init__",
    "__enter__",
    "__exit__",
    "__getitem__",
    "__file__",
    "__path__",
    "__version__",
    "__self__",
    "__stderr__",
    "__stdout__",
    "__code__",
    "__class__",
    # A user-defined function's documented attributes (the data model's "Special attributes").
    "__closure__",
    "__globals__",
    "__defaults__",
    "__kwdefaults__",
    # Python's documented data model: a method's function, a class's MRO, constructor and
    # attribute access (which a slot's value is read and set through).
    "__func__",
    "__mro__",
    "__new__",
    "__getattribute__",
    "__setattr__",
}
# Single-underscore names that are public by their library's documentation.
PUBLIC_PRIVATE_LOOKING = {
    "_fields",
    "_asdict",
    "_replace",
    "_make",  # collections.namedtuple's API
    "_getframe",
    "_current_frames",  # CPython's documented debugging hooks (sys)
    "_exit",  # os._exit: the documented way to end a process without its exit handlers
}
# Uses that another change removes; an entry here is a debt, not a permission.
PENDING: set[tuple[str, str]] = set()  # debts: (file, name) pairs still to move


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _is_private(name: str) -> bool:
    return name.startswith("_") and not _is_dunder(name)


def _is_display_protocol(name: str) -> bool:
    """IPython's rich display methods (``_repr_html_``, ``_repr_mimebundle_``...) are public."""
    return name.startswith("_repr_") and name.endswith("_")


def _own_private_names(tree: ast.Module) -> set[str]:
    """Private names the module defines itself: its globals, functions, classes, their
    attributes, and ``self._x`` / ``obj._x = ...`` it assigns."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            own.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
            own.add(node.target.attr)
        elif isinstance(node, ast.alias):
            own.add((node.asname or node.name).split(".")[0])
    return {name for name in own if _is_private(name)}


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def violations(source: str, path: str) -> list[str]:
    """What the rules above find in one module's ``source``, as ``path:line: why``."""
    tree = ast.parse(source)
    own = _own_private_names(tree)
    library_names: set[str] = set()  # names bound to a library's modules or objects
    found: list[str] = []

    def report(node: ast.AST, what: str, name: str) -> None:
        if (path, name) not in PENDING:
            found.append(f"{path}:{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in LIBRARIES:
                    library_names.add(alias.asname or parts[0])
                    if any(_is_private(p) for p in parts):
                        report(node, f"imports private module {alias.name}", alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] in LIBRARIES:
                for alias in node.names:
                    library_names.add(alias.asname or alias.name)
                    if any(_is_private(p) for p in parts) or _is_private(alias.name):
                        report(node, f"imports {alias.name} from private {node.module}", alias.name)
            elif parts[0] in PACKAGES:
                for alias in node.names:
                    if _is_private(alias.name):
                        report(node, f"imports {node.module}'s private {alias.name}", alias.name)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if _is_dunder(name):
            if name not in PUBLIC_DUNDERS:
                report(node, f"uses {ast.unparse(node)} (not a public dunder)", name)
            continue
        if not _is_private(name) or name in PUBLIC_PRIVATE_LOOKING or _is_display_protocol(name):
            continue
        root = _root_name(node.value)
        if root in library_names:
            report(node, f"uses {ast.unparse(node)}, a private name of a library", name)
        elif root not in ("self", "cls") and name not in own:
            report(node, f"uses {ast.unparse(node)}, a private name defined elsewhere", name)
    return found


def _package_modules() -> list[pathlib.Path]:
    modules = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "internals" not in path.relative_to(ROOT).parts:
                modules.append(path)
    return modules


def test_private_names_stay_in_internals():
    found = []
    for path in _package_modules():
        found += violations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not found, (
        "private names outside jaxdbg/internals/ (put them behind a guarded "
        "function there, with a test in tests/internals/):\n" + "\n".join(found)
    )


def test_the_scan_covers_the_packages():
    names = {p.relative_to(ROOT).as_posix() for p in _package_modules()}
    assert "jaxdbg/capture/breakpoints.py" in names and "jaxdbg_widgets/pause/channel.py" in names
    assert not any("/internals/" in n for n in names)


def test_the_scan_finds_each_kind_of_leak():
    source = "\n".join(
        [
            "import jax",
            "from jax._src import core",
            "from IPython import get_ipython",
            "from ipykernel.kernelbase import _private_helper",
            "from jaxdbg.capture import frames as frames_mod",
            "from jaxdbg.engine.session import _COMMANDS",
            "def f(err, kernel):",
            "    err._pred",  # a library object's field, reached by a parameter
            "    get_ipython()._showtraceback",  # a library object's method, reached by an import
            "    jax.config._read",
            "    frames_mod._hidden_file_test()",  # another jaxdbg module's private function
            "    kernel.__dict__",  # a dunder that is no public protocol
        ]
    )
    found = violations(source, "jaxdbg/example.py")
    lines = sorted(int(f.split(":")[1]) for f in found)
    assert lines == [2, 4, 6, 8, 9, 10, 11, 12], found


def test_the_scan_allows_public_and_own_names():
    source = "\n".join(
        [
            "import sys",
            "import collections",
            "class Box:",
            "    def __init__(self):",
            "        self._value = 1",
            "    def __eq__(self, other):",
            "        return other._value == self._value",  # the module's own attribute
            "def g(x, view):",
            "    sys._getframe(1)",
            "    type(x)._fields",
            "    view._repr_html_()",
            "    x.__name__",
            "    super().__init__()",
        ]
    )
    assert violations(source, "jaxdbg/example.py") == []
