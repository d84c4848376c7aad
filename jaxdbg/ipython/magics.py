"""``%jaxdbg``: what jaxdbg is doing in this kernel, and switches for it.

``%jaxdbg`` alone shows a status table (HTML in a notebook, rich in a terminal).
``%jaxdbg NAME ARGS`` runs a subcommand from a table that other modules extend with
:func:`register_subcommand`. An unknown subcommand, or bad arguments, prints the usage
and changes nothing. ``%load_ext jaxdbg`` registers the magic; ``%unload_ext`` removes it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any, Callable

import jax
from markupsafe import Markup

from jaxdbg import config
from jaxdbg.capture import nan_watch, prints
from jaxdbg.capture.display import show
from jaxdbg.engine import backend_plugins, breakpoint_state, library_frames, registry
from jaxdbg.internals import ipykernel_kernel, ipykernel_parents, ipykernel_pump, ipykernel_subshells
from jaxdbg.ipython import sharding_hooks
from jaxdbg.job import membership as job
from jaxdbg.runtime import jax_routes, notices
from jaxdbg.views import theme

MAGIC_NAME = "jaxdbg"


class UsageError(ValueError):
    """Raised by a subcommand handler for arguments it cannot take; nothing was changed."""


@dataclasses.dataclass(frozen=True)
class Subcommand:
    name: str
    usage: str  # e.g. "nans on|off"
    handler: Callable[[str], None]  # receives the rest of the line; prints its own result


_SUBCOMMANDS: dict[str, Subcommand] = {}


def register_subcommand(name: str, usage: str, handler: Callable[[str], None]) -> None:
    """Add ``%jaxdbg NAME ARGS``; ``handler(args)`` raises :class:`UsageError` for bad args."""
    _SUBCOMMANDS[name] = Subcommand(name, usage, handler)


def unregister_subcommand(name: str) -> None:
    _SUBCOMMANDS.pop(name, None)


def subcommands() -> list[Subcommand]:
    return list(_SUBCOMMANDS.values())


def parse_switch(args: str) -> bool:
    """``on`` / ``off`` (also true/false, 1/0, yes/no) as a bool; UsageError otherwise."""
    word = args.strip().lower()
    if word in ("on", "true", "1", "yes"):
        return True
    if word in config.OFF_WORDS:
        return False
    raise UsageError(f"expected on or off, not {args.strip()!r}" if word else "expected on or off")


def usage() -> str:
    lines = ["Usage:", "  %jaxdbg                 show jaxdbg's status in this kernel"]
    lines += [f"  %jaxdbg {sub.usage}" for sub in _SUBCOMMANDS.values()]
    return "\n".join(lines)


def jaxdbg_magic(line: str = "") -> None:
    """The ``%jaxdbg`` line magic."""
    name, _, args = line.strip().partition(" ")
    if not name:
        show(status_table())
        return
    if name in ("help", "-h", "--help", "?"):
        print(usage())
        return
    sub = _SUBCOMMANDS.get(name)
    if sub is None:
        print(f"%jaxdbg: unknown subcommand {name!r}.\n{usage()}")
        return
    try:
        sub.handler(args.strip())
    except UsageError as e:
        print(f"%jaxdbg {name}: {e}\nusage: %jaxdbg {sub.usage}")


# -- the status table -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class StatusRow:
    item: str
    value: str
    detail: str = ""


class StatusTable:
    """Rows of (item, value, detail) that draw as HTML, with rich, or as plain text."""

    def __init__(self, rows: list[StatusRow]) -> None:
        self.rows = rows

    def __str__(self) -> str:
        width = max(len(r.item) for r in self.rows)
        vwidth = max(len(r.value) for r in self.rows)
        return "jaxdbg status\n" + "\n".join(
            f"  {r.item:<{width}}  {r.value:<{vwidth}}  {r.detail}".rstrip() for r in self.rows
        )

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        row = Markup(
            '<tr><th style="text-align:left;padding:1px 12px 1px 0">{}</th>'
            '<td style="text-align:left;padding:1px 12px 1px 0"><code>{}</code></td>'
            '<td style="text-align:left;padding:1px 0;{}">{}</td></tr>'
        )
        body = Markup("").join(row.format(r.item, r.value, theme.MUTED, r.detail) for r in self.rows)
        return str(
            Markup(
                '<div class="jaxdbg-status">'
                '<div style="font-weight:600">jaxdbg status</div>'
                '<table style="border-collapse:collapse">{}</table></div>'
            ).format(body)
        )

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.table import Table

        table = Table(title="jaxdbg status", title_justify="left", show_header=False, box=None, pad_edge=False)
        table.add_column(style="bold")
        table.add_column(style="cyan")
        table.add_column(style="dim")
        for r in self.rows:
            table.add_row(r.item, r.value, r.detail)
        yield table


_backend_set_by_magic: str | None = None
# Each jaxdbg variable (backend, library frames, breakpoints) as it was before a %jaxdbg
# subcommand first changed it, and as the last one left it, put back by %unload_ext: the
# backend named may be one the extension registered, and a notebook without the extension
# should not be left with its breakpoints silently out of the programs.
_environment_before_magic: dict[str, tuple[config.EnvironmentVariable, str | None, str | None]] = {}


def _set_by_magic(variable: config.EnvironmentVariable, value: str | None) -> None:
    """Set ``variable`` for a subcommand, keeping what %unload_ext needs to put it back."""
    before = _environment_before_magic.get(variable.name, (variable, variable.raw(), None))[1]
    variable.set(value)
    _environment_before_magic[variable.name] = (variable, before, variable.raw())


def backend_status() -> tuple[str, str]:
    """(selected backend, why it is the one)."""
    chosen = config.BACKEND.get().strip()
    if chosen:
        why = "set with %jaxdbg backend" if chosen == _backend_set_by_magic else f"from ${registry.ENV_VAR}"
        if chosen not in registry.registered_debuggers():
            why += "; not a known backend, so stops will fail"
        return chosen, why
    available = registry.available_debuggers()
    if not available:
        return "none", "no backend can run here"
    others = ", ".join(available[1:])
    return available[0], (
        "the preferred backend that can run here" + (f" (also available: {others})" if others else "")
    )


def panel_status() -> tuple[str, str]:
    """How a paused cell's panel receives clicks here: (subshell | pump | typed prompt, why)."""

    kernel = ipykernel_kernel.current_kernel()
    if kernel is None:
        return "typed prompt", "not running in an IPython kernel"
    if importlib.util.find_spec("ipywidgets") is None:
        return "typed prompt", "ipywidgets is not installed"
    version = ".".join(map(str, ipykernel_kernel.kernel_version() or ())) or "?"
    if ipykernel_subshells.supports_subshells(kernel):
        return "subshell", (
            f"ipykernel {version}: widget messages go to a private kernel subshell while the cell is paused"
        )
    if ipykernel_pump.supports_pump(kernel):
        return "pump", (
            f"ipykernel {version} has no subshells: a helper thread handles "
            "queued widget messages while the cell is paused"
        )
    return "typed prompt", (f"ipykernel {version} cannot handle widget messages while a cell is paused")


