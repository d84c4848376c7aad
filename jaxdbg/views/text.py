"""Plain text for the engine's data: the text/plain twin of every HTML view."""

from __future__ import annotations

from jaxdbg.engine.outputs import StopSummary
from jaxdbg.runtime import phrases
from jaxdbg.views import array_picture_view, watch_views


def clip(text: str, limit: int | None) -> tuple[str, int]:
    """``(shown, hidden character count)`` for a log entry cut at ``limit``."""
    if limit is None or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def clipped_note(hidden: int) -> str:
    return f"... {phrases.more_characters(hidden)}"


def stop_summary(summary: StopSummary, limit: int | None = None) -> str:
    """A finished stop as text: banner, the stopped-at line, the log, the outcome."""
    lines = [summary.banner]
    if summary.line:
        lines.append(f"{summary.location}: {summary.line}")
    for entry in summary.log:
        if entry.command:
            lines.append(phrases.echo(entry.command))
        shown, hidden = clip(entry.text, limit)
        if shown:
            lines.append(shown)
        if hidden:
            lines.append(clipped_note(hidden))
    for name, pic in summary.pictures:  # the pictures' text twin: what each shows
        lines.append(f"{name}: {array_picture_view.header_text(pic)}  {array_picture_view.legend_text(pic)}")
    if summary.watches:
        lines.append(watch_views.table_text(summary.watches))
    lines.append(summary.outcome)
    return "\n".join(lines)
