"""The tests' own shape: what two test modules share lives in tests/support/, so no test
module imports another one (pytest would collect the imported tests twice, and a
module's fixtures would leak into the other)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") or part == "conftest" for part in dotted.split("."))


def imported_test_modules(source: str) -> list[str]:
    """The test modules (``test_*``, ``conftest``) that ``source`` imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if _is_test_module(module):
                found.append("." * node.level + module)
            elif node.level or module in ("", "tests") or module.startswith("tests."):
                # `from . import test_x`, `from tests.engine import test_x`
                found += [
                    "." * node.level + f"{module}.{alias.name}".lstrip(".")
                    for alias in node.names
                    if _is_test_module(alias.name)
                ]
    return found


def test_the_check_sees_every_way_to_import_a_test_module():
    source = (
        "import test_stops\nfrom test_stops import x\nfrom .test_stops import x\n"
        "from . import test_stops\nfrom tests.engine.test_stops import x\n"
        "from tests.engine import test_stops\nimport tests.conftest\n"
        "import support.kernel_harness\nfrom support.transcript import Transcript\n"
    )
    assert imported_test_modules(source) == [
        "test_stops",
        "test_stops",
        ".test_stops",
        ".test_stops",
        "tests.engine.test_stops",
        "tests.engine.test_stops",
        "tests.conftest",
    ]


def test_no_test_module_imports_another_test_module():
    offenders = {}
    for path in sorted([*TESTS.rglob("test_*.py"), *TESTS.glob("support/**/*.py")]):
        imported = imported_test_modules(path.read_text(encoding="utf-8"))
        if imported:
            offenders[str(path.relative_to(TESTS))] = imported
    assert not offenders, f"move what they share into tests/support/: {offenders}"
