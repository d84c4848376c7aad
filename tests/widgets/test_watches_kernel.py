"""Watches, conditions, logpoints and saved stops in the panel of a real ipykernel.

The test sends what the panel's browser code sends (a typed line, the Watch box's
``watch EXPR``, an edited breakpoint field's command) and reads the widget state the
kernel synced: the ``watches`` table over hits, the ``breakpoints`` rows, the static
summary and the print log's saved text.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import live_panel, press, state, static_texts, submit, wait_banner, wait_log

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    %load_ext jaxdbg

    def body(carry, i):
        loss = carry * 0.5 + i
        grads = jnp.full((4,), i) * 2.0
        state = {"half": grads.astype(jnp.bfloat16), "count": jnp.int32(7), "ok": [grads > -1]}
        jaxdbg.breakpoint()
        return loss, loss

    train = jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(100.0))[0])
    print("backends", jaxdbg.available_debuggers(), "devices", jax.device_count())
""")

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli'] devices")

UNWATCH_ALL = textwrap.dedent("""
    from jaxdbg.engine import watches as _watches
    for _n in _watches.LIVE.numbers():
        for _e in _watches.LIVE.expressions(_n):
            _watches.LIVE.remove(_n, _e)
""")


@pytest.fixture(autouse=True)
def no_watches_from_other_tests(kernel):
    """Each test sets the watches it reads: the kernel is shared, in any order."""
    assert kernel.run(UNWATCH_ALL, timeout=60).status == "ok"


def _watches(kernel, cid: str) -> dict:
    return state(kernel, cid).get("watches", {})


def _wait_values(kernel, cid: str, expression: str, count: int) -> dict:
    def look():
        for w in _watches(kernel, cid).get("watches", []):
            if w["expression"] == expression and w["total"] >= count:
                return w
        return None

    return kernel.wait_for(look, 60, f"{count} values of {expression}")


def test_watches_over_a_100_step_scan_with_continue_all_then_the_next_stop(kernel):
    msg = kernel.execute("train()")
    cid = live_panel(kernel)
    wait_banner(kernel, r"breakpoint (\d+), hit", cid)
    number = state(kernel, cid)["watches"]["breakpoint"]
    submit(kernel, "watch loss", cid=cid)  # the Watch box sends the same line
    submit(kernel, "watch grads", cid=cid)
    loss = _wait_values(kernel, cid, "loss", 1)
    assert loss["values"][0]["number"] == 0.5 and loss["values"][0]["hit"] is not None
    assert _wait_values(kernel, cid, "grads", 1)["values"][0]["stats"]["max"] == 0.0
    press(kernel, "continue all", cid)
    result = kernel.wait_reply(msg, timeout=300)
    assert result.status == "ok", result
    summaries = [t for t in static_texts(result) if "watch loss" in t]
    assert "watch loss = 0.5  (1 hits)" in summaries[0], summaries  # as the stop ended
    # ... and once the cell is done, with the values the 99 passed stops took
    assert "watch loss = 196.0  (100 hits)" in summaries[-1], summaries

    # The 99 passed stops took their values on the host: the next stop shows all 100.
    msg = kernel.execute("train()")
    cid = live_panel(kernel)
    loss = _wait_values(kernel, cid, "loss", 101)
    assert len(loss["values"]) == 101
    numbers = [v["number"] for v in loss["values"]]
    assert numbers[0] == numbers[100] == 0.5 and numbers[1] == 1.25
    hits = [v["hit"] for v in loss["values"]]
    assert hits == list(range(hits[0], hits[0] + 101))
    grads = _wait_values(kernel, cid, "grads", 101)
    assert [v["stats"]["max"] for v in grads["values"][:3]] == [0.0, 2.0, 4.0]
    row = next(r for r in state(kernel, cid)["breakpoints"] if r["number"] == number)
    assert row["hits"] == hits[-1] and row["enabled"] and row["condition"] == ""

    # condition, edited in place in the breakpoints table, then a logpoint
    press(kernel, f"condition {number} i == 60", cid)
    kernel.wait_for(
        lambda: next(r for r in state(kernel, cid)["breakpoints"] if r["number"] == number)["condition"] == "i == 60",
        60,
        "the condition",
    )
    press(kernel, "continue", cid)
    cid = _next_panel(kernel, cid)
    submit(kernel, "p i", cid=cid)
    wait_log(kernel, r"Array\(60\., dtype=float32\)", cid)  # steps 1..59 passed: the condition was false
    press(kernel, f"condition {number}", cid)
    press(kernel, f'log {number} "step {{i:.0f}}: loss={{loss:.4f}}"', cid)
    press(kernel, "continue", cid)
    result = kernel.wait_reply(msg, timeout=300)
    assert result.status == "ok", result
    log = "\n".join(static_texts(result))
    assert "step 61: loss=" in log and "step 99: loss=" in log and "step 60:" not in log, log
    kernel.run(f"from jaxdbg.engine import breakpoint_state; breakpoint_state.set_log_template({number}, '')")


