"""The panel as a browser drives it: its comm messages, its state, and waits on both.

A kernel test (through :mod:`support.kernel_harness`) sends what the panel's browser
code sends (``model.send``: a typed line, a button's command line) and reads back the
widget state the kernel synced.
"""

from __future__ import annotations

import re
import textwrap

from support import kernel_harness

SETUP = textwrap.dedent("""
    import jax, jax.numpy as jnp
    import jaxdbg, jaxdbg_widgets
    print("backends", jaxdbg.available_debuggers(), "devices", jax.device_count())
""")


# IPython 7 (Colab's) names a cell's module-level code "<cell line: N>", later ones "<module>".
MODULE_HEADING = r"in (<module>|<cell line: \d+>)$"


PANEL_WIDGET = kernel_harness.PANEL_WIDGET


def hold(kernel, cid: str) -> None:
    """Act as a frontend that holds and draws panel ``cid`` (once per panel; a harness
    that draws panels has said so the moment the panel opened)."""
    kernel.say_drawn(cid)


def panels(kernel) -> dict[str, dict]:
    """comm_id -> state of every open panel widget."""
    return {cid: st for cid, st in kernel.widgets().items() if st.get("_anywidget_id") == PANEL_WIDGET}


def live_panel(kernel, timeout: float = 120) -> str:
    """The open panel whose stop has not ended (there is at most one)."""

    def look():
        live = [cid for cid, st in panels(kernel).items() if not st.get("status", {}).get("finished")]
        assert len(live) <= 1, live
        return live[0] if live else None

    cid = kernel.wait_for(look, timeout, "a live debugger panel")
    hold(kernel, cid)
    return cid


def state(kernel, cid: str) -> dict:
    return kernel.widgets().get(cid, {})


_ids = iter(range(1, 10**9))


def press(kernel, line: str, cid: str | None = None) -> str:
    """A button of the panel (Continue, Up, a frame row...): its command line."""
    cid = cid or live_panel(kernel)
    kernel.send_custom(cid, {"type": "run", "id": f"test:{next(_ids)}", "line": line, "typed": False})
    return cid


def submit(kernel, text: str, pretty: bool = False, cid: str | None = None) -> str:
    """A line typed into the console and Enter: the browser sends the text itself."""
    cid = cid or live_panel(kernel)
    kernel.send_custom(cid, {"type": "run", "id": f"test:{next(_ids)}", "line": text, "typed": True, "pretty": pretty})
    return cid


def log_text(st: dict) -> str:
    """The console as the browser shows it: echoed commands and their output."""
    lines = []
    for e in st.get("log", []):
        if e["command"]:
            lines.append("(jaxdbg) " + ("pp " if e["pretty"] else "") + e["command"])
        if e["text"]:
            lines.append(e["text"])
    return "\n".join(lines)


def wait_log(kernel, needle: str, cid: str | None = None, timeout: float = 60) -> str:
    """The live panel's console once it matches ``needle`` (a regex)."""
    cid = cid or live_panel(kernel)
    try:
        return kernel.wait_for(
            lambda: (t := log_text(state(kernel, cid))) and re.search(needle, t) and t,
            timeout,
            f"{needle!r} in the console",
        )
    except TimeoutError as exc:  # what the panel and the kernel showed instead
        raise TimeoutError(f"{exc}; {what_was_shown(kernel, cid)}") from None


def what_was_shown(kernel, cid: str) -> str:
    """For a failed wait: the panel's status and console, and the kernel's printed text."""
    st = state(kernel, cid)
    printed = "".join(m["content"].get("text", "") for m in kernel.messages() if m["msg_type"] == "stream")
    return (
        f"the panel's status {st.get('status')!r}; its console:\n{log_text(st)[-2000:]}\n"
        f"the kernel printed:\n{printed[-3000:]}"
    )


def wait_banner(kernel, needle: str, cid: str | None = None, timeout: float = 60) -> str:
    cid = cid or live_panel(kernel)
    return kernel.wait_for(
        lambda: (b := state(kernel, cid).get("status", {}).get("banner", "")) and re.search(needle, b) and b,
        timeout,
        f"{needle!r} in the banner",
    )


def wait_source(kernel, needle: str, cid: str | None = None, timeout: float = 60) -> dict:
    """The source window once its heading matches ``needle``."""
    cid = cid or live_panel(kernel)
    return kernel.wait_for(
        lambda: (src := state(kernel, cid).get("source", {})) and re.search(needle, src.get("heading", "")) and src,
        timeout,
        f"{needle!r} in the source heading",
    )


def wait_panel(kernel, msg_id: str, count: int = 1) -> None:
    """Wait until the cell shows its ``count``-th panel, as a browser would before a click."""

    def shown():
        return (
            sum(
                1
                for m in kernel.result(msg_id).messages
                if m["msg_type"] == "display_data"
                and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
            )
            >= count
        )

    try:
        kernel.wait_for(shown, 120, f"panel {count} displayed")
    except TimeoutError as exc:  # say what the cell did instead
        raise TimeoutError(f"{exc}; the cell so far: {kernel.result(msg_id)!r}") from None
    for cid in comms_opened_by(kernel.result(msg_id)) & set(panels(kernel)):
        hold(kernel, cid)


def static_outputs(result) -> list[str]:
    return [
        m["content"]["data"].get("text/html", "") for m in result.messages if m["msg_type"] == "update_display_data"
    ]


def static_texts(result) -> list[str]:
    return [
        m["content"]["data"].get("text/plain", "") for m in result.messages if m["msg_type"] == "update_display_data"
    ]


def closed(kernel, comm_id: str) -> bool:
    return comm_id not in kernel.widgets()


def comms_opened_by(result) -> set[str]:
    return {m["content"]["comm_id"] for m in result.messages if m["msg_type"] == "comm_open"}


def answer(kernel, cid: str, kind: str, seen: int = 0, timeout: float = 60) -> tuple[dict, list[bytes]]:
    """The panel's next custom message of ``kind`` after the first ``seen`` ones, with its buffers."""

    def look():
        found = [(m, b) for m, b in kernel.custom_with_buffers(cid) if isinstance(m, dict) and m.get("type") == kind]
        return found[seen] if len(found) > seen else None

    return kernel.wait_for(look, timeout, f"a {kind} message")
