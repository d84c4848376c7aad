"""Each module's tests in reverse order (``pytest --reverse-order``, see tests/conftest.py).

A module's kernel tests share one kernel, so a test that passes only after another of
its module ran (a watch, a setting or a variable left in that kernel) fails this way.
"""

from __future__ import annotations

import itertools

import pytest


def within_modules(items: list[pytest.Item]) -> list[pytest.Item]:
    groups = [list(group) for _, group in itertools.groupby(items, key=lambda item: item.nodeid.split("::")[0])]
    return [item for group in groups for item in reversed(group)]
