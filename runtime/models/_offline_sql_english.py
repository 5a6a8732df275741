"""Plain English to one SQL statement, by rules, over documented tables.

``english_to_sql(text, tables)`` finds what the question is about (a table it names, else a
column only one table has, else a table it names that the schema lacks), what it asks for
(count, total, average, highest, lowest, latest, earliest, a list — or to delete, drop, change
or add rows) and its conditions (``in Lyon``, ``named Alice``, ``over 100``, ``customer 2``,
``city is Milan``, ``after 2026-10-01``, ``per city``). Values enter the statement only as
numbers or as quoted literals of word characters (see :mod:`runtime.models._offline_sql`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from runtime.models._offline_sql_schema import Column, Table
from runtime.models._offline_text import STOP, stem

_TOKENS = re.compile(
    r"""[\"“](?P<quoted>[\w .,@&'-]{1,100}?)[\"”]
    | (?P<date>\d{4}-\d{2}-\d{2})
    | (?P<number>\d+(?:\.\d+)?)(?![\w.])
    | (?P<word>[^\W\d_]\w*)
    | (?P<op>[<>]=?|=)""",
    re.VERBOSE,
)
_VERBS = "show list count many get give display find select fetch read dump print all every"
_LIST_VERBS = frozenset(_VERBS.split())
_NOT_TABLE_WORDS = (
    "all every each much many list show count total number data row rows record records entry "
    "entries item items everything anything stuff thing things info information detail details "
    "please give get find tell table tables database"
)
_NOT_TABLES = STOP | frozenset(_NOT_TABLE_WORDS.split())
_COMPARE = {
    "over": ">", "above": ">", "exceeding": ">", "under": "<", "below": "<",
    "more than": ">", "greater than": ">", "bigger than": ">", "larger than": ">",
    "higher than": ">", "less than": "<", "lower than": "<", "cheaper than": "<",
    "smaller than": "<", "at least": ">=", "at most": "<=",
    ">": ">", ">=": ">=", "<": "<", "<=": "<=",
}  # fmt: skip
_RESERVED_WORDS = (
    "ORDER GROUP SELECT FROM WHERE TABLE INDEX LIMIT BY KEY VALUES DEFAULT CHECK TO AS IN IS "
    "NOT NULL AND OR ON JOIN UNION CASE WHEN END SET ALL"
)
_RESERVED = frozenset(_RESERVED_WORDS.split())
_GROUP_WORDS = frozenset({"per", "by", "each", "every"})
LIST_LIMIT = 20
MAX_QUESTION = 1000


@dataclass
class _Tok:
    text: str
    low: str
    kind: str  # word, number, date, quoted, op


@dataclass
class _Question:
    toks: list[_Tok]
    table: Table
    tables: list[Table]
    subject: int = -1  # the token naming the table, if one does
    used: set[int] = field(default_factory=set)  # tokens read as conditions or groups
    where: list[tuple[Column, str, str]] = field(default_factory=list)

    def literal(self, i: int, *, loose: bool = False) -> tuple[str, int] | None:
        """The value starting at token ``i`` as SQL and the tokens it spans: a number, a
        date, a quoted text, a run of capitalised words — or, ``loose``, any content word."""
        if i >= len(self.toks):
            return None
        tok = self.toks[i]
        if tok.kind == "number":
            return tok.text, 1
        if tok.kind in ("date", "quoted"):
            return _quote(tok.text), 1
        if tok.kind != "word" or tok.low in STOP or self.names_schema(tok.low):
            return None
        if not tok.text[0].isupper():
            return (_quote(tok.text), 1) if loose else None
        n = 1
        while i + n < len(self.toks) and self.toks[i + n].kind == "word":
            nxt = self.toks[i + n]
            if not nxt.text[0].isupper() or self.names_schema(nxt.low):
                break
            n += 1
        return _quote(" ".join(t.text for t in self.toks[i : i + n])), n

    def names_schema(self, low: str) -> bool:
        return self.table.named_by(low) or self.table.column(low) is not None

    def add(self, column: Column | None, op: str, value: str, *spans: int) -> None:
        if column is not None:
            self.where.append((column, op, value))
            self.used.update(spans)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _name(identifier: str) -> str:
    return f'"{identifier}"' if identifier.upper() in _RESERVED else identifier


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _TOKENS.finditer(text):
        kind = m.lastgroup or "word"
        value = m.group(kind)
        out.append(_Tok(value, value.lower(), kind))
    return out


def _subject(toks: list[_Tok], tables: list[Table], start: int) -> tuple[Table | None, int]:
    """The table asked about and the index of the word naming it (-1: none does)."""
    mentions = [
        (i, t)
        for i, tok in enumerate(toks)
        for t in tables
        if tok.kind == "word" and t.named_by(tok.low)
        and not (i + 1 < len(toks) and toks[i + 1].low == "by")  # "ordered by"
        and not (i > 0 and toks[i - 1].low in _GROUP_WORDS)  # "per customer": a grouping
    ]  # fmt: skip
    after = [m for m in mentions if m[0] >= start]
    if after or mentions:
        i, table = (after or mentions)[0]
        return table, i
    owners = {t.name: t for tok in toks for t in tables if tok.kind == "word" and _owns(t, tok)}
    if len(owners) == 1:
        return next(iter(owners.values())), -1
    for i, tok in enumerate(toks):  # "the salaries table", "table salaries"
        if tok.low in ("table", "tables"):
            for j in (i - 1, i + 1):
                if 0 <= j < len(toks) and _unknown_table(toks[j]):
                    return Table(toks[j].low, ()), j
    verbs = [i for i, tok in enumerate(toks) if tok.low in _LIST_VERBS]
    if verbs:
        for j in range(verbs[0] + 1, len(toks)):
            if toks[j].kind == "word" and toks[j].low not in _NOT_TABLES:
                return (Table(toks[j].low, ()), j) if _unknown_table(toks[j]) else (None, -1)
    return None, -1


def _owns(table: Table, tok: _Tok) -> bool:
    column = table.column(tok.low)
    return column is not None and not column.key and tok.low not in STOP


def _unknown_table(tok: _Tok) -> bool:
    return (
        tok.kind == "word"
        and tok.low not in _NOT_TABLES
        and re.fullmatch(r"[a-z_][a-z0-9_]{2,62}", tok.low) is not None
    )


def _intent(joined: str) -> tuple[str, int]:
    """What is asked, and where its words end in ``joined`` (-1: a plain list)."""
    rules = (
        ("drop", r" (drop|destroy)( the)?( \w+)? (table|\w+s) "),
        ("delete", r" (?<!were )(?<!was )(?<!been )(?<!being )(delete|remove|erase|wipe|purge)"),
        ("insert", r" (add|insert|create|register) (?!up )(a |an |one )?(new )?\w+ "),
        ("update", r" (update|change|set|modify|rename) .* to "),
        ("count", r" (how many|count|number of) "),
        ("sum", r" (total|sum|add up|revenue) "),
        ("avg", r" (average|mean|avg) "),
        ("max", r" (most expensive|highest|largest|biggest|maximum|max|top \d+) "),
        ("min", r" (cheapest|lowest|smallest|minimum|min) "),
        ("latest", r" (latest|newest|most recent|last) "),
        ("earliest", r" (oldest|earliest|first) "),
    )
    for name, pattern in rules:
        m = re.search(pattern, joined)
        if m is not None:
            return name, m.end()
    return "list", -1


def _conditions(q: _Question) -> None:
    toks, table = q.toks, q.table
    for i, tok in enumerate(toks):
        if i in q.used:
            continue
        pair = f"{tok.low} {toks[i + 1].low}" if i + 1 < len(toks) else ""
        op = _COMPARE.get(pair) or _COMPARE.get(tok.low)
        width = 2 if pair in _COMPARE else 1
        if op and i + width < len(toks) and toks[i + width].kind == "number":
            before = table.column(toks[i - 1].low) if i > 0 else None
            column = before if before is not None and before.numeric else table.first("numeric")
            q.add(column, op, toks[i + width].text, *range(i - 1, i + width + 1))
        elif tok.low in ("in", "from", "at") and i + 1 < len(toks):
            nxt = toks[i + 1]
            if nxt.kind == "number" and len(nxt.text) == 4 and table.first("date"):
                q.add(table.first("date"), "LIKE", _quote(nxt.text + "%"), i, i + 1)
            elif (found := q.literal(i + 1)) is not None:
                q.add(table.first("place"), "=", found[0], *range(i, i + 1 + found[1]))
        elif tok.low in ("named", "called") and (found := q.literal(i + 1, loose=True)):
            like = _quote("%" + found[0][1:-1].replace("''", "'") + "%")
            q.add(table.first("label"), "LIKE", like, *range(i, i + 1 + found[1]))
        elif tok.low in ("after", "since", "before", "on") and i + 1 < len(toks):
            if toks[i + 1].kind == "date":
                op = {"before": "<", "on": "="}.get(tok.low, ">=")
                q.add(table.first("date"), op, _quote(toks[i + 1].text), i, i + 1)
        elif tok.kind == "word" and table.named_by(tok.low) and i + 1 < len(toks):
            if toks[i + 1].kind == "number" and table.column("id"):
                q.add(table.column("id"), "=", toks[i + 1].text, i, i + 1)
        elif tok.kind == "word" and (column := table.column(tok.low)) is not None:
            j = i + 1
            explicit = j < len(toks) and toks[j].low in ("is", "=", "equals", "equal")
            j += 1 if explicit else 0
            if (found := q.literal(j, loose=explicit)) is not None:
                op, value = "=", found[0]
                if column.label:
                    op, value = "LIKE", _quote("%" + value[1:-1].replace("''", "'") + "%")
                q.add(column, op, value, *range(i, j + found[1]))


def _grouping(q: _Question, tables: list[Table]) -> tuple[Column | None, str]:
    """``per city`` / ``by customer`` / ``for each product``: the column, and the word."""
    for i, tok in enumerate(q.toks[:-1]):
        if tok.low in _GROUP_WORDS and i not in q.used:
            j = i + 2 if q.toks[i + 1].low in ("the", "a", "each") else i + 1
            if j >= len(q.toks) or j in q.used:
                continue
            word = q.toks[j].low
            column = q.table.column(word)
            if column is None:  # "per customer" in orders: customer_id
                other = next((t for t in tables if t.named_by(word)), None)
                column = q.table.column(stem(other.name.lower())) if other else None
            if column is not None:
                q.used.update({i, j})
                return column, tok.low
    return None, ""


def english_to_sql(text: str, tables: list[Table]) -> tuple[str | None, str]:
    """``(statement, "")``, or ``(None, why not)``."""
    if len(text) > MAX_QUESTION:
        return None, f"a question is at most {MAX_QUESTION:,} characters; this is {len(text):,}"
    toks = _tokens(text)
    joined = " " + " ".join(t.low for t in toks) + " "
    intent, end = _intent(joined)
    start = joined[:end].count(" ") - 1 if end >= 0 else 0
    table, at = _subject(toks, tables, start)
    if table is None:
        return None, "it names no table I know"
    q = _Question(toks, table, tables, subject=at)
    if intent == "drop":
        return f"DROP TABLE {_name(table.name)}", ""
    if intent == "update":
        return _update(q)
    _conditions(q)
    if intent == "insert":
        if not q.where:
            return None, f"say what the new row holds, e.g. a {table.name} named …"
        columns = ", ".join(_name(c.name) for c, _, _ in q.where)
        values = ", ".join(v if op != "LIKE" else v.replace("%", "") for _, op, v in q.where)
        return f"INSERT INTO {_name(table.name)} ({columns}) VALUES ({values})", ""
    where = _where(q)
    if intent == "delete":
        return f"DELETE FROM {_name(table.name)}{where}", ""
    group, by_word = _grouping(q, tables)
    return _select(q, intent, where, group, by_word)


def _where(q: _Question) -> str:
    parts = [f"{_name(c.name)} {op} {value}" for c, op, value in q.where]
    return f" WHERE {' AND '.join(parts)}" if parts else ""


def _update(q: _Question) -> tuple[str | None, str]:
    to = max(i for i, t in enumerate(q.toks) if t.low == "to")
    value = q.literal(to + 1, loose=True)
    column = next(
        (q.table.column(t.low) for t in q.toks[:to] if q.table.column(t.low) is not None), None
    )
    if value is None or column is None:
        return None, "say which column to change and to what (…change the city … to Paris)"
    q.toks = q.toks[:to]
    q.used.add(next(i for i, t in enumerate(q.toks) if q.table.column(t.low) is column))
    _conditions(q)
    sets = f"{_name(column.name)} = {value[0]}"
    return f"UPDATE {_name(q.table.name)} SET {sets}{_where(q)}", ""


def _select(
    q: _Question, intent: str, where: str, group: Column | None, by_word: str
) -> tuple[str | None, str]:
    table, toks = q.table, q.toks
    source = f"FROM {_name(table.name)}{where}"
    numbers = [c for t in toks if (c := table.column(t.low)) is not None and c.numeric]
    measure = numbers[0] if numbers else table.first("numeric")
    aggregate = {"count": "COUNT(*)"}.get(intent)
    if intent in ("sum", "avg"):
        if measure is None:
            return None, f"{table.name} has no column of numbers to {intent}"
        column = _name(measure.name)
        aggregate = f"SUM({column})" if intent == "sum" else f"ROUND(AVG({column}), 2)"
    if aggregate and group is not None:
        g = _name(group.name)
        return f"SELECT {g}, {aggregate} {source} GROUP BY {g} ORDER BY {aggregate} DESC", ""
    if aggregate:
        return f"SELECT {aggregate} {source}", ""
    said = " ".join(t.low for t in toks)
    counted = re.search(r"(?:top|first|last|latest|oldest) (\d+)|(\d+) (?:most|latest)", said)
    n = int(next(g for g in counted.groups() if g)) if counted else None
    if intent in ("max", "min", "latest", "earliest"):
        rank = measure if intent in ("max", "min") else table.first("date") or table.column("id")
        if rank is not None:
            order = "DESC" if intent in ("max", "latest") else "ASC"
            word = toks[q.subject].low if q.subject >= 0 else ""
            limit = min(n or (5 if word != stem(word) else 1), LIST_LIMIT)
            return f"SELECT * {source} ORDER BY {_name(rank.name)} {order} LIMIT {limit}", ""
    picked: list[str] = []
    for i, tok in enumerate(toks):
        named = table.column(tok.low) if tok.kind == "word" and i not in q.used else None
        names_a_table = any(t.named_by(tok.low) for t in q.tables)
        if named is not None and named.name not in picked and not names_a_table:
            picked.append(named.name)
    columns = ", ".join(_name(c) for c in picked) or "*"
    order = f" ORDER BY {_name(group.name)}" if group is not None and by_word == "by" else ""
    return f"SELECT {columns} {source}{order} LIMIT {min(n or LIST_LIMIT, LIST_LIMIT)}", ""
