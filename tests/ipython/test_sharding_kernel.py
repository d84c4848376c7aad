"""Sharding layouts and the %jaxdbg magic in a real kernel (both ipykernel lines)."""

from __future__ import annotations

import re

import pytest

from support.kernel_harness import kernel_fixture

pytestmark = [pytest.mark.kernel, pytest.mark.multidevice]

SETUP = """\
import os, jax, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
x = jax.device_put(np.zeros((4, 6, 8), np.float32), NamedSharding(jax.make_mesh((2, 2, 2), ("a", "b", "c")), P("a", "b", "c")))
print("devices", jax.device_count())
"""

# What the extension may change, as one printable snapshot.
SNAPSHOT = """\
_ip = get_ipython()
_html = _ip.display_formatter.formatters["text/html"].type_printers
_plain = _ip.display_formatter.formatters["text/plain"].type_printers
print("SNAP", sorted(getattr(t, "__name__", str(t)) for t in _html),
      sorted(getattr(t, "__name__", str(t)) for t in _plain),
      "jaxdbg" in _ip.magics_manager.magics["line"],
      jax.debug.visualize_array_sharding.__module__, jax.debug.inspect_array_sharding.__module__,
      jax.debug.breakpoint.__module__)
"""

kernel = kernel_fixture(SETUP)


def _ok(kernel, code):
    result = kernel.run(code, timeout=120)
    assert result.status == "ok", result
    return result


def _bundles(result, msg_type):
    return [m["content"]["data"] for m in result.messages if m["msg_type"] == msg_type]


def _snapshot(kernel) -> str:
    return next(line for line in _ok(kernel, SNAPSHOT).stdout.splitlines() if line.startswith("SNAP"))


@pytest.fixture
def loaded(kernel):
    _ok(kernel, "%load_ext jaxdbg")
    yield kernel


def test_load_and_unload_are_symmetric(kernel):
    if "jaxdbg.ipython.sharding_hooks" in _snapshot(kernel):  # another test loaded it first
        _ok(kernel, "%unload_ext jaxdbg")
    before = _snapshot(kernel)
    assert "True" not in before
    _ok(kernel, "%load_ext jaxdbg")
    during = _snapshot(kernel)
    assert "'Mesh', 'NamedSharding'" in during and " True " in during
    assert "jaxdbg.ipython.sharding_hooks" in during
    _ok(kernel, "%unload_ext jaxdbg")
    assert _snapshot(kernel) == before
    _ok(kernel, "%load_ext jaxdbg")
    assert _snapshot(kernel) == during


@pytest.mark.matrix("jax")
def test_mesh_and_named_sharding_results_display_as_layouts(loaded):
    [bundle] = _bundles(_ok(loaded, "mesh"), "execute_result")
    assert 'class="jaxdbg-sharding"' in bundle["text/html"] and "Mesh x=2 × y=4" in bundle["text/html"]
    assert bundle["text/plain"].startswith("Mesh(") and "│ 0 │ 1 │ 2 │ 3 │" in bundle["text/plain"]

    [bundle] = _bundles(_ok(loaded, "NamedSharding(mesh, P('x'))"), "execute_result")
    assert "P(&#39;x&#39;)" in bundle["text/html"] and "replicated ×4: 0–3" in bundle["text/html"]
    assert bundle["text/plain"].startswith("NamedSharding(")


@pytest.mark.matrix("jax")
def test_visualize_sharding_displays_inline_and_jax_routes_to_it(loaded):
    [bundle] = _bundles(_ok(loaded, "import jaxdbg; jaxdbg.visualize_sharding(x)"), "display_data")
    html = bundle["text/html"]
    assert html.count("<figcaption>") == 2 and "[0:2, :, :]" in html and "[2:4, :, :]" in html
    assert "dim 2 (c)" in bundle["text/plain"]
    # JAX's own function cannot draw 3-D; routed, it shows the same layout.
    [routed] = _bundles(_ok(loaded, "jax.debug.visualize_array_sharding(x)"), "display_data")
    assert routed["text/html"] == html


