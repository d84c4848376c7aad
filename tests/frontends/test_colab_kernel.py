"""The ``colab`` backend in a real kernel with a stand-in ``google.colab``.

Colab itself cannot run here. ``tests/support/colab_standin`` provides ``google.colab.output``
whose ``eval_js`` records the script and reads its reply over the kernel's stdin
channel, as Colab's frontend sends it. The kernels include the one built from Colab's
exact pins (``.nox/colab_pins``, via JAXDBG_COLAB_PYTHON) when ``dev.py test`` made it.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from support.kernel_harness import MULTI_DEVICE_XLA_FLAGS, ROOT, KernelHarness, kernel_pythons

pytestmark = [pytest.mark.kernel, pytest.mark.matrix("jupyter"), pytest.mark.timeout(300)]

STANDIN = Path(__file__).resolve().parents[1] / "support" / "colab_standin"
EVAL_JS = "[colab eval_js] "

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp, jaxdbg
    print("backends", jaxdbg.available_debuggers())
""")

CELL = textwrap.dedent("""
    @jax.jit
    def step(w, x):
        h = jnp.tanh(x @ w)
        label = "<b>not bold</b> & co"
        def inner(v):
            jaxdbg.breakpoint()
            return v * 2
        return inner(h).sum()
    print("result", float(step(jnp.ones((3, 2)), jnp.ones((1, 3)))))
""")


@pytest.fixture(params=kernel_pythons())
def colab_kernel(request, tmp_path):
    log = tmp_path / "colab-log.jsonl"
    harness = KernelHarness(
        request.param,
        env={
            "XLA_FLAGS": MULTI_DEVICE_XLA_FLAGS,
            "PYTHONPATH": os.pathsep.join([str(STANDIN), str(ROOT)]),
            "JAXDBG_TEST_COLAB_LOG": str(log),
        },
    )
    harness.colab_log = log
    try:
        harness.start()
        result = harness.run(SETUP, timeout=180)
        assert result.status == "ok", result
        yield harness
    finally:
        harness.shutdown()


def html_outputs(result) -> list[str]:
    """Every text/html the cell displayed or updated, in order."""
    return [
        m["content"]["data"]["text/html"]
        for m in result.messages
        if m["msg_type"] in ("display_data", "update_display_data") and "text/html" in m["content"].get("data", {})
    ]


def eval_js_calls(kernel) -> list[str]:
    if not kernel.colab_log.exists():
        return []
    return [
        json.loads(line)["script"]
        for line in kernel.colab_log.read_text().splitlines()
        if json.loads(line)["kind"] == "eval_js"
    ]


def test_colab_is_the_default_backend_there(colab_kernel):
    out = colab_kernel.run("print(jaxdbg.available_debuggers()[0])").stdout
    assert out.strip() == "colab"


def test_buttons_and_typed_commands_through_eval_js(colab_kernel):
    kernel = colab_kernel
    # What the page sends back: a frame button, a typed expression, then Continue.
    for reply in ("frame 1", "p h.shape", "p label", "continue"):
        kernel.answer_input(reply)
    result = kernel.run(CELL, timeout=180)
    assert result.status == "ok", result
    assert "result 3.980" in result.stdout
    prompts = [r["content"]["prompt"] for r in kernel.input_requests]
    assert prompts == [EVAL_JS] * 4  # every command came from the page, none typed
    pages = html_outputs(result)
    assert len(pages) == 5  # the first view, one update per command, the final one
    first = pages[0]
    assert "Stopped at In[" in first and "in inner" in first
    assert 'data-jaxdbg-command="frame 1"' in first and 'data-jaxdbg-command="continue"' in first
    assert "var(--colab-primary-text-color" in first  # Colab's theme variables
    assert 'class="hll"' in first  # pygments marks the current line
    assert "jaxdbg.breakpoint()" in first
    assert "float32[1,2]" in first  # the locals summary
    # each eval_js waits for the render it belongs to
    scripts = eval_js_calls(kernel)
    view = re.search(r'data-jaxdbg-view="([0-9a-f]+)"', first).group(1)
    for n, script in enumerate(scripts, start=1):
        assert f'[data-jaxdbg-view="{view}"][data-jaxdbg-render="{n}"]' in script
        assert f'data-jaxdbg-render="{n}"' in pages[n - 1]
    after_frame = pages[1]
    assert "in step" in after_frame  # frame 1 selected
    assert "(jaxdbg) p h.shape" in pages[2] and "(1, 2)" in pages[2]
    # a user string is escaped, never markup
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp; co" in pages[3]
    assert "<b>not bold</b>" not in "".join(pages)
    final = pages[-1]
    assert "data-jaxdbg-command" not in final and "Continued." in final
    # the finished stop keeps a readable text/plain twin for saved notebooks
    plain = [
        m["content"]["data"].get("text/plain", "") for m in result.messages if m["msg_type"] == "update_display_data"
    ][-1]
    assert "Stopped at In[" in plain and "(jaxdbg) p h.shape\n(1, 2)" in plain and "Continued." in plain
    assert kernel.run("print('alive')").stdout == "alive\n"


