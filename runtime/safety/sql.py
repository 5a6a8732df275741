"""A conservative reader of simple SQL: which tables a statement names, and little else.

It is a lexer and a token scan, not a parser. It exists so a query tool can refuse a statement
before it reaches the database; anything it cannot read with confidence is refused
(:class:`UnsupportedSqlError`) rather than guessed at, because a guess that sees less than the
database would let a query through. Run the database as a read-only role as well: no SQL
reader stops ``SELECT some_function_that_writes()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ParsedSql", "UnsupportedSqlError", "parse_sql"]


class UnsupportedSqlError(ValueError):
    """The statement cannot be read safely; the message says why, for the model to see."""


_LEXER = re.compile(
    r"""
    (?P<space>\s+)
    | (?P<comment>--(?=\s|$)[^\n]*|/\*(?!!).*?\*/)
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

# Keywords after which a table name comes, and those of them that start a comma list.
_INTRODUCERS = {"FROM", "JOIN", "STRAIGHT_JOIN", "INTO", "UPDATE", "USING", "TABLE"}
_LIST_STARTERS = {"FROM", "UPDATE", "USING"}
_LIST_ENDERS = {
    "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "INTERSECT", "EXCEPT", "MINUS",
    "WINDOW", "SET", "VALUES", "SELECT", "RETURNING", "QUALIFY", "OFFSET", "FETCH", "FOR",
}  # fmt: skip
_NOT_A_NAME = _INTRODUCERS | _LIST_ENDERS | {"ON", "AS", "WITH", "AND", "OR", "NOT", "DO"}
# Functions whose argument syntax uses FROM without naming a table: EXTRACT(YEAR FROM d).
_FROM_FUNCTIONS = {"EXTRACT", "SUBSTRING", "SUBSTR", "TRIM", "OVERLAY", "POSITION"}
_SET_OPERATIONS = {"UNION", "INTERSECT", "EXCEPT", "MINUS"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # word | quoted | string | number | punct
    text: str  # a word's text in upper case; a quoted identifier's unquoted name

    def is_name(self) -> bool:
        return self.kind == "quoted" or (self.kind == "word" and self.text not in _NOT_A_NAME)


@dataclass(frozen=True, slots=True)
class ParsedSql:
    """What :func:`parse_sql` read from one statement.

    ``statement`` is its first keyword in upper case (``""`` when it starts otherwise, e.g.
    with a parenthesis); ``tables`` the tables it names, lower case, schema-qualified as
    written (``sales.orders``), CTE names left out, in order of appearance; ``keywords`` every
    unquoted word, upper case; ``row_limit`` the literal ``LIMIT n`` / ``FETCH FIRST n ROWS``
    that ends the statement at the top level, or ``None``.
    """

    statement: str
    tables: tuple[str, ...]
    keywords: frozenset[str]
    row_limit: int | None


def _tokenize(sql: str) -> list[_Token]:
    tokens: list[_Token] = []
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
            tokens.append(_Token(kind, text.upper()))
        elif kind == "quoted":
            tokens.append(_Token(kind, text[1:-1].replace(text[0] * 2, text[0])))
        elif kind != "space" and kind != "comment":
            tokens.append(_Token(kind, text))
        pos = m.end()
    return tokens


def _closing(tokens: list[_Token], i: int) -> int:
    """Index of the parenthesis closing the one at ``i`` (or ``len(tokens)``)."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[j].text, 0) if tokens[j].kind == "punct" else 0
        if depth == 0:
            return j
    return len(tokens)


def _cte_names(tokens: list[_Token]) -> set[str]:
    names: set[str] = set()
    for i, tok in enumerate(tokens):
        if tok.kind != "word" or tok.text != "WITH":
            continue
        j = i + 2 if i + 1 < len(tokens) and tokens[i + 1].text == "RECURSIVE" else i + 1
        while j < len(tokens) and tokens[j].is_name():
            name, j = tokens[j].text.lower(), j + 1
            if j < len(tokens) and tokens[j].text == "(":  # column list
                j = _closing(tokens, j) + 1
            if j >= len(tokens) or tokens[j].text != "AS":
                break
            j += 1
            while j < len(tokens) and tokens[j].text in ("NOT", "MATERIALIZED"):
                j += 1
            if j >= len(tokens) or tokens[j].text != "(":
                break
            names.add(name)
            j = _closing(tokens, j) + 1
            if j >= len(tokens) or tokens[j].text != ",":
                break
            j += 1
    return names


def _read_name(tokens: list[_Token], i: int, after: str) -> tuple[str, int]:
    parts = [tokens[i].text]
    while i + 2 < len(tokens) and tokens[i + 1].text == "." and tokens[i + 1].kind == "punct":
        if not tokens[i + 2].is_name():
            raise UnsupportedSqlError(f"could not read the table name after {after}")
        parts.append(tokens[i + 2].text)
        i += 2
    return ".".join(parts).lower(), i


def _tables(tokens: list[_Token]) -> list[str]:
    found: list[str] = []
    expecting: str | None = None  # the keyword whose table name comes next
    in_list = [False]  # per parenthesis depth: inside a FROM/UPDATE/USING comma list
    skip_from = [False]  # per depth: inside EXTRACT(... FROM ...) and the like
    i = 0
    while i < len(tokens):
        tok, prev = tokens[i], tokens[i - 1] if i else None
        if expecting is not None:
            if tok.text in ("LATERAL", "ONLY") and tok.kind == "word":
                i += 1
                continue
            if tok.is_name():
                name, i = _read_name(tokens, i, expecting)
                found.append(name)
                expecting = None
                i += 1
                continue
            if tok.text != "(" or tok.kind != "punct":
                raise UnsupportedSqlError(f"could not read the table name after {expecting}")
        if tok.kind == "punct" and tok.text == "(":
            opens_query = i + 1 < len(tokens) and tokens[i + 1].text in ("SELECT", "WITH")
            in_list.append(expecting is not None and not opens_query)  # (a JOIN b)
            expecting = None if opens_query or expecting is None else expecting
            skip_from.append(prev is not None and prev.text in _FROM_FUNCTIONS)
        elif tok.kind == "punct" and tok.text == ")" and len(in_list) > 1:
            in_list.pop()
            skip_from.pop()
        elif tok.kind == "punct" and tok.text == "," and in_list[-1]:
            expecting = "a comma in the FROM list"
        elif tok.kind == "word" and tok.text in _LIST_ENDERS:
            in_list[-1] = False
        elif tok.kind == "word" and tok.text in _INTRODUCERS:
            distinct = tok.text == "FROM" and prev is not None and prev.text == "DISTINCT"
            late_update = tok.text == "UPDATE" and prev is not None and prev.text not in "()"
            if not (distinct or late_update or (tok.text == "FROM" and skip_from[-1])):
                expecting = tok.text
                in_list[-1] = in_list[-1] or tok.text in _LIST_STARTERS
        i += 1
    if expecting is not None:
        raise UnsupportedSqlError(f"the statement ends where a table name should follow {expecting}")
    return found


def _row_limit(tokens: list[_Token]) -> int | None:
    depth, limit, last_set_op = 0, None, -1
    for i, tok in enumerate(tokens):
        depth += {"(": 1, ")": -1}.get(tok.text, 0) if tok.kind == "punct" else 0
        if depth or tok.kind != "word":
            continue
        if tok.text in _SET_OPERATIONS:
            last_set_op, limit = i, None
        nxt = [t.text for t in tokens[i + 1 : i + 5]]
        if tok.text == "LIMIT" and nxt[:1] and nxt[0].isdigit():
            limit = int(nxt[2]) if nxt[1:3] and nxt[1] == "," and nxt[2].isdigit() else int(nxt[0])
        elif tok.text == "FETCH" and len(nxt) > 2 and nxt[0] in ("FIRST", "NEXT"):
            limit = int(nxt[1]) if nxt[1].isdigit() and nxt[2] in ("ROW", "ROWS") else None
    return limit if last_set_op < len(tokens) else None


def parse_sql(sql: str) -> ParsedSql:
    """Read one SQL statement (an optional trailing ``;`` allowed).

    Comments and string literals are dropped first, so neither hides nor invents a table.
    Raises :class:`UnsupportedSqlError` for several statements, an empty one, and anything
    the reader does not understand: backslash escapes and ``$``-quoting, ``#`` comments,
    ``--`` without a following space, unclosed quotes or comments, a table reference that
    is not a plain (optionally schema-qualified, optionally quoted) name.
    """
    tokens = _tokenize(sql)
    if tokens and tokens[-1].kind == "punct" and tokens[-1].text == ";":
        tokens.pop()
    if any(t.kind == "punct" and t.text == ";" for t in tokens):
        raise UnsupportedSqlError("only one statement is allowed; remove every ';' inside it")
    if not tokens:
        raise UnsupportedSqlError("the query is empty")
    ctes = _cte_names(tokens)
    tables = [t for t in dict.fromkeys(_tables(tokens)) if t not in ctes]
    return ParsedSql(
        statement=tokens[0].text if tokens[0].kind == "word" else "",
        tables=tuple(tables),
        keywords=frozenset(t.text for t in tokens if t.kind == "word"),
        row_limit=_row_limit(tokens),
    )
