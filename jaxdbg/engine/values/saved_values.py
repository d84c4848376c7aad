"""A stop's values as JSON and raw array bytes, and back: what ``save`` writes and
``jaxdbg.open_stop`` reads (:mod:`jaxdbg.engine.saved_stops`), never pickle.

An array is its raw bytes (``uint8``) beside its dtype and shape; None, bool, int, float
and str are JSON; dicts, lists and tuples are kept as such; a pytree (a Flax NNX or
Equinox Module, an NNX ``State``, an optax state, a registered dataclass) is kept as its
type's name, its library's kind and its children by key (an NNX ``Variable`` as its
array), and reopens as a :class:`SavedTree`: the same key paths (``model.l1.kernel``,
``grads['l2']['kernel']``) to the same arrays, a pytree again, though its class may not
be importable where it is opened. Anything else is its repr. Reading runs no code from
the file: dtypes come from a fixed list, type names only name a plain class.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

import jax
import numpy as np

from jaxdbg.engine import program_shardings
from jaxdbg.engine.frames import Unavailable
from jaxdbg.engine.values import linen_modules, summaries, tree_summaries
from jaxdbg.runtime.guarded_calls import format_exception, guarded

MAX_DEPTH = 20  # nesting kept in a saved pytree; deeper values are kept as their repr
MAX_ITEMS = 10_000  # children kept per container
REPR_CHARS = 10_000
_NUMPY_DTYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    }
)
_ML_DTYPES = frozenset(
    {
        "bfloat16",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e4m3b11fnuz",
        "int4",
        "uint4",
    }
)


class SavedStopError(ValueError):
    """A file that is not a saved stop this jaxdbg can open (corrupt, truncated, newer)."""


class SavedRepr:
    """A value that was saved as its repr: shows as it did at the stop."""

    def __init__(self, text: str, type_name: str) -> None:
        self.text = text
        self.type_name = type_name

    def __repr__(self) -> str:
        return self.text


def fail(path: str, why: str) -> SavedStopError:
    return SavedStopError(f"{path} is not a saved stop jaxdbg can open: {why}")


class Writer:
    """A value as JSON, its arrays gathered in :attr:`arrays` (name -> bytes)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, value: Any) -> dict:
        if jax.dtypes.issubdtype(getattr(value, "dtype", None), jax.dtypes.prng_key):
            # A typed key (key<fry>; an NNX RngKey's) has no numpy form: its key data,
            # and the name of its implementation to wrap that data in again.
            key = tree_summaries.variable_value(value) if tree_summaries.is_variable(value) else value
            return {**self.array(jax.random.key_data(key)), "key_impl": str(jax.random.key_impl(key))}
        host = np.asarray(value)  # (not ascontiguousarray: it makes a 0-d array 1-d)
        name = host.dtype.name
        if name not in _NUMPY_DTYPES and name not in _ML_DTYPES:
            return self.other(value)
        key = f"array_{len(self.arrays)}"
        self.arrays[key] = np.frombuffer(host.tobytes(order="C"), dtype=np.uint8)
        saved = {"kind": "array", "key": key, "dtype": name, "shape": list(host.shape)}
        where = summaries.describe_sharding(value)  # cpu:3, P('x',) on mesh x=8, host
        return saved if where is None else {**saved, "sharding": where}

    def other(self, value: Any) -> dict:
        text = guarded(lambda: repr(value), lambda e: f"<repr failed: {format_exception(e)}>")
        return {"kind": "repr", "text": text[:REPR_CHARS], "type": type(value).__name__}

    def value(self, value: Any, depth: int = 0) -> dict:
        # Exact types: np.float64 is a float and an IntEnum an int, but they are not JSON.
        if value is None or type(value) in (bool, int, str):
            if type(value) is int and abs(value) >= 2**63:
                return self.other(value)
            return {"kind": "json", "value": value}
        if type(value) is float:
            return {"kind": "float", "value": repr(value)}
        if isinstance(value, Unavailable):
            return self.other(value)
        if summaries.is_array(value) or isinstance(value, np.generic):
            return guarded(lambda: self.array(value), lambda e: self.other(value))
        if depth < MAX_DEPTH and type(value) in (dict, list, tuple) and len(value) <= MAX_ITEMS:
            if isinstance(value, dict):
                if all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
                    return {"kind": "dict", "items": [[k, self.value(v, depth + 1)] for k, v in value.items()]}
                return self.other(value)
            return {"kind": type(value).__name__, "items": [self.value(v, depth + 1) for v in value]}
        if tree_summaries.is_variable(value):  # an NNX Param, BatchStat ...: its array
            inner = tree_summaries.variable_value(value)
            if inner is not value:
                return self.value(inner, depth)
        if depth < MAX_DEPTH and (tree_summaries.is_tree(value) or _empty_node(value)):
            found = guarded(lambda: self.tree(value, depth), lambda e: None)
            if found is not None:
                return found
        return self.other(value)

    def tree(self, value: Any, depth: int) -> dict | None:
        """A pytree node as its type's name, its library's kind and its children by key
        (None where a key is not one JSON can hold: then the value is kept as its repr)."""
        flat, _ = jax.tree_util.tree_flatten_with_path(value, is_leaf=lambda node: node is not value)
        if len(flat) > MAX_ITEMS:
            return None
        items = []
        for keys, child in flat:
            key = _key_json(keys[0]) if len(keys) == 1 else None
            if key is None:
                return None
            if key[0] == "attr" and str(key[1]).startswith("_pytree__"):  # NNX's bookkeeping
                continue
            items.append([key, self.value(child, depth + 1)])
        statics = [[name, self.value(v, depth + 1)] for name, v in _static_fields(value)]
        kind = tree_summaries.library_kind(value)
        return {"kind": "tree", "type": summaries.type_name(value), "library": kind, "items": items, "static": statics}


