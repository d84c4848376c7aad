"""Extension commands a notebook user types besides load and unload, in a real kernel."""

import pytest

from kernel_harness import kernel, kernel_python  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def test_reload_ext_reloads_and_keeps_every_feature(kernel):
    loaded = kernel.run("%load_ext jaxdbg", timeout=120)
    assert loaded.status == "ok", loaded
    reloaded = kernel.run("%reload_ext jaxdbg", timeout=120)
    assert reloaded.status == "ok" and not reloaded.errors, reloaded
    status = kernel.run("%jaxdbg\nimport jaxdbg.registry, jaxdbg.jax_hook\n"
                        "print(sorted(jaxdbg.registry.registered_debuggers()), "
                        "jaxdbg.jax_hook.is_installed())")
    assert status.status == "ok", status
    assert "['cli', 'widgets'] True" in status.stdout, status
    shown = "".join(m["content"]["data"].get("text/plain", "") for m in status.messages
                    if m["msg_type"] == "display_data")
    assert "jaxdbg status" in shown, status
