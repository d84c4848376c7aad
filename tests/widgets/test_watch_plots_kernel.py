"""Watch plots read without hovering, in the panel of a real ipykernel: the summary a stop
leaves in the notebook titles each point with its hit and value and labels its axes, and
the live panel's watch table gets the first and last values and the range to write
beside the plot, and a pytree watch's row its leaves button (``watch N leaves``), which
plots each leaf's norm over the hits in the console, each plot with axes and its first,
last and range written beside it; ``watch N`` typed in the panel's console prints the
values per hit."""

from __future__ import annotations

import re
import textwrap

import pytest

from support.kernel_harness import kernel_fixture
from support.panel_driver import live_panel, press, state, static_outputs, submit, wait_log

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    %load_ext jaxdbg

    def body(carry, i):
        loss = carry * 0.5 + i
        params = {"b": jnp.array([i]), "w": jnp.full((3,), 2.0 * i)}
        jaxdbg.breakpoint()
        return loss, loss

    train = jax.jit(lambda: jax.lax.scan(body, 1.0, jnp.arange(20.0))[0])
    print("backends", jaxdbg.available_debuggers())
""")

kernel = kernel_fixture(SETUP, expect="backends ['widgets', 'cli']")


def _losses(steps: int) -> list[float]:
    out, carry = [], 1.0
    for i in range(steps):
        carry = carry * 0.5 + i
        out.append(carry)
    return out


def _watch(kernel, cid: str, expression: str, total: int) -> dict:
    def look():
        found = [w for w in state(kernel, cid).get("watches", {}).get("watches", []) if w["expression"] == expression]
        return found[0] if found and found[0]["total"] >= total else None

    return kernel.wait_for(look, 60, f"{total} values of {expression}")


def _leaf_plots(kernel, cid: str) -> str:
    """The HTML of the console's latest per-leaf plots (``watch N leaves``), once drawn."""

    def look():
        drawn = [e["html"] for e in state(kernel, cid).get("log", []) if "jaxdbg-leaf-plots" in e.get("html", "")]
        return drawn[-1] if drawn else None

    return kernel.wait_for(look, 60, "the leaves' plots in the console")


def test_the_summary_plot_titles_every_point_and_the_panel_gets_first_last_and_range(kernel, tmp_path):
    msg = kernel.execute("train()")
    cid = live_panel(kernel)
    submit(kernel, "watch loss", cid=cid)
    submit(kernel, "watch params", cid=cid)
    _watch(kernel, cid, "params", 1)
    press(kernel, "continue all", cid)
    result = kernel.wait_reply(msg, timeout=240)
    assert result.status == "ok", result
    summary = [html for html in static_outputs(result) if "jaxdbg-watch-plot" in html][-1]  # once the cell is done
    losses = _losses(20)
    plots = re.findall(r"<svg class=\"jaxdbg-watch-plot\".*?</svg>", summary, re.S)
    assert len(plots) == 2  # loss, and params by its global norm
    titles = re.findall(r"<title>hit (\d+): ([^<]*)</title>", plots[0])
    hits = [int(h) for h, _ in titles]
    assert len(titles) == 20 and hits == list(range(hits[0], hits[0] + 20))
    assert [float(v) for _, v in titles] == pytest.approx(losses)
    labels = re.findall(r"<text [^>]*>([^<]*)</text>", plots[0])
    assert labels == [f"{max(losses):.4g}", f"{min(losses):.4g}", f"hit {hits[0]}", str(hits[-1])]
    overview = re.findall(r"jaxdbg-watch-overview[^>]*>(.*?)</span>", summary)
    last = f"{losses[-1]:.6g}"
    assert overview[0] == f"first 0.5 · last {last}<br>range 0.5 … {last}", overview
    # the pytree's plot: its global norm per hit, titled with its summary line
    norm_titles = re.findall(r"<title>hit \d+: ([^<]*)</title>", plots[1])
    assert len(norm_titles) == 20 and "2 arrays · 4 float32" in norm_titles[-1]

    msg = kernel.execute("train()")
    cid = live_panel(kernel)
    loss = _watch(kernel, cid, "loss", 21)
    assert loss["overview"] == ["first 0.5", "last 0.5", f"range 0.5 … {last}"]
    params = _watch(kernel, cid, "params", 21)
    top = (19**2 + 3 * 38**2) ** 0.5  # step 19: b = [19], w = [38, 38, 38]
    assert params["overview"] == ["first 0", "last 0", f"range 0 … {top:.6g}"]
    assert params["leaves"] and not loss["leaves"]  # a pytree's row has its leaves button
    press(kernel, "watch 2 leaves", cid)  # what that button runs: a plot per leaf, in the console
    drawn = _leaf_plots(kernel, cid)
    assert re.search(r"params at hit \d+, 2 float leaves", drawn), drawn
    rows = re.findall(r'<tr class="jaxdbg-leaf"(.*?)</tr>', drawn, re.S)
    assert [re.search(r"<code[^>]*>(.*?)</code>", r).group(1) for r in rows] == ["[&#39;b&#39;]", "[&#39;w&#39;]"]
    for row, high in zip(rows, (19.0, 38.0 * 3**0.5)):  # the norm of b and of w at step 19
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert cells[:3] == ["0", "0", "0"], cells  # the second run's first hit: all zero, no NaN / Inf
        (plot,) = re.findall(r"<svg class=\"jaxdbg-watch-plot\".*?</svg>", row, re.S)
        assert len(re.findall(r"<circle ", plot)) == 21 and "jaxdbg-watch-axis" in plot  # a dot per hit, axes
        labels = re.findall(r"<text [^>]*>([^<]*)</text>", plot)
        assert labels == [f"{high:.4g}", "0", f"hit {hits[0]}", str(hits[-1] + 1)], labels
        (overview,) = re.findall(r"jaxdbg-watch-overview[^>]*>(.*?)</span>", row)
        assert overview == f"first 0 · last 0<br>range 0 … {high:.6g}", overview  # read without hovering
    submit(kernel, "watch 1", cid=cid)  # the console takes the prompt's command
    text = wait_log(kernel, r"Watch 1 at breakpoint \d+: loss, 21 values", cid)
    assert re.search(rf"\b{hits[-1]}\s+{last}\b", text), text
    path = tmp_path / "leaves.npz"
    submit(kernel, f"save {path}", cid=cid)
    wait_log(kernel, "Saved the stop to", cid)
    press(kernel, "continue all", cid)
    assert kernel.wait_reply(msg, timeout=240).status == "ok"

    # the stop reopened from its file plots the same leaves over the same 21 hits
    msg = kernel.execute(f"jaxdbg.open_stop({str(path)!r})")
    cid = live_panel(kernel)
    press(kernel, "watch 2 leaves", cid)
    reopened = _leaf_plots(kernel, cid)
    assert re.findall(r'<tr class="jaxdbg-leaf".*?</tr>', reopened, re.S) == re.findall(
        r'<tr class="jaxdbg-leaf".*?</tr>', drawn, re.S
    )
    press(kernel, "continue", cid)
    assert kernel.wait_reply(msg, timeout=120).status == "ok"