def panel_drawing_status() -> tuple[str, str]:
    """Whether this frontend draws the debugger panel, as the stops found out."""

    drawing = config.PANEL_DRAWING
    if drawing.forced:
        return "forced", ("set with %jaxdbg backend widgets: stops show the panel and never fall back to the prompt")
    kernel = ipykernel_kernel.current_kernel()
    if kernel is None:
        return "not used", "not running in an IPython kernel: stops use the prompt"
    try:
        parent = ipykernel_parents.cell_parent(kernel)[1] or {}
    except Exception:
        parent = {}
    client = str((parent.get("header") or {}).get("session") or "")
    seen = drawing.of(client)
    heard = drawing.heard_after.get(client, {})
    after = ", ".join(f"{kind} {seconds:.2f} s" for kind, seconds in heard.items())
    if seen is config.PanelDrawn.DRAWN:
        return str(seen), "stops use the panel" + (f" (heard after {after})" if after else "")
    if seen is config.PanelDrawn.NOT_DRAWN:
        return str(seen), "stops use the prompt (%jaxdbg backend widgets shows the panel again)"
    return str(seen), (
        f"the first stop shows it and waits up to {config.PANEL_DRAW_WAIT_S:g} s "
        "for this frontend to draw it, else answers at the prompt"
    )


