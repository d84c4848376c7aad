"""What a plugin needs, at one public path that later moves inside jaxdbg do not break.

- **a command**: :func:`command` over ``run(session, arg) -> Output``, with an
  :class:`ArgumentKind`; a fixed word after it (``continue all``) is :func:`add_sub_word`;
  :func:`error` is a command's refusal.
- **a backend**: a :class:`Frontend` that :func:`drive` runs, registered with
  :func:`register_debugger`; it raises :class:`NoInput` or :class:`FallBack` instead of
  looping or falling back itself.
- **what** ``%load_ext jaxdbg`` **also loads**: :class:`ExtensionFeature`,
  :func:`add_feature`, :func:`remove_feature`; a ``%jaxdbg`` subcommand:
  :func:`register_subcommand` (raising :class:`UsageError`).
- **the breakpoints a stop knows**: :func:`breakpoint_rows` (:class:`BreakpointRow` each).
- **jaxdbg's own messages**: :func:`notice`.

An installed package declares its backend under
``[project.entry-points."jaxdbg.backends"]``; see ``docs/api.md``.
"""

from __future__ import annotations

from jaxdbg.engine.breakpoint_state import BreakpointRow
from jaxdbg.engine.breakpoint_state import rows as breakpoint_rows
from jaxdbg.engine.command_table import ArgumentKind, add_sub_word, command, error
from jaxdbg.engine.outputs import Output, OutputKind, Resume
from jaxdbg.engine.registry import register_debugger, unregister_debugger
from jaxdbg.engine.session import Session
from jaxdbg.frontends.driver import FallBack, Frontend, NoInput, drive
from jaxdbg.ipython.extension import ExtensionFeature, add_feature, remove_feature
from jaxdbg.ipython.magics import UsageError, register_subcommand
from jaxdbg.runtime.notices import notice

__all__ = [
    "ArgumentKind",
    "BreakpointRow",
    "ExtensionFeature",
    "FallBack",
    "Frontend",
    "NoInput",
    "Output",
    "OutputKind",
    "Resume",
    "Session",
    "UsageError",
    "add_feature",
    "add_sub_word",
    "breakpoint_rows",
    "command",
    "drive",
    "error",
    "notice",
    "register_debugger",
    "register_subcommand",
    "remove_feature",
    "unregister_debugger",
]
