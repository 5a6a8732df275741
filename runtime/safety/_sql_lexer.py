"""The SQL lexer behind :mod:`runtime.safety.sql`: whitespace and comments dropped, string
literals opaque, and a refusal for anything that different databases read differently."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "UnsupportedSqlError", "tokenize"]


class UnsupportedSqlError(ValueError):
    """The statement cannot be read safely; the message says why, for the model to see."""


_LEXER = re.compile(
    r"""
    (?P<space>\s+)
    | (?P<comment>--(?=\s|$)[^\n]*|/\*(?!M?!).*?\*/)
    | (?P<string>'(?:[^'\\]|'')*')
    | (?P<quoted>"(?:[^"\\]|"")*"|`(?:[^`\\]|``)*`)
    | (?P<word>[^\W\d]\w*)
    | (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<bad>--|/\*|['"`])
    | (?P<punct>[(),.;*=<>!+\-/%|&^~:?@\[\]])
    """,
    re.VERBOSE | re.DOTALL,
)
_BAD = {
    "--": "a '--' comment must be followed by a space",
    "/*": "a /* comment is not closed (or is a /*! executable comment)",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` is word, quoted (identifier), string, number or punct; ``text`` is
    a word in upper case, a quoted identifier's name unquoted, the rest as written."""

    kind: str
    text: str


def tokenize(sql: str) -> list[Token]:
    """The tokens of ``sql``; raises :class:`UnsupportedSqlError` on what it cannot read."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(sql):
        m = _LEXER.match(sql, pos)
        if m is None:
            raise UnsupportedSqlError(f"unsupported character {sql[pos]!r} at offset {pos}")
        kind, text = m.lastgroup or "", m.group()
        if kind == "bad":
            reason = _BAD.get(text, "a quoted string or name is not closed, or uses a backslash")
            raise UnsupportedSqlError(f"{reason} (offset {pos})")
        if kind == "word":
            tokens.append(Token(kind, text.upper()))
        elif kind == "quoted":
            tokens.append(Token(kind, text[1:-1].replace(text[0] * 2, text[0])))
        elif kind != "space" and kind != "comment":
            tokens.append(Token(kind, text))
        pos = m.end()
    return tokens