def _hooks_status() -> tuple[str, str]:

    parts = [
        f"jax.debug.breakpoint: {'jaxdbg' if jax_routes.is_installed() else 'JAX'}",
        f"sharding: {'jaxdbg' if sharding_hooks.is_installed() else 'JAX'}",
    ]
    parts.append(f"print: {'jaxdbg' if prints.routing_enabled() else 'JAX'}")
    installed = jax_routes.is_installed() or sharding_hooks.is_installed()
    return ("installed" if installed else "not installed"), "; ".join(parts)


def _devices_status() -> tuple[str, str]:
    import jax

    counts: dict[str, int] = {}
    for device in jax.devices():
        counts[device.platform] = counts.get(device.platform, 0) + 1
    value = ", ".join(f"{platform} ×{n}" for platform, n in counts.items())
    detail = f"default backend {jax.default_backend()}"
    if jax.process_count() > 1:
        detail += f"; process {jax.process_index()} of {jax.process_count()}"
    return value, detail


FLAGS = tuple(flag.name for flag in config.JAX_FLAGS)


def status_table() -> StatusTable:

    rows = [StatusRow("backend", *backend_status())]
    rows += [
        StatusRow(f"{name} backend", "not loaded", why) for name, why in sorted(backend_plugins.load_failures().items())
    ]
    rows += [
        StatusRow("JAX hooks", *_hooks_status()),
        StatusRow("panel clicks", *panel_status()),
        StatusRow("panel", *panel_drawing_status()),
        StatusRow("devices", *_devices_status()),
    ]
    in_job = job.describe()
    if in_job is not None:
        rows.append(StatusRow("job", *in_job))
    rows.append(StatusRow("breakpoints", *_breakpoints_status()))
    rows.append(StatusRow("library frames", *_library_frames_status()))
    for flag in config.JAX_FLAGS:
        rows.append(StatusRow(flag.name, "on" if flag.get() else "off"))
    return StatusTable(rows)


def _library_frames_status() -> tuple[str, str]:
    if library_frames.shown():
        return "shown", "listed one by one in where and the panel ($JAXDBG_LIBRARY_FRAMES)"
    return "folded", "each run of them is one row, up / down step over them (%jaxdbg library_frames on lists them)"


# -- the built-in subcommands ---------------------------------------------------------


def _backend(args: str) -> None:
    global _backend_set_by_magic
    name = args.strip()
    if not name:
        raise UsageError("name a backend: " + ", ".join(registry.registered_debuggers() + ["auto"]))
    if name != "auto" and name not in registry.registered_debuggers():
        raise UsageError(f"unknown backend {name!r}; known: " + ", ".join(registry.registered_debuggers() + ["auto"]))
    config.PANEL_DRAWING.force(name == "widgets")  # the panel, even where none was drawn
    if name == "auto":
        _set_by_magic(config.BACKEND, None)
        _backend_set_by_magic = None
        print(f"jaxdbg backend: automatic ({backend_status()[0]})")
        return
    _set_by_magic(config.BACKEND, name)
    _backend_set_by_magic = name
    print(f"jaxdbg backend: {name}")


def _flag_switch(flag: config.JaxFlag) -> Callable[[str], None]:
    def handler(args: str) -> None:
        value = parse_switch(args)
        flag.set(value)
        print(f"{flag.name} = {value}")

    return handler


def _reset(args: str) -> None:
    if args:
        raise UsageError("reset takes no arguments")
    breakpoint_state.reset()
    notices.notice("every breakpoint is enabled again and ignore counts are cleared")


def _sharding(args: str) -> None:

    if parse_switch(args):
        sharding_hooks.install()
        print("jaxdbg sharding views: on (jax.debug sharding functions and Sharding/Mesh results)")
    else:
        sharding_hooks.uninstall()
        print("jaxdbg sharding views: off (JAX's own functions and reprs)")


def _print(args: str) -> None:
    prints.set_routing(parse_switch(args))
    where = "the print log" if prints.routing_enabled() else "stdout, as JAX prints them"
    notices.notice(f"jax.debug.print calls go to {where}")


register_subcommand("backend", "backend NAME|auto", _backend)
for _flag in config.JAX_FLAGS:
    if _flag.switch is not None:
        register_subcommand(_flag.switch, f"{_flag.switch} on|off", _flag_switch(_flag))
del _flag


