"""Source lines as runs of pygments tokens, line by line: what every highlighted view of
source draws (the notebook HTML colours the runs inline, the panel by CSS class)."""

from __future__ import annotations

from typing import Any

from pygments.lexers import PythonLexer

# Lines in, lines out: no newline stripped or added, so the rows match the lines given.
_LEXER = PythonLexer(stripnl=False, ensurenl=False)


def token_lines(lines: list[str]) -> list[list[tuple[Any, str]]]:
    """Each line's ``(token type, text)`` runs, in order. The lines are lexed together, so
    a token spanning lines (a triple-quoted string) is lexed as one and cut at each newline."""
    out: list[list[tuple[Any, str]]] = [[] for _ in lines]
    row = 0
    for kind, text in _LEXER.get_tokens("\n".join(lines)):
        for i, piece in enumerate(text.split("\n")):
            row += 1 if i else 0
            if piece and row < len(out):
                out[row].append((kind, piece))
    return out
