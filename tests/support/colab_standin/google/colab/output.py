"""Stand-in ``google.colab.output``: ``eval_js`` answered over stdin, every script recorded.

Colab's frontend evaluates the script, awaits a returned promise, and sends the value
back on the kernel's stdin channel. Here the value is read with ``input()`` on that
same channel, with a prompt that starts with ``EVAL_JS_PROMPT`` so a test can tell it
from a typed prompt. ``JAXDBG_TEST_COLAB_EVAL_JS=fail`` makes ``eval_js`` raise, as it
does outside Colab; each call is also appended, as JSON, to the file named by
``JAXDBG_TEST_COLAB_LOG``.
"""

from __future__ import annotations

import json
import os

EVAL_JS_PROMPT = "[colab eval_js] "

scripts: list[str] = []


def _record(kind: str, **fields) -> None:
    path = os.environ.get("JAXDBG_TEST_COLAB_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"kind": kind, **fields}) + "\n")


def eval_js(script: str, ignore_result: bool = False, timeout_sec: float | None = None):
    scripts.append(script)
    _record("eval_js", script=script)
    if os.environ.get("JAXDBG_TEST_COLAB_EVAL_JS") == "fail":
        raise RuntimeError("eval_js is not available in this frontend")
    reply = input(EVAL_JS_PROMPT)
    return None if ignore_result else reply