def _next_panel(kernel, before: str) -> str:
    """The live panel of the next stop (each stop has a panel of its own)."""

    def look():
        try:
            cid = live_panel(kernel, timeout=1)
        except Exception:
            return None
        return cid if cid != before else None

    return kernel.wait_for(look, 120, "the next stop's panel")


def test_save_in_the_panel_and_open_it_again(kernel, tmp_path):
    path = tmp_path / "stop.npz"
    msg = kernel.execute("train()")
    cid = live_panel(kernel)
    submit(kernel, "watch loss", cid=cid)
    _wait_values(kernel, cid, "loss", 1)
    submit(kernel, f"save {path}", cid=cid)
    wait_log(kernel, "Saved the stop to", cid)
    press(kernel, "quit", cid)
    kernel.wait_reply(msg, timeout=300)

    msg = kernel.execute(f"jaxdbg.open_stop({str(path)!r})")
    cid = live_panel(kernel)
    kernel.wait_for(
        lambda: "reopened from stop.npz" in state(kernel, cid).get("status", {}).get("note", ""),
        60,
        "the saved stop's reason line",
    )
    assert re.search(r"breakpoint \d+, hit \d+", state(kernel, cid)["status"]["banner"])
    submit(kernel, "p grads", cid=cid)
    wait_log(kernel, r"Array\(\[0\., 0\., 0\., 0\.\], dtype=float32\)", cid)  # JAX arrays again
    submit(kernel, "p state", cid=cid)  # a pytree of bfloat16, int32 and bool arrays
    wait_log(kernel, r"'count': Array\(7, dtype=int32\)", cid)
    text = wait_log(kernel, r"'half': Array\(\[0, 0, 0, 0\], dtype=bfloat16\)", cid)
    assert "Array([ True,  True,  True,  True], dtype=bool)" in text, text
    assert state(kernel, cid)["watches"]["watches"][0]["expression"] == "loss"
    press(kernel, "continue", cid)
    assert kernel.wait_reply(msg, timeout=120).status == "ok"


SLOW_SCAN = textwrap.dedent("""
    import time

    def slow_body(carry, i):
        jax.debug.callback(lambda: time.sleep(0.05))  # a step that takes a while
        loss = carry * 0.5 + i
        jaxdbg.breakpoint()
        return loss, loss

    slow_train = jax.jit(lambda: jax.lax.scan(slow_body, 1.0, jnp.arange(100.0))[0])
""")


def test_the_summary_fills_in_while_passed_stops_run_after_continue_all(kernel):
    kernel.run(SLOW_SCAN)
    msg = kernel.execute("slow_train()")
    cid = live_panel(kernel)
    submit(kernel, "watch loss", cid=cid)
    _wait_values(kernel, cid, "loss", 1)
    press(kernel, "continue all", cid)
    result = kernel.wait_reply(msg, timeout=300)
    assert result.status == "ok", result
    counts = [int(m.group(1)) for t in static_texts(result) if (m := re.search(r"watch loss = \S+  \((\d+) hits\)", t))]
    assert counts[0] == 1 and counts[-1] == 100, counts  # as the stop ended; once the cell is done
    # ... and in between, redrawn while the passed stops ran: the count grows. A redraw
    # may come after the last passed stop and before the cell ends, so 100 is allowed.
    between = counts[1:-1]
    assert between and all(1 < c <= 100 for c in between), counts
    assert any(c < 100 for c in between), counts
    assert between == sorted(between), counts
