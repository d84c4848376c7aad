"""Installed libraries' frames folded in ``where``, stepped over by ``up`` / ``down``, and
the one setting that shows them (a command, ``%jaxdbg library_frames``, an environment
variable). Real stops in a Flax NNX ``nnx.jit`` step and in an installed package."""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import pytest

from jaxdbg import config
from jaxdbg.engine import library_frames
from jaxdbg.engine.frames import Frame
from jaxdbg.ipython import magics
from support import nnx_steps
from support.transcript import Transcript


@pytest.fixture(autouse=True)
def folded_by_default(monkeypatch):
    monkeypatch.delenv(config.LIBRARY_FRAMES.name, raising=False)
    yield
    config.LIBRARY_FRAMES.set(None)


def test_library_of_names_the_installed_package():
    assert library_frames.library_of("/venv/lib/python3.11/site-packages/flax/nnx/graph.py") == "flax"
    assert library_frames.library_of("/usr/lib/python3/dist-packages/six.py") == "six"
    assert library_frames.library_of(r"C:\py\Lib\site-packages\optax\_src\base.py") == "optax"
    assert library_frames.library_of("/home/me/project/train.py") == ""
    assert library_frames.library_of("/tmp/ipykernel_1/123.py") == ""


def _frames(*files: str) -> list[Frame]:
    return [Frame(f, 1, f"f{i}", {}, {}, [], 1) for i, f in enumerate(files)]


LIB = "/v/site-packages/{}/m.py"


def test_layout_folds_runs_but_never_the_innermost_or_selected_frame():
    frames = _frames(
        LIB.format("mylayer"), "/me/a.py", LIB.format("flax"), LIB.format("flax"), LIB.format("optax"), "/me/b.py"
    )
    rows = library_frames.layout(frames, current=1)
    assert rows[:2] == [0, 1] and rows[3] == 5
    fold = rows[2]
    assert isinstance(fold, library_frames.Fold) and fold.text == "… 3 frames in flax, optax"
    # the selected frame splits the run
    assert library_frames.layout(frames, current=3)[2:] == [
        library_frames.Fold(2, 2, ("flax",)),
        3,
        library_frames.Fold(4, 4, ("optax",)),
        5,
    ]
    assert library_frames.step(frames, 1, 1, older=True) == 5
    assert library_frames.step(frames, 5, 1, older=False) == 1
    assert library_frames.step(frames, 1, 1, older=False) == 0  # the stop's own frame, a library's
    assert library_frames.step(frames, 5, 1, older=True) is None
    config.LIBRARY_FRAMES.set("on")
    assert library_frames.layout(frames, current=1) == [0, 1, 2, 3, 4, 5]
    assert library_frames.step(frames, 1, 1, older=True) == 2


def _nnx_stop(t: Transcript) -> None:
    nnx_steps.stop_inside_nnx_grad(t.options)


def test_flax_frames_fold_in_where_and_up_down_step_over_them():
    t = Transcript(
        "where", "up", "where", "down", "library_frames on", "up", "library_frames off", "library_frames maybe", "c"
    )
    _nnx_stop(t)
    where = t.answers("where")[0].splitlines()
    assert where[0].startswith(">  0  loss_fn  ")
    folds = [line.strip() for line in where if line.strip().startswith("…")]
    # nnx.grad's and nnx.jit's frames between loss_fn and train_step, and above it
    assert folds[:2] == ["… 3 frames in flax", "… 2 frames in flax"]
    assert any(" train_step  " in line for line in where)
    assert "site-packages/flax" not in t.answers("where")[0]
    assert "in train_step" in t.answers("up")[0].splitlines()[0]  # over flax's frames, at once
    again = t.answers("where")[1].splitlines()
    assert again[0].startswith("0  loss_fn") and any(line.startswith(">") and " train_step " in line for line in again)
    assert "in loss_fn" in t.answers("down")[0].splitlines()[0]
    shown = t.answers("library_frames on")[0]
    assert "site-packages/flax/" in shown and "…" not in shown
    assert "site-packages/flax/" in t.answers("up")[1].splitlines()[0]  # up stops in flax now
    assert "…" in t.answers("library_frames off")[0]
    assert t.answers("library_frames maybe")[0].startswith("*** library_frames takes no argument but 'on' or 'off'")
    assert len(t.stops()) == 1


def test_the_environment_variable_and_the_magic_set_the_same_setting(monkeypatch, capsys):
    monkeypatch.setenv(config.LIBRARY_FRAMES.name, "on")
    t = Transcript("where", "c")
    _nnx_stop(t)
    assert "…" not in t.answers("where")[0] and "site-packages/flax/" in t.answers("where")[0]
    magics.jaxdbg_magic("library_frames off")
    assert config.LIBRARY_FRAMES.raw() is None and "library frames: folded" in capsys.readouterr().out
    assert "folded" in str(magics.status_table())
    magics.jaxdbg_magic("library_frames on")
    assert library_frames.shown() and "library frames: shown" in capsys.readouterr().out
    assert "shown" in str(magics.status_table())


def test_a_stop_inside_an_installed_package_opens_there(tmp_path, monkeypatch):
    package = tmp_path / "site-packages" / "mylayer"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import jaxdbg\n\ndef layer(x, options):\n    y = x * 2\n    jaxdbg.breakpoint(**options)\n    return y\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    monkeypatch.delitem(sys.modules, "mylayer", raising=False)
    import mylayer

    t = Transcript("where", "p y", "up", "down", "c")

    @jax.jit
    def apply(x):
        return mylayer.layer(x, t.options) + 1

    apply(jnp.float32(1))
    assert t.stops()[0].startswith("Stopped at ") and "site-packages/mylayer/__init__.py:5 in layer" in t.stops()[0]
    assert t.answers("where")[0].splitlines()[0].startswith(">  0  layer  ")
    assert t.answers("p y") == ["Array(2., dtype=float32)"]
    assert "in apply" in t.answers("up")[0].splitlines()[0]
    assert "in layer" in t.answers("down")[0].splitlines()[0]
