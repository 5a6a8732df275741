"""The sessions list at scale, timed (docs/BENCHMARKS.md, "Sessions list").

  .venv/bin/python bench/sessions_list.py [--sessions 300000]

A fresh SQLite file in a temporary directory (the embedded default's database), migrated,
then filled through the ORM's bulk inserts — the list only reads rows, how they were written
does not matter to it — with ``--sessions`` sessions of 200 users and the three demo agents:
one run each (8 in 10 succeeded, 1 failed, 1 cancelled), five spans each (1 session in 100:
500), an error span in 3 sessions in 100; then one more user with 20 sessions of 50,000 spans,
the newest of all. Each page is asked as the home page asks it (``session_list_page``): one
warm-up, then the median of 5. The home page itself (HTTP, rendered) is timed the same way.
Prints a Markdown table; nothing is written to the docs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agentdash.live_harness import manage  # noqa: E402

USERS = 200
AGENTS = ("capital_agent", "support_desk", "data_agent")
WORDS = [
    "capital",
    "france",
    "japan",
    "billing",
    "refund",
    "invoice",
    "customers",
    "orders",
    "weather",
    "trip",
    "lisbon",
    "paris",
    "report",
    "timeout",
    "login",
    "password",
]
BATCH = 5_000
HEAVY_SESSIONS, HEAVY_SPANS = 20, 50_000


def fill(sessions_n: int) -> None:
    from django.contrib.auth.models import User

    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run
    from agentdash.spans.models import Span

    rnd = random.Random(11)
    User.objects.bulk_create(User(username=f"user{n}", password="!") for n in range(USERS))
    users = list(User.objects.filter(username__startswith="user"))
    start = time.time() - sessions_n * 30
    sessions: list[Any] = []
    runs: list[Any] = []
    spans: list[Any] = []

    def flush() -> None:
        AgentSession.objects.bulk_create(sessions, batch_size=BATCH)
        Run.objects.bulk_create(runs, batch_size=BATCH)
        Span.objects.bulk_create(spans, batch_size=BATCH)
        sessions.clear(), runs.clear(), spans.clear()

    def session(session_id: str, owner: Any, at: float, text: str, spans_n: int, errors: int):
        sessions.append(
            AgentSession(
                id=session_id, app_name=rnd.choice(AGENTS), user_id=str(owner.pk), owner=owner,
                title=text[:80], first_message=text, last_update_time=at,
            )
        )  # fmt: skip
        status = rnd.choice(["succeeded"] * 8 + ["failed", "cancelled"])
        runs.append(
            Run(
                session_id=session_id, agent_name="a", invocation_id=f"e-{session_id}",
                status=status, message={},
            )
        )  # fmt: skip
        for k in range(spans_n):
            spans.append(
                Span(
                    trace_id=session_id, span_id=f"{k:016x}", name="s", start_time=k,
                    end_time=k + 1, status="error" if k < errors else "ok", session_id=session_id,
                )
            )  # fmt: skip
        if len(spans) >= 100_000:
            flush()

    for n in range(sessions_n):
        text = " ".join(rnd.choice(WORDS) for _ in range(8))
        spans_n = 500 if rnd.random() < 0.01 else 5
        errors = 1 if rnd.random() < 0.03 else 0
        session(uuid.uuid4().hex, rnd.choice(users), start + n * 30, text, spans_n, errors)
    heavy = User.objects.create(username="heavy", password="!")
    for n in range(HEAVY_SESSIONS):
        session(uuid.uuid4().hex, heavy, time.time() + n, "big", HEAVY_SPANS, HEAVY_SPANS // 1000)
    flush()


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    fn()
    times = []
    for _ in range(5):
        started = time.perf_counter()
        found = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, found


def measure() -> list[tuple[str, float, int]]:
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client

    from agentdash.core.permissions import OPERATORS_GROUP
    from agentdash.core.services import roles_ensure
    from agentdash.dashboard.sessions_list.reads import SessionListFilters as Filters
    from agentdash.dashboard.sessions_list.reads import session_list_page

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    roles_ensure()
    operator = User.objects.create(username="bench-operator", password="!")
    operator.groups.add(Group.objects.get(name=OPERATORS_GROUP))
    operator = User.objects.get(pk=operator.pk)
    user = User.objects.get(username="user7")
    heavy = User.objects.get(username="heavy")
    rows: list[tuple[str, float, int]] = []

    def page(label: str, who: Any, filters: Any) -> Any:
        ms, found = timed(lambda: session_list_page(user=who, filters=filters))
        rows.append((label, ms, len(found.rows)))
        return found

    first = page("everyone's (an operator), first page", operator, Filters())
    deep = first
    for _ in range(100):
        deep = session_list_page(user=operator, filters=Filters(after=deep.older))
    page("everyone's, page 101 (`after`)", operator, Filters(after=deep.older))
    page("everyone's, back from page 101 (`before`)", operator, Filters(before=deep.newer))
    page("one user's, first page", user, Filters())
    page(f"one user's {HEAVY_SESSIONS} sessions of {HEAVY_SPANS:,} spans", heavy, Filters())
    page("agent filter", operator, Filters(agent="data_agent"))
    page("owner filter", operator, Filters(owner="user7"))
    page("status: failed", operator, Filters(status="failed"))
    page("status: queued or running (none)", operator, Filters(status="active"))
    page("with errors", operator, Filters(errors=True))
    page("search, a common word", operator, Filters(q="lisbon"))
    page("search, no match (every title read)", operator, Filters(q="no-such-words"))
    page("search, one user's, no match", user, Filters(q="no-such-words"))
    page("search, the start of an id", operator, Filters(q=first.rows[10]["id"][:8]))

    client = Client(HTTP_HOST="localhost")
    client.force_login(operator)
    ms, response = timed(lambda: client.get("/"))
    assert response.status_code == 200
    rows.append(("the home page (HTTP, rendered), an operator", ms, 50))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentdash-sessions-list-"))
    os.environ.update(
        DATABASE_URL=f"sqlite:///{tmp / 'bench.sqlite3'}",
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        ALLOWED_HOSTS="localhost",
    )
    manage(dict(os.environ), "migrate", "--noinput")
    import django

    django.setup()
    started = time.perf_counter()
    fill(args.sessions)
    filled = time.perf_counter() - started
    print(f"{args.sessions:,} sessions filled in {filled:.0f} s ({tmp})\n")
    print("| page | median | rows |\n|---|---:|---:|")
    for label, ms, count in measure():
        print(f"| {label} | {ms:,.1f} ms | {count} |")


if __name__ == "__main__":
    main()