def _nans(args: str) -> None:
    value = parse_switch(args)
    nan_watch.set_enabled(value)
    print(
        f"jax_debug_nans = {value}"
        + (
            "; a NaN opens the debugger where it was made (also under pmap, shard_map and in "
            "gradients), for functions jitted or pmapped from now on"
            if value
            else ""
        )
    )


def _infs(args: str) -> None:
    value = parse_switch(args)
    nan_watch.set_enabled(value, infs=True)
    print(
        f"jax_debug_infs = {value}"
        + (
            "; an Inf opens the debugger where it was made (also under pmap, shard_map and in "
            "gradients), for functions jitted or pmapped from now on"
            if value
            else ""
        )
    )


register_subcommand("nans", "nans on|off", _nans)
register_subcommand("infs", "infs on|off", _infs)
register_subcommand("reset", "reset", _reset)
register_subcommand("sharding", "sharding on|off", _sharding)
register_subcommand(config.PRINT_ROUTING.name, f"{config.PRINT_ROUTING.name} on|off", _print)


def _library_frames(args: str) -> None:
    on = parse_switch(args)
    _set_by_magic(config.LIBRARY_FRAMES, library_frames.setting(on))
    print("library frames: " + ", ".join(_library_frames_status()))


register_subcommand("library_frames", "library_frames on|off", _library_frames)


def _breakpoints_status() -> tuple[str, str]:
    if config.breakpoints_on():
        return "on", "they stop (%jaxdbg breakpoints off leaves them out of the programs, which then run at full speed)"
    return "off", "left out of every program traced since ($JAXDBG_BREAKPOINTS)"


def _breakpoints(args: str) -> None:
    on = parse_switch(args)
    if on == config.breakpoints_on():  # as it is: nothing to compile again
        print("jaxdbg breakpoints: " + ", ".join(_breakpoints_status()))
        return
    if job.current() is not None:
        # A program with its stops and one without them hold different collectives: the
        # processes of a job would wait on each other for ever.
        raise UsageError(
            f"every process of a jax.distributed job must compile the same program: set "
            f"${config.BREAKPOINTS.name}={'on' if on else 'off'} in each before it starts"
        )
    _set_by_magic(config.BREAKPOINTS, None if on else "off")
    _compile_again()
    print(
        f"jaxdbg breakpoints: {'on' if on else 'off'}; every jitted function is traced and compiled again "
        f"at its next call, {'with' if on else 'without'} its breakpoints"
    )


register_subcommand("breakpoints", "breakpoints on|off", _breakpoints)


def _compile_again() -> None:
    """A program compiled before holds its stops, or lacks them: JAX traces and compiles
    each jitted function again at its next call, so that it follows the switch."""
    jax.clear_caches()


# -- the extension feature ------------------------------------------------------------

_previous_magic: list[Any] = []


def load(shell: Any) -> None:
    """Register ``%jaxdbg`` (remembering any magic of that name it replaces)."""
    if shell is None or _previous_magic:
        return
    line_magics = shell.magics_manager.magics["line"]
    _previous_magic.append(line_magics.get(MAGIC_NAME))
    shell.register_magic_function(jaxdbg_magic, magic_kind="line", magic_name=MAGIC_NAME)


def unload(shell: Any) -> None:
    """Remove ``%jaxdbg`` (or put back the magic it replaced), and put back the settings
    its subcommands changed (backend, library frames, breakpoints)."""
    if shell is None or not _previous_magic:
        return
    previous = _previous_magic.pop()
    _restore_environment()
    manager = shell.magics_manager
    if previous is None:
        manager.magics["line"].pop(MAGIC_NAME, None)
        if hasattr(manager.user_magics, MAGIC_NAME):
            delattr(manager.user_magics, MAGIC_NAME)
    else:
        manager.magics["line"][MAGIC_NAME] = previous


def _restore_environment() -> None:
    """Put each variable a subcommand changed back as it was before the first change,
    unless it changed since (``library_frames on`` typed at a stop): the latest choice stands."""
    global _backend_set_by_magic
    breakpoints_were_on = config.breakpoints_on()
    if config.BACKEND.name in _environment_before_magic:
        config.PANEL_DRAWING.force(False)
        _backend_set_by_magic = None
    for variable, before, left in _environment_before_magic.values():
        if variable.raw() == left:
            variable.set(before)
    _environment_before_magic.clear()
    if config.breakpoints_on() != breakpoints_were_on:
        _compile_again()
