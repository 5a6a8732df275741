"""A conservative reader of simple SQL: which tables a statement names, and little else.

It is a lexer and a token scan, not a parser. It exists so a query tool can refuse a statement
before it reaches the database; anything it cannot read with confidence is refused
(:class:`UnsupportedSqlError`) rather than guessed at, because a guess that sees less than the
database would let a query through. Run the database as a read-only role as well: no SQL
reader stops ``SELECT some_function_that_writes()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.safety._sql_lexer import Token, UnsupportedSqlError, tokenize

__all__ = ["ParsedSql", "UnsupportedSqlError", "parse_sql"]


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
class ParsedSql:
    """What :func:`parse_sql` read from one statement.

    ``statement`` is its first keyword in upper case (``""`` when it starts otherwise, e.g.
    with a parenthesis); ``tables`` the tables it names, lower case, schema-qualified as
    written (``sales.orders``), in order of appearance, without the leading ``WITH``'s CTEs
    where they are in scope (a DELETE/INSERT/UPDATE target always counts); ``keywords`` every
    unquoted word, upper case; ``row_limit`` the literal ``LIMIT n`` / ``FETCH FIRST n ROWS``
    that ends the statement at the top level, or ``None``.
    """

    statement: str
    tables: tuple[str, ...]
    keywords: frozenset[str]
    row_limit: int | None


def _is_name(tok: Token) -> bool:
    return tok.kind == "quoted" or (tok.kind == "word" and tok.text not in _NOT_A_NAME)


def _closing(tokens: list[Token], i: int) -> int:
    """Index of the parenthesis closing the one at ``i`` (or ``len(tokens)``)."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[j].text, 0) if tokens[j].kind == "punct" else 0
        if depth == 0:
            return j
    return len(tokens)


def _cte_scopes(tokens: list[Token]) -> dict[str, int]:
    """CTEs of the statement's leading ``WITH``: name → index from which the name means the
    CTE (after its body; from its body on with ``RECURSIVE``). Nested ``WITH`` clauses are not
    honoured: their names count as tables, which can only refuse more."""
    scopes: dict[str, int] = {}
    if not tokens or tokens[0].kind != "word" or tokens[0].text != "WITH":
        return scopes
    recursive = len(tokens) > 1 and tokens[1].text == "RECURSIVE"
    j = 2 if recursive else 1
    while j < len(tokens) and _is_name(tokens[j]):
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
        end = _closing(tokens, j)
        scopes.setdefault(name, j if recursive else end)
        j = end + 1
        if j >= len(tokens) or tokens[j].text != ",":
            break
        j += 1
    return scopes


def _read_name(tokens: list[Token], i: int, after: str) -> tuple[str, int]:
    parts = [tokens[i].text]
    while i + 2 < len(tokens) and tokens[i + 1].text == "." and tokens[i + 1].kind == "punct":
        if not _is_name(tokens[i + 2]):
            raise UnsupportedSqlError(f"could not read the table name after {after}")
        parts.append(tokens[i + 2].text)
        i += 2
    return ".".join(parts).lower(), i


def _is(tok: Token | None, kind: str, *texts: str) -> bool:
    return tok is not None and tok.kind == kind and tok.text in texts