def _empty_node(value: Any) -> bool:
    """A pytree node without leaves (optax's ``EmptyState()``): a tree, not a repr."""
    return value is not None and guarded(lambda: not jax.tree_util.tree_leaves(value), lambda e: False)


def _key_json(entry: Any) -> list | None:
    """A key path step as JSON: ``["attr", "l1"]``, ``["item", "bn"]``, ``["index", 0]``."""
    tu = jax.tree_util
    if isinstance(entry, tu.GetAttrKey):
        return ["attr", str(entry.name)]
    if isinstance(entry, tu.DictKey) and type(entry.key) in (str, int):
        return ["item", entry.key]
    if isinstance(entry, tu.SequenceKey):
        return ["index", int(entry.idx)]
    if isinstance(entry, tu.FlattenedIndexKey):
        return ["index", int(entry.key)]
    return None


def _static_fields(value: Any) -> list[tuple[str, Any]]:
    """An Equinox Module's static fields, a Linen Module's attributes (no pytree
    children, but part of what it is)."""
    if type(value) is linen_modules.LinenModule:
        return value.fields()
    eqx = sys.modules.get("equinox")
    if eqx is None or not isinstance(value, eqx.Module):
        return []
    return [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value) if f.metadata.get("static")]


def _dtype(name: Any, path: str) -> np.dtype:
    if name in _NUMPY_DTYPES:
        return np.dtype(str(name))
    if name in _ML_DTYPES:
        import ml_dtypes  # installed with jax

        found: np.dtype = np.dtype(getattr(ml_dtypes, name))
        return found
    raise fail(path, f"unknown dtype {name!r}")


class Reader:
    """The values a :class:`Writer` wrote, from the metadata and the file's arrays."""

    def __init__(self, path: str, arrays: Any) -> None:
        self.path = path
        self.arrays = arrays

    def value(self, data: Any, depth: int = 0) -> Any:
        if not isinstance(data, dict) or depth > MAX_DEPTH + 1:
            raise fail(self.path, "a value is malformed")
        kind = data.get("kind")
        if kind == "json":
            return data.get("value")
        if kind == "float":
            return float(str(data.get("value")))
        if kind == "repr":
            return SavedRepr(str(data.get("text", "")), str(data.get("type", "")))
        if kind == "array":
            return self.array(data)
        if kind == "dict":
            return {k: self.value(v, depth + 1) for k, v in data.get("items", [])}
        if kind in ("list", "tuple"):
            items = [self.value(v, depth + 1) for v in data.get("items", [])]
            return items if kind == "list" else tuple(items)
        if kind == "tree":
            return self.tree(data, depth)
        raise fail(self.path, f"unknown value kind {kind!r}")

    def tree(self, data: dict, depth: int) -> SavedTree:
        name = str(data.get("type", ""))
        items = []
        for key, value in data.get("items", []):
            if not (isinstance(key, list) and len(key) == 2 and key[0] in ("attr", "item", "index")):
                raise fail(self.path, "a pytree key is malformed")
            if not isinstance(key[1], (str, int)) or (
                key[0] != "item" and type(key[1]) is not (str if key[0] == "attr" else int)
            ):
                raise fail(self.path, "a pytree key is malformed")
            items.append((str(key[0]), key[1], self.value(value, depth + 1)))
        statics = {str(n): self.value(v, depth + 1) for n, v in data.get("static", [])}
        return saved_tree_class(name)(str(data.get("library", "")), items, statics)

    def array(self, data: dict) -> Any:
        host = self.host_array(data)
        if "key_impl" in data:
            impl = str(data["key_impl"])
            return guarded(
                lambda: jax.random.wrap_key_data(jax.numpy.asarray(host), impl=impl),
                lambda e: SavedRepr(f"key data of {impl} (not a key here: {format_exception(e)}): {host!r}", "Array"),
            )
        # A JAX array again (``x.sharding``, ``jnp`` on it), on the default device; a
        # 64-bit one stays numpy where JAX would cut it to 32 bits.
        value = host if jax.dtypes.canonicalize_dtype(host.dtype) != host.dtype else jax.device_put(host)
        where = data.get("sharding")
        if isinstance(where, str) and where:  # where it was, wherever it is shown (a tree's leaf too)
            program_shardings.keep_saved_label(value, where)
        return value

    def host_array(self, data: Any) -> np.ndarray:
        """A saved array as a read-only numpy array, its size checked against its shape."""
        if not isinstance(data, dict) or data.get("kind") != "array":
            raise fail(self.path, "an array is malformed")
        key = data.get("key")
        if key not in self.arrays:
            raise fail(self.path, f"the array {key!r} is missing")
        dtype = _dtype(data.get("dtype"), self.path)
        shape = tuple(int(n) for n in data.get("shape", []))
        raw = self.arrays[key]
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size != math.prod(shape) * dtype.itemsize:
            raise fail(self.path, f"the array {key!r} has the wrong size")
        value: np.ndarray = raw.view(dtype).reshape(shape)
        value.flags.writeable = False
        return value