def test_quit_from_the_page(colab_kernel):
    kernel = colab_kernel
    kernel.answer_input("quit")
    result = kernel.run(CELL, timeout=180)
    assert result.status == "error"
    assert [e["ename"] for e in result.errors] == ["DebuggerQuit"]
    assert "CpuCallback" not in json.dumps(result.errors)
    assert kernel.run("print('alive')").stdout == "alive\n"


def test_typed_prompt_alone_when_eval_js_fails(colab_kernel):
    kernel = colab_kernel
    kernel.run("import os; os.environ['JAXDBG_TEST_COLAB_EVAL_JS'] = 'fail'")
    for reply in ("p h + 1", "up", "c"):
        kernel.answer_input(reply)
    result = kernel.run(CELL, timeout=180)
    assert result.status == "ok", result
    prompts = [r["content"]["prompt"] for r in kernel.input_requests]
    assert prompts == ["(jaxdbg) "] * 3
    notices = [line for line in result.stdout.splitlines() if line.startswith("jaxdbg:")]
    assert len(notices) == 1 and "buttons cannot reach the paused cell" in notices[0], result.stdout
    pages = html_outputs(result)
    assert "(jaxdbg) p h + 1" in pages[-1] and "Continued." in pages[-1]
    assert all('data-jaxdbg-command="continue"' not in page for page in pages[1:])


def test_frame_without_source_and_broken_rendering_degrade_to_text(colab_kernel):
    kernel = colab_kernel
    kernel.answer_input("p y")
    kernel.answer_input("c")
    # code compiled from a string has no source to show
    result = kernel.run(
        textwrap.dedent("""
        namespace = {"jax": jax, "jnp": jnp, "jaxdbg": jaxdbg}
        exec(compile("def f(y):\\n    jaxdbg.breakpoint()\\n    return y + 1\\n", "<generated>", "exec"), namespace)
        print("result", jax.jit(namespace["f"])(jnp.float32(1)))
    """),
        timeout=180,
    )
    assert result.status == "ok", result
    assert "result 2.0" in result.stdout
    pages = html_outputs(result)
    assert "(source not available for &lt;generated&gt;:2)" in pages[0]
    assert "Array(1., dtype=float32)" in pages[-1]

    kernel.run(
        "import jaxdbg.frontends.colab_view as cv\n"
        "def broken(*a, **k):\n    raise ValueError('no drawing today')\n"
        "cv.render_stop = broken"
    )
    kernel.answer_input("p v.shape")
    kernel.answer_input("c")
    result = kernel.run(CELL, timeout=180)
    assert result.status == "ok", result
    out = result.stdout
    assert "the HTML view failed (ValueError: no drawing today); showing text instead." in out
    assert "Stopped at In[" in out and "->" in out  # the text view with the current line
    assert "(jaxdbg) p v.shape\n(1, 2)" in out
    assert [r["content"]["prompt"] for r in kernel.input_requests][-2:] == ["(jaxdbg) "] * 2


@pytest.mark.matrix("jax")
def test_interrupting_a_pmap_stop_that_waits_on_the_page_ends_it_and_the_stops_behind_it(colab_kernel):
    """The stop waits for the page's reply on an XLA thread (through the kernel's stdin
    here, as Colab's own eval_js polls for it in Python); from jaxlib 0.12.1 the main
    thread waits inside the pmap call itself, where no signal handler runs."""
    kernel = colab_kernel
    mid = kernel.execute("print(jax.pmap(lambda x: (jaxdbg.breakpoint(), x * 10)[1])(jnp.arange(4.)))")
    kernel.wait_for(lambda: len(kernel.input_requests) >= 1, 120, "the page's first request")
    kernel.interrupt()
    done = kernel.wait_reply(mid, timeout=120)
    assert done.status == "error", done
    assert [e["ename"] for e in done.errors] == ["KeyboardInterrupt"], done.errors
    assert all(len(e["traceback"]) <= 2 for e in done.errors), done.errors
    assert kernel.run("print('alive')").stdout == "alive\n"
    assert len(kernel.input_requests) == 1  # the devices' stops behind it ended with it