@pytest.mark.matrix("jax")
def test_inspect_sharding_shows_on_compile_and_on_cached_calls(loaded):
    _ok(loaded, "import jaxdbg\nf = jax.jit(lambda a: jaxdbg.inspect_sharding(a) * 2)")
    first = _ok(loaded, "f(x).block_until_ready();")
    second = _ok(loaded, "f(x).block_until_ready();")
    for result in (first, second):
        [bundle] = _bundles(result, "display_data")
        assert "[2:4, :, :]" in bundle["text/html"]


def _status_html(kernel) -> str:
    [bundle] = _bundles(_ok(kernel, "%jaxdbg"), "display_data")
    assert "jaxdbg status" in bundle["text/plain"]
    return bundle["text/html"]


def test_status_table(loaded):
    html = _status_html(loaded)
    for item in (
        "backend",
        "JAX hooks",
        "panel clicks",
        "devices",
        "jax_debug_nans",
        "jax_debug_infs",
        "jax_disable_jit",
        "jax_log_compiles",
    ):
        assert f">{item}</th>" in html
    assert "cpu ×8" in html
    assert "jax.debug.breakpoint: jaxdbg" in html
    version = _ok(loaded, "import ipykernel; print(ipykernel.__version__)").stdout.strip()
    mechanism = "subshell" if tuple(map(int, version.split(".")[:2])) >= (7, 4) else "pump"
    assert f"<code>{mechanism}</code>" in html and f"ipykernel {version}" in html


@pytest.mark.parametrize(
    "sub,flag", [("nans", "jax_debug_nans"), ("infs", "jax_debug_infs"), ("disable_jit", "jax_disable_jit")]
)
def test_flag_subcommands(loaded, sub, flag):
    assert f"{flag} = True" in _ok(loaded, f"%jaxdbg {sub} on").stdout
    assert _ok(loaded, f"print(jax.config.{flag})").stdout.strip() == "True"
    assert re.search(f">{flag}</th><td[^>]*><code>on</code>", _status_html(loaded))
    assert f"{flag} = False" in _ok(loaded, f"%jaxdbg {sub} off").stdout
    assert _ok(loaded, f"print(jax.config.{flag})").stdout.strip() == "False"
    out = _ok(loaded, f"%jaxdbg {sub} sideways").stdout
    assert f"usage: %jaxdbg {sub} on|off" in out
    assert _ok(loaded, f"print(jax.config.{flag})").stdout.strip() == "False"


def test_backend_subcommand(loaded):
    assert "jaxdbg backend: cli" in _ok(loaded, "%jaxdbg backend cli").stdout
    assert _ok(loaded, "print(os.environ['JAXDBG_BACKEND'])").stdout.strip() == "cli"
    assert "set with %jaxdbg backend" in _status_html(loaded)
    out = _ok(loaded, "%jaxdbg backend nowhere").stdout
    assert "unknown backend 'nowhere'" in out and "usage: %jaxdbg backend" in out
    assert _ok(loaded, "print(os.environ['JAXDBG_BACKEND'])").stdout.strip() == "cli"
    assert "automatic (widgets)" in _ok(loaded, "%jaxdbg backend auto").stdout
    assert _ok(loaded, "print('JAXDBG_BACKEND' in os.environ)").stdout.strip() == "False"


def test_sharding_subcommand(loaded):
    _ok(loaded, "%jaxdbg sharding off")
    assert "text/html" not in _bundles(_ok(loaded, "mesh"), "execute_result")[0]
    assert "jax._src" in _ok(loaded, "print(jax.debug.visualize_array_sharding.__module__)").stdout
    _ok(loaded, "%jaxdbg sharding on")
    assert "jaxdbg-sharding" in _bundles(_ok(loaded, "mesh"), "execute_result")[0]["text/html"]


def test_reset_subcommand(loaded):
    out = _ok(loaded, "%jaxdbg reset").stdout
    assert "every breakpoint is enabled again" in out, out


def test_unknown_subcommand_prints_usage_and_changes_nothing(loaded):
    before = _status_html(loaded)
    out = _ok(loaded, "%jaxdbg frobnicate now").stdout
    assert "unknown subcommand 'frobnicate'" in out and "%jaxdbg nans on|off" in out
    assert _status_html(loaded) == before