# -- pytrees reopened ---------------------------------------------------------------------
class SavedTree:
    """A pytree reopened from a saved stop (a Module, a State, an optimizer state): the
    same children by the same keys, so ``model.l1.kernel`` and ``grads['l2']['kernel']``
    reach the same arrays, and a pytree again (``jax.tree_util`` walks it with the same
    key paths), though its class may not be importable here. Each saved type name gets a
    subclass of that name (``MLP``), so views name it as they did at the stop."""

    def __init__(self, library: str, items: list[tuple[str, Any, Any]], statics: dict[str, Any]) -> None:
        vars(self).update(_library=library, _items=tuple(items), _statics=dict(statics))

    @property
    def jaxdbg_saved_kind(self) -> str:
        """The library's kind it had (``nnx.Module``), read by the tree summaries."""
        return str(vars(self)["_library"])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_library", "_items", "_statics"):
            raise AttributeError(name)
        for kind, key, value in vars(self)["_items"]:
            if kind == "attr" and key == name:
                return value
        if name in vars(self)["_statics"]:
            return vars(self)["_statics"][name]
        raise AttributeError(f"{type(self).__name__} (reopened from a saved stop) has no field {name!r}")

    def __getitem__(self, key: Any) -> Any:
        for kind, k, value in vars(self)["_items"]:
            if kind != "attr" and k == key:
                return value
        raise KeyError(key)

    def keys(self) -> list[Any]:
        return [k for kind, k, _ in vars(self)["_items"] if kind == "item"]

    def __dir__(self) -> list[str]:
        names = [k for kind, k, _ in vars(self)["_items"] if kind == "attr"]
        return names + list(vars(self)["_statics"])

    def __repr__(self) -> str:
        items = vars(self)["_items"]
        if items and all(kind == "item" for kind, _, _ in items):
            inner = "{" + ", ".join(f"{k!r}: {v!r}" for _, k, v in items) + "}"
        elif items and all(kind == "index" for kind, _, _ in items):
            inner = "[" + ", ".join(repr(v) for _, _, v in items) + "]"
        else:
            inner = ", ".join(f"{k}={v!r}" if kind == "attr" else f"[{k!r}]={v!r}" for kind, k, v in items)
        return f"{type(self).__name__}({inner})"


class _Statics:
    """A tree's static fields in its pytree structure: compared by identity (they may be
    lists, which cannot be hashed)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values


def _flatten_with_keys(tree: SavedTree) -> tuple[list[tuple[Any, Any]], tuple]:
    tu = jax.tree_util
    children = []
    for kind, key, value in vars(tree)["_items"]:
        entry = tu.GetAttrKey(key) if kind == "attr" else tu.DictKey(key) if kind == "item" else tu.SequenceKey(key)
        children.append((entry, value))
    shape = tuple((kind, key) for kind, key, _ in vars(tree)["_items"])
    return children, (vars(tree)["_library"], shape, _Statics(vars(tree)["_statics"]))


_classes: dict[str, type[SavedTree]] = {}


def saved_tree_class(name: str) -> type[SavedTree]:
    """The SavedTree subclass named ``name`` (an identifier; else ``SavedTree``),
    registered as a pytree once."""
    name = name if name.isidentifier() else "SavedTree"
    if name not in _classes:
        cls = type(name, (SavedTree,), {"__module__": __name__})

        def unflatten(aux: tuple, children: Any, cls: type[SavedTree] = cls) -> SavedTree:
            library, shape, statics = aux
            return cls(library, [(kind, key, c) for (kind, key), c in zip(shape, children)], statics.values)

        jax.tree_util.register_pytree_with_keys(cls, _flatten_with_keys, unflatten)
        _classes[name] = cls
    return _classes[name]
