"""A data agent answering questions with SQL over a small shop database, under a policy.

The database is built in memory for every query (customers, orders, and a ``salaries``
table the agent must not read), so nothing a query does outlives it. The policy is
:func:`agentdash.demo.policies.query_policy_for` (the database's ``query`` policy for this
agent, else read-only on customers and orders), read when the tool runs, so an operator's
edit applies to the next query. SQLite enforces it a second time: an authorizer denies reads
of other tables and ``query_only`` blocks writes under a read-only policy.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentdash.demo.policies import PolicyUnavailableError, query_policy_for
from runtime import Agent, ToolContext
from runtime.examples.capital import default_model
from runtime.safety import QueryPolicy

MAX_ROWS = 50

_SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
    product TEXT, amount REAL, placed_on TEXT
);
CREATE TABLE salaries (employee TEXT, amount INTEGER);
"""
_CUSTOMERS = [
    (1, "Alice Martin", "alice@example.com", "Lyon"),
    (2, "Bob Chen", "bob@example.com", "Toronto"),
    (3, "Chiara Rossi", "chiara@example.com", "Milan"),
]
_ORDERS = [
    (1, 1, "keyboard", 89.0, "2026-09-14"),
    (2, 1, "monitor", 249.0, "2026-10-02"),
    (3, 2, "headset", 59.5, "2026-10-20"),
    (4, 3, "laptop stand", 39.9, "2026-11-03"),
]
_SALARIES = [("ceo", 400_000), ("engineer", 120_000)]


def _database(policy: QueryPolicy) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?)", _CUSTOMERS)
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", _ORDERS)
    db.executemany("INSERT INTO salaries VALUES (?, ?)", _SALARIES)
    db.commit()
    allowed = {t.lower() for t in policy.tables}

    def authorize(action: int, table: str | None, *_: Any) -> int:
        touches = action in (
            sqlite3.SQLITE_READ,
            sqlite3.SQLITE_INSERT,
            sqlite3.SQLITE_UPDATE,
            sqlite3.SQLITE_DELETE,
        )
        denied = touches and table is not None and table.lower() not in allowed
        return sqlite3.SQLITE_DENY if denied else sqlite3.SQLITE_OK

    db.set_authorizer(authorize)
    if policy.select_only:
        db.execute("PRAGMA query_only = ON")
    return db


def run_query(sql: str, tool_context: ToolContext) -> dict[str, Any]:
    """Runs one SQL query on the shop database and returns the columns and rows.

    Tables: customers(id INTEGER, name TEXT, email TEXT, city TEXT) and
    orders(id INTEGER, customer_id INTEGER, product TEXT, amount REAL, placed_on DATE).

    Args:
      sql: one SQLite statement, e.g. SELECT name, city FROM customers.
    """
    try:
        policy = query_policy_for(tool_context.agent_name)
    except PolicyUnavailableError as exc:
        return {"error": f"Error: no query was run: {exc}."}
    refusal = policy.check(sql)
    if refusal is not None:
        return {"error": refusal}
    db = _database(policy)
    before = db.total_changes
    try:
        cursor = db.execute(sql)
        rows = cursor.fetchmany(MAX_ROWS)
        columns = [c[0] for c in cursor.description or []]
        changed = db.total_changes - before
    except (sqlite3.Error, ValueError, UnicodeError, OverflowError) as exc:
        # sqlite3 raises ValueError for a NUL, UnicodeEncodeError for a lone surrogate.
        return {"error": f"Error: the database refused the query: {exc}."}
    finally:
        db.close()
    if not columns:
        return {"result": f"{changed} row(s) changed."}
    return {"columns": columns, "rows": [list(r) for r in rows], "row_count": len(rows)}


root_agent = Agent(
    name="data_agent",
    model=default_model(),
    description="Answers questions about customers and orders with SQL.",
    instruction=(
        "You answer questions about the shop's customers and orders by running SQL with "
        "run_query, then summarise the rows. Never try to read other tables."
    ),
    tools=[run_query],
)
