"""In-tool guardrail for query tools: a policy the developer sets, checked inside the tool.

ADK's safety guide has a query tool read ``query_tool_policy`` from the session state and
refuse queries on other tables. This is that, made real::

    def query(sql: str, tool_context: ToolContext) -> dict:
        error = check_query(tool_context.state, sql)
        if error:
            return {"error": error}
        return {"rows": run_read_only(sql)}

The model only ever chooses the ``sql``; the policy comes from state the developer wrote, so
the model cannot widen it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from runtime.safety.sql import UnsupportedSqlError, parse_sql
from runtime.sessions.state import State

__all__ = [
    "DEFAULT_POLICY_KEY",
    "InvalidQueryPolicyError",
    "QueryPolicy",
    "check_query",
    "query_policy_from_state",
]

DEFAULT_POLICY_KEY = "query_tool_policy"

_READS = frozenset({"SELECT", "WITH"})
_WRITES_ALLOWED = _READS | {"INSERT", "UPDATE", "DELETE"}
# Keywords no read-only statement needs. A column spelled like one must be quoted.
_WRITE_KEYWORDS = frozenset(
    {
        "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "INTO", "DROP", "ALTER", "CREATE",
        "TRUNCATE", "GRANT", "REVOKE", "COPY", "CALL", "EXEC", "EXECUTE", "ATTACH", "DETACH",
        "PRAGMA", "VACUUM", "LOCK", "RENAME",
    }
)  # fmt: skip


# A table name as SQL writes it unquoted, optionally schema-qualified (``sales.orders``).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*")


def _table_name(name: str) -> str:
    """``name`` stripped; a typo that no statement's table could ever match is an error."""
    cleaned = name.strip()
    if not _IDENTIFIER.fullmatch(cleaned):
        raise ValueError(
            f"{name!r} is not a table name (letters, digits, _ and $, optionally schema.table)"
        )
    return cleaned


TableName = Annotated[str, AfterValidator(_table_name)]


class InvalidQueryPolicyError(ValueError):
    """The policy found in session state is not a valid :class:`QueryPolicy`."""


class QueryPolicy(BaseModel):
    """What a query tool may run.

    - ``select_only`` (default ``True``): the statement must start with ``SELECT`` or
      ``WITH`` and contain no writing keyword (``INSERT``, ``UPDATE``, ``DELETE``, ``INTO``,
      ``DROP``, …), so ``WITH x AS (DELETE …) SELECT …`` and ``SELECT … INTO`` are refused.
      With ``False``, ``INSERT``/``UPDATE``/``DELETE`` are allowed too, nothing else.
    - ``tables``: every table the statement names must be one of these (case-insensitive,
      compared whole: ``sales.orders`` and ``orders`` are different names; each a name SQL
      writes unquoted). Empty: none (every query is refused).
    - ``max_rows``: a reading statement must end with ``LIMIT n`` (or ``FETCH FIRST n
      ROWS ONLY``) with ``n <= max_rows``.

    Validation is strict (no type coercion, unknown keys rejected), so a typo in a policy
    is an error instead of a silently wider policy.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    select_only: bool = True
    tables: list[TableName]
    max_rows: int | None = Field(default=None, ge=1)

    def check(self, sql: str) -> str | None:
        """``None`` when ``sql`` is allowed, else an error message meant for the model.

        One statement only (a trailing ``;`` is fine); comments and string literals never
        hide or add tables; a statement the reader cannot read safely is refused.
        """
        try:
            parsed = parse_sql(sql)
        except UnsupportedSqlError as exc:
            return f"Error: query refused: {exc}."
        first = parsed.statement or "a parenthesis"
        if self.select_only:
            if parsed.statement not in _READS:
                return f"Error: only SELECT queries are allowed; this one starts with {first}."
            writes = sorted(parsed.keywords & _WRITE_KEYWORDS)
            if writes:
                return f"Error: only read-only SELECT queries are allowed; found {writes[0]}."
        elif parsed.statement not in _WRITES_ALLOWED:
            return f"Error: only SELECT, INSERT, UPDATE and DELETE are allowed, not {first}."
        allowed = {t.lower() for t in self.tables}
        denied = [t for t in parsed.tables if t not in allowed]
        if denied:
            listed = ", ".join(self.tables) or "(none defined)"
            return (
                f"Error: Query targets unauthorized tables: {', '.join(denied)}. Allowed: {listed}"
            )
        limit = parsed.row_limit
        limited = limit is not None and self.max_rows is not None and limit <= self.max_rows
        if self.max_rows is not None and parsed.statement in _READS and not limited:
            return f"Error: the query must end with LIMIT n, with n at most {self.max_rows}."
        return None


def query_policy_from_state(
    state: Mapping[str, Any] | State, key: str = DEFAULT_POLICY_KEY
) -> QueryPolicy | None:
    """The policy stored under ``key`` (a dict, or a :class:`QueryPolicy`), or ``None`` when
    there is none. ``None`` means "no policy", which a tool must treat as deny
    (:func:`check_query` does). Raises :class:`InvalidQueryPolicyError` with a readable
    message when the stored value is not a valid policy."""
    value = state.get(key)
    if value is None:
        return None
    if isinstance(value, QueryPolicy):
        return value
    if not isinstance(value, Mapping):
        raise InvalidQueryPolicyError(f"state[{key!r}] must be a dict, not {type(value).__name__}")
    try:
        return QueryPolicy.model_validate(dict(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'policy'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidQueryPolicyError(f"state[{key!r}] is not a valid policy: {problems}") from exc


def check_query(
    state: Mapping[str, Any] | State, sql: str, *, key: str = DEFAULT_POLICY_KEY
) -> str | None:
    """Check ``sql`` against the policy in ``state[key]``: ``None`` when allowed, else the
    error message for the model. A missing or malformed policy denies every query."""
    try:
        policy = query_policy_from_state(state, key)
    except InvalidQueryPolicyError as exc:
        return f"Error: queries are disabled: {exc}."
    if policy is None:
        return f"Error: queries are disabled: no query policy is set (state[{key!r}])."
    return policy.check(sql)
