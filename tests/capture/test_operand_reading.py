"""A stop's pytree locals rebuilt from the operands that reached the host: a big tree's
leaves are read at once (no call per leaf), a batched stop's each as its element, and an
operand that was not sent stands as unavailable."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxdbg
from jaxdbg.capture.operand_reader import reader as _reader
from jaxdbg.engine.frames import FrameTemplate, OperandSlot, Unavailable


def _template(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    slots = [OperandSlot(i) for i in range(len(leaves))]
    return FrameTemplate(__file__, 1, "step", {}, 1, {}, {"params": (treedef, slots)}, ["params"]), leaves


def test_an_unbatched_stops_tree_is_read_at_once():
    tree = {f"layer{i}": {"w": jnp.full((2, 2), float(i)), "b": jnp.zeros(2)} for i in range(1_000)}
    template, leaves = _template(tree)
    levels = [(False,)] * len(leaves)
    for _ in range(2):  # two stops: each reads the very arrays that came
        reader = _reader((), levels, dict(enumerate(leaves)), {})
        built = template.build(reader).locals["params"]
        assert built["layer7"]["w"] is tree["layer7"]["w"]  # the very arrays, not copies
        assert jax.tree_util.tree_structure(built) == jax.tree_util.tree_structure(tree)
    assert reader.cache_info().misses == 0  # type: ignore[attr-defined]  # no call per leaf


def test_a_batched_stop_reads_each_leaf_as_its_element():
    tree = {"w": jnp.arange(6.0).reshape(3, 2), "b": jnp.arange(3.0)}  # batched along axis 0
    template, leaves = _template(tree)
    reader = _reader((1,), [(True,)] * len(leaves), dict(enumerate(leaves)), {})
    built = template.build(reader).locals["params"]
    np.testing.assert_array_equal(built["w"], [2.0, 3.0])
    assert float(built["b"]) == 1.0


def test_an_operand_that_was_not_sent_is_unavailable():
    tree = {"a": jnp.ones(2), "b": jnp.zeros(2)}
    template, leaves = _template(tree)
    reader = _reader((), [(False,)] * 2, {0: leaves[0]}, {})  # a screening sent only the first
    built = template.build(reader).locals["params"]
    assert built["a"] is leaves[0] and isinstance(built["b"], Unavailable)


def test_a_jitted_stops_big_tree_local_holds_its_values():
    seen = {}

    def keep(session, **_):
        seen["params"] = session.frames[0].locals["params"]
        session.execute("continue")

    jaxdbg.register_debugger("operand-reading-test", keep, priority=-1000, replace=True)

    @jax.jit
    def step(params, x):
        jaxdbg.breakpoint(backend="operand-reading-test")
        return x + params["layer0"]["b"]

    params = {f"layer{i}": {"w": jnp.full((2,), float(i)), "b": jnp.ones(2)} for i in range(600)}
    for _ in range(2):
        step(params, jnp.zeros(2)).block_until_ready()
        assert float(seen["params"]["layer599"]["w"][0]) == 599.0 and len(seen["params"]) == 600


def test_the_operands_in_order_are_read_as_one_slice():
    tree = {f"layer{i}": {"w": jnp.full((2, 2), float(i)), "b": jnp.zeros(2)} for i in range(300)}
    template, leaves = _template(tree)
    reader = _reader((), [(False,)] * (len(leaves) + 1), [jnp.ones(1)] + leaves, {})  # one before
    template.traced_locals["params"] = (template.traced_locals["params"][0], [OperandSlot(i + 1) for i in range(600)])
    assert template._slot_indices == {}
    built = template.build(reader).locals["params"]
    assert template._slot_indices["params"] == range(1, 601)  # consecutive: kept as a range
    assert built["layer299"]["w"] is tree["layer299"]["w"] and reader.cache_info().misses == 0  # type: ignore[attr-defined]
    assert isinstance(reader(601), Unavailable)  # past the end: not sent


# -- a big traced tree is rebuilt from its leaves when something first reads it -----------
REBUILT = [0]


class Layer:
    """One layer's ``w`` and ``b``; rebuilding one counts in :data:`REBUILT`."""

    def __init__(self, w, b):
        self.w, self.b = w, b


def _rebuild(_, children):
    REBUILT[0] += 1
    return Layer(*children)


jax.tree_util.register_pytree_node(Layer, lambda layer: ((layer.w, layer.b), None), _rebuild)


def test_a_big_tree_waits_to_be_rebuilt_until_read_and_its_row_says_what_it_is():
    seen = {}

    def inspect(session, **_):
        seen["rebuilt before"] = REBUILT[0]
        seen["rows"] = session.local_rows(0, 10)  # what the panel sends when it opens
        seen["pictures"] = [name for name, _ in session.summary().pictures]  # what Continue leaves
        seen["rebuilt for rows"] = REBUILT[0]
        seen["p"] = session.execute("p float(params['layer0007'].w[0, 0])").text
        seen["rebuilt for p"] = REBUILT[0]
        seen["same"] = session.execute("p params is params and len(params)").text
        seen["rebuilt again"] = REBUILT[0]
        session.execute("continue")

    jaxdbg.register_debugger("lazy-tree-test", inspect, priority=-1000, replace=True)

    @jax.jit
    def step(params, x):
        jaxdbg.breakpoint(backend="lazy-tree-test")
        return x + params["layer0000"].b

    params = {f"layer{i:04d}": Layer(jnp.full((2, 2), float(i)), jnp.zeros(2)) for i in range(300)}
    step(params, jnp.zeros(2)).block_until_ready()
    REBUILT[0] = 0  # from here: the stop (tracing rebuilt the tree's nodes once)
    step(params, jnp.zeros(2)).block_until_ready()
    assert seen["rebuilt before"] == 0 and seen["rebuilt for rows"] == 0 and seen["pictures"] == ["x"]
    row = next(r for r in seen["rows"] if r["name"] == "params")
    assert row["type"] == "dict" and row["summary"] == "dict · 300 entries · summary when shown"
    assert row["pending"] and row["expandable"]
    assert seen["p"] == "7.0"
    assert seen["rebuilt for p"] == 300  # once, every node
    assert seen["same"] == "300" and seen["rebuilt again"] == 300


