"""What a finished stop leaves in the cell: a summary that needs no kernel and no widget.

``text/plain`` reads on its own (nbconvert to text, a terminal, a diff); the HTML keeps
its meaning without styles, as in an untrusted notebook where the frontend strips them:
words and arrows carry the meaning, styles only decorate. All text is escaped.
"""

from __future__ import annotations

from typing import Any, Sequence

from markupsafe import Markup, escape

from jaxdbg.frames import display_filename
from jaxdbg.outputs import Resume
from jaxdbg.session import Session

_ENDED = {Resume.CONTINUE: "Continued.", Resume.SKIP: "Continued, skipping the rest of the batch.",
          Resume.QUIT: "Quit: the computation was stopped."}
if hasattr(Resume, "CONTINUE_ALL"):  # the many-stops engine
    _ENDED[Resume.CONTINUE_ALL] = "Continued past every remaining stop of this breakpoint."


class StaticSummary:
    """The stop's banner, the line it stopped at, the commands run and how it ended."""

    def __init__(self, session: Session, log: Sequence[Any]) -> None:
        self.session = session
        self.entries = [entry.state() for entry in log]

    def ended(self) -> str:
        resume = self.session.resume
        # A resume the engine added later (continue all, ...) reads as its own name.
        return _ENDED.get(resume, f"Ended ({resume})." if resume is not None else "Ended.")

    def _stop_line(self) -> str:
        f = self.session.frames[0]
        line = f.line().strip()
        return f"{display_filename(f.filename)}:{f.lineno}" + (f": {line}" if line else "")

    @staticmethod
    def _echo(entry: dict) -> str:
        cut = f" … [{entry['command_cut']:,} more characters]" if entry["command_cut"] else ""
        return f"(jaxdbg) {'pp ' if entry['pretty'] else ''}{entry['command']}{cut}"

    @staticmethod
    def _result(entry: dict) -> str:
        cut = f"\n… [{entry['cut']:,} more characters]" if entry["cut"] else ""
        return entry["text"] + cut

    def text(self) -> str:
        lines = [self.session.banner(), f"  at {self._stop_line()}"]
        for entry in self.entries:
            if entry["command"]:
                lines.append(self._echo(entry))
            if entry["text"]:
                lines.append(self._result(entry))
        lines.append(self.ended())
        return "\n".join(lines)

    def html(self) -> str:
        parts = [Markup('<div class="jaxdbg-static" style="border:1px solid var(--jp-border-color1, #ccc);'
                        'padding:4px 8px;font-family:var(--jp-code-font-family, monospace);font-size:12px;">'),
                 Markup("<div><b>jaxdbg:</b> <b>{}</b></div>").format(self.session.banner()),
                 Markup('<div class="jaxdbg-stop-line">at <code>{}</code></div>').format(self._stop_line())]
        if self.entries:
            body = []
            for entry in self.entries:
                if entry["command"]:
                    body.append(Markup('<span class="jaxdbg-in">{}</span>').format(self._echo(entry)))
                if entry["text"]:
                    text = ("*** " if entry["error"] and not entry["text"].startswith("***") else "") \
                        + self._result(entry)
                    body.append(escape(text))
            parts.append(Markup('<pre class="jaxdbg-log" style="margin:4px 0;white-space:pre-wrap;">{}</pre>')
                         .format(Markup("\n").join(body)))
        parts.append(Markup('<div class="jaxdbg-ended"><i>{}</i></div></div>').format(self.ended()))
        return str(Markup("").join(parts))

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        return {"text/plain": self.text(), "text/html": self.html()}
