"""The offline model's SQL: a statement typed in the message, or a plain-English question
turned into one over the tables a tool's description lists.

These are rules, not understanding. A tool documents its tables as ``name(column TYPE, ...)``
(types optional: ``INTEGER``/``REAL``… mark numbers, ``DATE``… dates); a question names a
table (or a column only one table has) and asks to count, total, average, rank or list, with
simple conditions. What the rules cannot read is said, never guessed at.

A built statement is safe by construction: its table and column names come from the listed
schema (or, for a table the message names that the schema lacks, are ``[a-z_][a-z0-9_]*``),
and every value is a number or a quoted literal of word characters. A statement the user typed
is passed on as typed, for the tool's own policy to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runtime.models._offline_sql_english import english_to_sql
from runtime.models._offline_sql_schema import Table, schema_from

__all__ = ["SqlDraft", "Table", "is_sql_param", "schema_from", "sql_for", "typed_sql"]

_SQL_PARAMS = frozenset({"sql", "query", "sql_query", "statement", "sql_statement"})
# A statement typed in capitals, or in lower case with the shape only SQL has.
_UPPER = re.compile(
    r"\b(?:SELECT|WITH|INSERT|UPDATE|DELETE|DROP|CREATE|ALTER|PRAGMA|ATTACH|DETACH|REPLACE|"
    r"TRUNCATE|VACUUM)\b"
)
_LOWER = re.compile(
    r"\b(?:select\s+(?:\*|distinct\b|count\s*\(|[\w.]+\s*(?:,|\bfrom\b|\bas\b))"
    r"|with\s+\w+\s+as\s*\(|insert\s+into\b|replace\s+into\b|update\s+\w+\s+set\b"
    r"|delete\s+from\b|(?:drop|create|alter)\s+(?:table|view|index|trigger)\b"
    r"|pragma\s+\w|attach\s+database\b)",
    re.IGNORECASE,
)


def is_sql_param(name: str, description: str) -> bool:
    """Whether a string parameter takes a SQL statement: named ``sql``/``query``/…, or
    described as SQL."""
    return name.lower() in _SQL_PARAMS or re.search(r"\bsql\b", description, re.I) is not None


def typed_sql(text: str) -> str | None:
    """The SQL statement written in ``text``, from its first keyword to the end (without a
    closing quote or backtick, nor a final ``?``, ``!``, ``.`` or ``;``), or ``None``."""
    found = [m.start() for m in (_UPPER.search(text), _LOWER.search(text)) if m is not None]
    if not found:
        return None
    start = min(found)
    sql = text[start:]
    opener = text[start - 1] if start > 0 else ""
    if opener in ('"', "`", "“") and ({"“": "”"}.get(opener, opener)) in sql:
        sql = sql[: sql.rindex({"“": "”"}.get(opener, opener))]
    return sql.strip().rstrip("?!.; \t\n") or None


@dataclass(frozen=True)
class SqlDraft:
    """What :func:`sql_for` made of a message: a statement, or why there is none."""

    sql: str | None
    why_not: str = ""


def sql_for(text: str, schema_text: str) -> SqlDraft:
    """A statement for ``text``: the one it contains, else one built from its English over the
    tables listed in ``schema_text``."""
    typed = typed_sql(text)
    if typed is not None:
        return SqlDraft(typed)
    tables = schema_from(schema_text)
    sql, why_not = english_to_sql(text, tables)
    return SqlDraft(sql, why_not)
