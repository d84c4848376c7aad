"""Drive the terminal debugger with scripted input and capture what it prints."""

from __future__ import annotations

import io


class Transcript:
    """Feeds ``commands`` to every stop and records the terminal output.

    Pass ``**t.options`` to a breakpoint; read ``t.text`` afterwards. Stops
    beyond the script see end of input, which quits (as in pdb).
    """

    def __init__(self, *commands: str) -> None:
        self.stdin = io.StringIO("".join(c + "\n" for c in commands))
        self.stdout = io.StringIO()

    @property
    def options(self) -> dict:
        return {"backend": "cli", "stdin": self.stdin, "stdout": self.stdout}

    @property
    def text(self) -> str:
        return self.stdout.getvalue()

    def stops(self) -> list[str]:
        return [line for line in self.text.splitlines() if line.startswith("Stopped at")]

    def answers(self, command: str) -> list[str]:
        """What the debugger printed after each occurrence of ``command``."""
        chunks = self.text.split(f"(jaxdbg) {command}\n")[1:]
        return [chunk.split("(jaxdbg) ")[0].split("\nStopped at")[0].strip() for chunk in chunks]
