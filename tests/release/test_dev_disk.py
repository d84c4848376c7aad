"""`dev.py` says up front when the disk cannot hold the venvs, instead of failing later deep
inside pip with "No space left on device"."""

from __future__ import annotations

import collections
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
Usage = collections.namedtuple("Usage", "total used free")


@pytest.fixture
def dev(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))  # dev.py and devtools/ are not installed
    module = importlib.import_module("dev")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    return module


def _free(monkeypatch, dev, gib: float) -> None:
    monkeypatch.setattr(dev.shutil, "disk_usage", lambda path: Usage(100 * 2**30, 0, int(gib * 2**30)))


def test_a_short_disk_is_named_before_the_build(dev, monkeypatch, capsys):
    _free(monkeypatch, dev, 1.5)
    dev.warn_if_disk_short()
    out = capsys.readouterr().out
    assert "only 1.5 GiB free" in out and f"need about {dev.DISK_NEEDED_GIB} GiB" in out
    assert out.count("GiB free") == 1  # the checkout and /tmp share this disk: said once


def test_enough_room_or_venvs_already_built_say_nothing(dev, monkeypatch, tmp_path, capsys):
    _free(monkeypatch, dev, dev.DISK_NEEDED_GIB + 1)
    dev.warn_if_disk_short()
    assert capsys.readouterr().out == ""
    _free(monkeypatch, dev, 0.5)
    (tmp_path / ".nox" / "tests" / "bin").mkdir(parents=True)
    (tmp_path / ".nox" / "tests" / "bin" / "python").touch()
    dev.warn_if_disk_short()
    assert capsys.readouterr().out == ""