def test_a_big_tree_whose_rebuild_raises_is_unavailable_and_the_stop_goes_on():
    seen = {}

    def inspect(session, **_):
        seen["p"] = session.execute("p params").text
        seen["x"] = session.execute("p float(x[0])").text
        session.execute("continue")

    jaxdbg.register_debugger("lazy-tree-raises-test", inspect, priority=-1000, replace=True)

    class Refuses(Layer):
        pass

    def refuse(_, children):
        if isinstance(children[0], jax.Array) and not isinstance(children[0], jax.core.Tracer):
            raise ValueError("no")  # only the stop's rebuild, on host arrays
        return Refuses(*children)

    jax.tree_util.register_pytree_node(Refuses, lambda layer: ((layer.w, layer.b), None), refuse)

    @jax.jit
    def step(params, x):
        jaxdbg.breakpoint(backend="lazy-tree-raises-test")
        return x + 1.0

    step([Refuses(jnp.ones(2), jnp.ones(2)) for _ in range(200)], jnp.zeros(2)).block_until_ready()
    assert seen["p"] == "<unavailable: rebuilding it raised ValueError>"
    assert seen["x"] == "0.0"


# -- typed PRNG keys: the host receives their key data; a stop shows the keys ----------


def _stop_with_keys(t, impl: str | None = None):
    def f(x, key):
        k1, k2 = jax.random.split(key)
        pair = (k1, k2)
        y = x + jax.random.normal(k1, x.shape)
        jaxdbg.breakpoint(**t.options)
        return y, pair

    return f, jax.random.key(3, impl=impl)


def test_a_typed_prng_key_local_is_shown_and_used_as_the_key_the_program_holds():
    from support.transcript import Transcript

    t = Transcript("p key.dtype", "p jax.random.normal(k1, (2,))", "p pair[1] == k2", "p jax.random.key_data(k2)", "c")
    f, key = _stop_with_keys(t)
    y, (k1, k2) = jax.jit(f)(jnp.zeros(2), key)
    assert t.answers("p key.dtype") == ["key<fry>"]
    assert t.answers("p jax.random.normal(k1, (2,))") == [repr(jax.random.normal(k1, (2,)))]
    assert t.answers("p pair[1] == k2") == ["Array(True, dtype=bool)"]  # a key in a pytree local too
    assert t.answers("p jax.random.key_data(k2)") == [repr(jax.random.key_data(k2))]


def test_a_key_of_another_implementation_keeps_it():
    from support.transcript import Transcript

    t = Transcript("p jax.random.key_impl(k1)", "p jax.random.normal(k1, (2,))", "c")
    f, key = _stop_with_keys(t, impl="rbg")
    _, (k1, _) = jax.jit(f)(jnp.zeros(2), key)
    assert t.answers("p jax.random.key_impl(k1)") == [repr(jax.random.key_impl(k1))]
    assert t.answers("p jax.random.normal(k1, (2,))") == [repr(jax.random.normal(k1, (2,)))]


def test_under_vmap_each_stop_shows_its_elements_key():
    from support.transcript import Transcript

    t = Transcript(*["p key.shape, key.dtype", "p jax.random.key_data(key)", "c"] * 2)
    f, _ = _stop_with_keys(t)
    keys = jax.random.split(jax.random.key(5))
    jax.jit(jax.vmap(f))(jnp.zeros((2, 2)), keys)
    assert t.answers("p key.shape, key.dtype") == ["((), key<fry>)"] * 2
    assert t.answers("p jax.random.key_data(key)") == [repr(jax.random.key_data(k)) for k in keys]


def test_a_condition_reading_a_key_sees_the_key():
    from jaxdbg.engine import breakpoint_state
    from support.transcript import Transcript

    keys = jax.random.split(jax.random.key(7), 4)
    wanted = int(jax.random.key_data(keys[2])[0])
    t = Transcript("p key.dtype", "c")

    def step(c, key):
        jaxdbg.breakpoint(**t.options)
        return c, None

    run = jax.jit(lambda ks: jax.lax.scan(step, 0.0, ks))
    jax.eval_shape(run, keys)  # traced: the breakpoint has its number
    line = step.__code__.co_firstlineno + 1
    number = next(r.number for r in breakpoint_state.rows() if (r.filename, r.lineno) == (__file__, line))
    breakpoint_state.set_condition(number, f"int(jax.random.key_data(key)[0]) == {wanted}")
    try:
        run(keys)
    finally:
        breakpoint_state.reset()
    assert len(t.stops()) == 1 and "hit 3" in t.stops()[0]  # the step whose key the condition names
    assert t.answers("p key.dtype") == ["key<fry>"]
