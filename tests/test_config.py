"""jaxdbg/config.py is the one table of environment variables and switches: every
module reads them through it, and %jaxdbg and docs/magic.md list what it declares."""

from __future__ import annotations

import ast
from pathlib import Path

from jaxdbg import config
from jaxdbg.ipython import magics

ROOT = Path(__file__).resolve().parent.parent


def test_only_the_config_module_reads_the_environment():
    readers = []
    for package in ("jaxdbg", "jaxdbg_widgets"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "jaxdbg" / "config.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr in ("environ", "getenv", "putenv")
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "os"
                ):
                    readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not readers, "read the environment through jaxdbg.config:\n" + "\n".join(readers)


def test_the_docs_list_every_variable_and_switch():
    page = (ROOT / "docs" / "magic.md").read_text()
    for variable in config.ENVIRONMENT:
        assert f"`${variable.name}`" in page, variable
    for flag in config.JAX_FLAGS:
        assert f"`{flag.name}`" in page and flag.meaning in page, flag
    for switch in config.SWITCHES:
        assert f"| `{switch.name}` |" in page, switch


def test_the_magic_switches_and_status_come_from_the_table():
    names = [sub.name for sub in magics.subcommands()]
    assert [flag.switch for flag in config.JAX_FLAGS if flag.switch] == [
        name for name in names if name in {"nans", "infs", "disable_jit"}
    ]
    assert all(switch.name in names for switch in config.SWITCHES)
    assert magics.FLAGS == tuple(flag.name for flag in config.JAX_FLAGS)


def test_an_environment_variable_is_read_each_time(monkeypatch):
    monkeypatch.delenv(config.BACKEND.name, raising=False)
    assert config.BACKEND.raw() is None and not config.BACKEND.is_set()
    monkeypatch.setenv(config.BACKEND.name, "  ")
    assert config.BACKEND.get() == "  " and not config.BACKEND.is_set()
    config.BACKEND.set("cli")
    assert config.BACKEND.is_set() and config.BACKEND.get() == "cli"
    config.BACKEND.set(None)
    assert config.BACKEND.raw() is None


def test_print_routing_is_the_config_switch():
    from jaxdbg.capture import prints

    try:
        prints.set_routing(False)
        assert config.PRINT_ROUTING.get() is False and not prints.routing_enabled()
        config.PRINT_ROUTING.reset()
        assert prints.routing_enabled()
    finally:
        config.PRINT_ROUTING.reset()
