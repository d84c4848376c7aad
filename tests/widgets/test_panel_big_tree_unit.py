"""A 10,000-leaf parameter tree in the panel, without a kernel: the first state sent
says its kind and size only, without walking the tree; its full summary comes when the
browser shows the row (a ``stats`` message), as a big array's statistics do.

The tree's nodes are a registered pytree type that counts how often JAX flattens one,
so "not walked" is seen as flatten calls, not as time.
"""

from __future__ import annotations

import math
import sys

import jax
import jax.numpy as jnp

from jaxdbg.engine.frames import live_frame
from jaxdbg.engine.session import Session
from jaxdbg.engine.values import leaf_stats, tree_glance, tree_summaries
from jaxdbg_widgets.panel.panel import DebuggerPanel

LAYERS = 5_000
FLATTENED = [0]


class Layer:
    """One layer's ``w`` and ``b``; flattening one counts in :data:`FLATTENED`."""

    def __init__(self, w, b):
        self.w, self.b = w, b


def _flatten(layer):
    FLATTENED[0] += 1
    return (layer.w, layer.b), None


jax.tree_util.register_pytree_node(Layer, _flatten, lambda _, children: Layer(*children))


def _params():
    return {f"layer{i:04d}": Layer(jnp.full((4, 4), float(i)), jnp.zeros(4)) for i in range(LAYERS)}


def _panel_over(params):
    one = jnp.ones((4, 4))  # noqa: F841  (a local beside it, summarised at once)
    session = Session([live_frame(sys._getframe())])  # its capture flattens the frame's locals
    FLATTENED[0] = 0  # from here: what the panel does
    return DebuggerPanel(session)


def _sent(panel):
    box = []
    panel.widget.send = lambda content, buffers=None: box.append(content)
    return box


def test_a_10000_leaf_local_is_sent_without_its_summary_and_without_a_walk():
    params = _params()
    panel = _panel_over(params)
    rows = {r["name"]: r for r in panel.widget.locals_page["rows"]}
    row = rows["params"]
    assert row["pending"] and row["expandable"] and not row["nonfinite"]
    assert row["summary"] == "dict · 5,000 entries · summary when shown"
    assert "arrays" not in row["summary"] and "‖·‖" not in row["summary"]
    # the glance stops past LEAVES_AT_A_GLANCE leaves: 2 per layer
    assert FLATTENED[0] <= tree_glance.LEAVES_AT_A_GLANCE // 2 + 1
    assert not any(leaf_stats._cached(layer.w)[0] for layer in params.values())  # no value read
    assert not rows["one"]["pending"] and rows["one"]["summary"].startswith("min=1 max=1")


def test_the_summary_comes_when_the_row_is_shown():
    params = _params()
    panel = _panel_over(params)
    box = _sent(panel)
    panel.send({"type": "stats", "frame": 0, "path": ["params"]})
    assert FLATTENED[0] >= LAYERS  # now, and only now, the whole tree
    (message,) = box
    row = message["row"]
    norm = math.sqrt(sum(16.0 * i * i for i in range(LAYERS)))
    assert row["summary"].startswith("10,000 arrays · 100,000 float32 · 391 KB · ")
    assert f"‖·‖ {norm:.4g} · max {LAYERS - 1}" in row["summary"] and not row["pending"]
    # the table's own row is now the full one (a redraw of the frame shows it)
    assert panel.locals_rows(0, 10)[0] == row


def test_a_nan_in_a_big_tree_is_marked_once_its_row_is_shown():
    params = _params()
    params["layer4321"].b = jnp.array([0.0, jnp.nan, 0.0, 0.0])
    panel = _panel_over(params)
    box = _sent(panel)
    assert not panel.widget.locals_page["rows"][0]["nonfinite"]  # not known before it is read
    panel.send({"type": "stats", "frame": 0, "path": ["params"]})
    row = box[0]["row"]
    assert row["nonfinite"] and "NaN in ['layer4321']" in row["summary"]


def test_an_opened_node_holding_a_big_subtree_is_sent_the_same_way():
    params = {"encoder": _params(), "head": jnp.ones(3)}
    panel = _panel_over(params)
    assert panel.widget.locals_page["rows"][0]["summary"] == "dict · 2 entries · summary when shown"
    box = _sent(panel)
    panel.send({"type": "expand", "frame": 0, "path": ["params"]})
    encoder, head = box[0]["rows"]
    assert encoder["pending"] and encoder["summary"] == "dict · 5,000 entries · summary when shown"
    assert not head["pending"] and head["array"] == "float32[3]"
    panel.send({"type": "stats", "frame": 0, "path": ["params", 0]})
    assert box[1]["row"]["summary"].startswith("10,000 arrays · 100,000 float32")


def test_the_terminal_locals_table_shows_the_whole_summary_at_once():
    params = _params()
    (row,) = tree_summaries.summarize_locals({"params": params})
    assert row.preview.startswith("10,000 arrays · 100,000 float32 · 391 KB · ‖·‖ ")
    assert "summary when shown" not in row.preview