def _references(tokens: list[Token]) -> list[tuple[str, int, bool]]:
    """Each table reference: (name, token index, whether a CTE of that name may be meant)."""
    found: list[tuple[str, int, bool]] = []
    expecting: str | None = None  # the keyword whose table name comes next
    readable = False  # the awaited name may be a CTE (not a DELETE/INSERT/UPDATE target)
    in_list = [False]  # per parenthesis depth: inside a FROM/UPDATE/USING comma list
    skip_from = [False]  # per depth: inside EXTRACT(... FROM ...) and the like
    i = 0
    while i < len(tokens):
        tok, prev = tokens[i], tokens[i - 1] if i else None
        if expecting is not None and not _is(tok, "punct", "("):
            if _is(tok, "word", "LATERAL", "ONLY"):
                i += 1
                continue
            if not _is_name(tok):
                raise UnsupportedSqlError(f"could not read the table name after {expecting}")
            name, end = _read_name(tokens, i, expecting)
            found.append((name, i, readable))
            expecting, i = None, end + 1
            continue
        if _is(tok, "punct", "("):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if expecting == "USING" or _is(nxt, "word", "SELECT", "WITH", "VALUES", "TABLE"):
                expecting = None
            in_list.append(expecting is not None)  # FROM (a JOIN b): a table comes next
            skip_from.append(
                prev is not None and prev.kind == "word" and prev.text in _FROM_FUNCTIONS
            )
        elif _is(tok, "punct", ")") and len(in_list) > 1:
            in_list.pop()
            skip_from.pop()
        elif _is(tok, "punct", ",") and in_list[-1]:
            expecting = "a comma in the FROM list"  # readable: as for the list's first table
        elif tok.kind == "word" and tok.text in _LIST_ENDERS:
            in_list[-1] = False
        elif tok.kind == "word" and tok.text in _INTRODUCERS:
            distinct = tok.text == "FROM" and _is(prev, "word", "DISTINCT")
            late_update = (
                tok.text == "UPDATE" and prev is not None and not _is(prev, "punct", "(", ")")
            )
            if not (distinct or late_update or (tok.text == "FROM" and skip_from[-1])):
                expecting = tok.text
                readable = tok.text not in ("INTO", "UPDATE") and not _is(prev, "word", "DELETE")
                in_list[-1] = in_list[-1] or tok.text in _LIST_STARTERS
        i += 1
    if expecting is not None:
        raise UnsupportedSqlError(
            f"the statement ends where a table name should follow {expecting}"
        )
    return found


def _row_limit(tokens: list[Token]) -> int | None:
    """The literal row limit closing the statement at the top level (after any UNION)."""
    depth, limit = 0, None
    for i, tok in enumerate(tokens):
        depth += {"(": 1, ")": -1}.get(tok.text, 0) if tok.kind == "punct" else 0
        if depth or tok.kind != "word":
            continue
        nxt = [t.text for t in tokens[i + 1 : i + 4]] + ["", "", ""]
        if tok.text in _SET_OPERATIONS:
            limit = None
        elif tok.text == "LIMIT":  # LIMIT n [OFFSET m] | LIMIT m, n
            count = nxt[2] if nxt[1] == "," else nxt[0]
            limit = int(count) if count.isdigit() else None
        elif tok.text == "FETCH" and nxt[0] in ("FIRST", "NEXT"):
            limit = int(nxt[1]) if nxt[1].isdigit() and nxt[2] in ("ROW", "ROWS") else None
    return limit


def parse_sql(sql: str) -> ParsedSql:
    """Read one SQL statement (an optional trailing ``;`` allowed).

    Comments and string literals are dropped first, so neither hides nor invents a table.
    Raises :class:`UnsupportedSqlError` for several statements, an empty one, and anything
    the reader does not understand: backslash escapes and ``$``-quoting, ``#`` comments,
    ``--`` without a following space, unclosed quotes or comments, a table reference that
    is not a plain (optionally schema-qualified, optionally quoted) name.
    """
    tokens = tokenize(sql)
    if tokens and tokens[-1].kind == "punct" and tokens[-1].text == ";":
        tokens.pop()
    if any(t.kind == "punct" and t.text == ";" for t in tokens):
        raise UnsupportedSqlError("only one statement is allowed; remove every ';' inside it")
    if not tokens:
        raise UnsupportedSqlError("the query is empty")
    scopes = _cte_scopes(tokens)
    tables = [
        name
        for name, at, readable in _references(tokens)
        if not (readable and name in scopes and at > scopes[name])
    ]
    return ParsedSql(
        statement=tokens[0].text if tokens[0].kind == "word" else "",
        tables=tuple(dict.fromkeys(tables)),
        keywords=frozenset(t.text for t in tokens if t.kind == "word"),
        row_limit=_row_limit(tokens),
    )
