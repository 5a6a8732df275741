"""A data agent answering questions with SQL over a small shop database, under a policy.

The database is built in memory for every query (customers, orders, and a ``salaries``
table the agent must not read), so nothing a query does outlives it. The policy is
:func:`agentdash.demo.policies.query_policy_for` (the database's ``query`` policy for this
agent, else read-only on customers and orders), read when the tool runs, so an operator's
edit applies to the next query. SQLite enforces it a second time: an authorizer denies reads
of other tables and ``query_only`` blocks writes under a read-only policy.

``run_query`` acts as the user (ADK's user-auth, ``@acts_as("user")``): each customer has an
``owner`` (a demo username: ``alice``, ``bob`` and ``operator`` own one each; ``chiara`` is no
login), and the database built for a query holds only the customers of the user who owns the
session, and their orders. No SQL the model writes can reach another
user's rows: they are not there. A user id that names no user (or Django not set up, as in
``python -m runtime chat``) gets an empty shop.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from agentdash.demo.guardrails import guarded
from agentdash.demo.policies import query_policy_for
from runtime import Agent, Principal, ToolContext, acts_as
from runtime.examples.capital import default_model
from runtime.guardrails import PolicyUnavailableError
from runtime.safety import QueryPolicy
from runtime.tools import USER

logger = logging.getLogger(__name__)

MAX_ROWS = 50

_SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT, owner TEXT);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
    product TEXT, amount REAL, placed_on TEXT
);
CREATE TABLE salaries (employee TEXT, amount INTEGER);
"""
_CUSTOMERS = [  # the last field is the owner: the username of the user they belong to
    (1, "Alice Martin", "alice@example.com", "Lyon", "alice"),
    (2, "Bob Chen", "bob@example.com", "Toronto", "bob"),
    (3, "Chiara Rossi", "chiara@example.com", "Milan", "chiara"),
    # The demo operator's: README's guardrails walk-through logs in as the operator and
    # asks for names and e-mails (the answer's e-mail is masked); with none, "no rows".
    (4, "Omar Haddad", "omar@example.com", "Marseille", "operator"),
]
_ORDERS = [
    (1, 1, "keyboard", 89.0, "2026-09-14"),
    (2, 1, "monitor", 249.0, "2026-10-02"),
    (3, 2, "headset", 59.5, "2026-10-20"),
    (4, 3, "laptop stand", 39.9, "2026-11-03"),
    (5, 4, "webcam", 74.0, "2026-11-10"),
]
_SALARIES = [("ceo", 400_000), ("engineer", 120_000)]


class UserUnresolvedError(RuntimeError):
    """The user's account could not be looked up; the tool must refuse to run."""


def _username_of(principal: Principal) -> str | None:
    """The username of the Django user whose pk is ``principal.id``, or ``None`` when the
    principal is not a user, names no user, or Django is not set up (an empty shop). Raises
    :class:`UserUnresolvedError` when the database cannot be read."""
    if principal.kind != USER:
        return None
    from django.apps import apps

    if not apps.ready:
        logger.warning("Django is not set up: user %r owns no customers", principal.id)
        return None
    from django.contrib.auth import get_user_model
    from django.core.exceptions import ValidationError
    from django.db import DatabaseError

    user_model = get_user_model()
    try:
        found = (
            user_model._default_manager.filter(pk=principal.id)
            .values_list(user_model.USERNAME_FIELD, flat=True)
            .first()
        )
    except (ValueError, TypeError, ValidationError):  # not a pk at all, e.g. "u1"
        return None
    except DatabaseError as exc:
        raise UserUnresolvedError(f"the user could not be looked up: {exc}") from exc
    return None if found is None else str(found)


def _database(policy: QueryPolicy, owner: str | None) -> sqlite3.Connection:
    """The shop as ``owner`` sees it: their customers and those customers' orders only."""
    customers = [c for c in _CUSTOMERS if owner is not None and c[4] == owner]
    ids = {c[0] for c in customers}
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", customers)
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", [o for o in _ORDERS if o[1] in ids])
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


@acts_as("user")
def run_query(sql: str, tool_context: ToolContext) -> dict[str, Any]:
    """Runs one SQL query on the user's own shop data and returns the columns and rows.

    It acts as the user: the database holds only the customers the user owns and their
    orders, so every query answers about the user's own data (no need to filter by owner).
    Tables: customers(id INTEGER, name TEXT, email TEXT, city TEXT, owner TEXT) and
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
    try:
        owner = _username_of(tool_context.principal)
    except UserUnresolvedError as exc:
        return {"error": f"Error: no query was run: {exc}."}
    db = _database(policy, owner)
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
    description="Answers questions about the user's own customers and orders with SQL.",
    instruction=(
        "You answer questions about the shop's customers and orders by running SQL with "
        "run_query, then summarise the rows. run_query acts as the user you are talking "
        "to: it sees only that user's own customers and their orders, so its rows are all "
        "theirs, and a customer it does not return is one they may not see. Never try to "
        "read other tables."
    ),
    tools=[run_query],
    **guarded(),
)
