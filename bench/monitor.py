"""The Monitor at scale, timed (docs/BENCHMARKS.md, "Monitor").

  .venv/bin/python bench/monitor.py [--spans 1000000] [--runs 100000] [--db sqlite|postgres]

A fresh database — a SQLite file in a temporary directory, or a new database on the
project's PostgreSQL (``scripts/postgres.sh``) —, migrated, then filled with a generated
fleet: 60 users, 10,000 sessions of five agents (two of them ingested from elsewhere),
``--runs`` runs spread over the last 90 days (85 % succeeded, 10 % failed, 5 % cancelled)
and ``--spans`` spans, each run's share: its agent span and model and tool calls (six
tools, three models, 4 % of the calls failed), **stored through the span store**
(``spans_store``, batches of 1,000: the rollups are kept as in production, and the rate at
which it stores is printed).

Then each question the Monitor answers — the whole page as an operator, over 1 h … 90 days,
with filters, as one user — is asked ``--repeat`` times after a warm-up, and its median and
p95 printed; the JSON endpoint and the rendered page (HTTP) too. The calls read from every
span of the range instead (``reads_exact``: as one person's numbers are read, and as the
page read everyone's before the rollups) are timed beside them: the ratio is the rollups'
gain. Prints Markdown; writes nothing to docs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agentdash.live_harness import manage  # noqa: E402

USERS, SESSIONS = 60, 10_000
AGENTS = ("capital_agent", "support_desk", "data_agent")
OUTSIDE = ("weather-app", "crm-bot")
TOOLS = ("get_capital_city", "lookup_order", "run_sql", "search_docs", "send_email", "refund")
MODELS = ("gemini-2.5-flash", "gemini-2.5-pro", "gpt-4o-mini")
DAYS = 90
BATCH = 1_000


def fill(runs_n: int, spans_n: int) -> tuple[float, float]:
    """The fleet; the seconds the runs took, and the span store's spans per second."""
    from django.contrib.auth.models import User

    from agentdash.agent_sessions.models import AgentSession
    from agentdash.runs.models import Run
    from agentdash.spans.services import spans_store
    from agentdash.spans.span_version import SpanVersion

    rnd = random.Random(28)
    User.objects.bulk_create(User(username=f"user{n}", password="!") for n in range(USERS))
    users = list(User.objects.filter(username__startswith="user"))
    now = time.time()
    sessions = []
    for n in range(SESSIONS):
        outside = n % 5 == 4
        sessions.append(AgentSession(
            id=f"otlp-{n:040x}" if outside else f"s{n:08d}",
            app_name=rnd.choice(OUTSIDE if outside else AGENTS),
            user_id="u", owner=rnd.choice(users), last_update_time=now,
        ))  # fmt: skip
    AgentSession.objects.bulk_create(sessions, batch_size=5_000)
    started = time.perf_counter()
    runs: list[Any] = []
    plan: list[tuple[str, float]] = []
    for n in range(runs_n):
        session = rnd.choice(sessions)
        at = now - rnd.uniform(0, DAYS * 86400)
        status = rnd.choices(["succeeded", "failed", "cancelled"], [85, 10, 5])[0]
        moment = datetime.fromtimestamp(at, tz=UTC)
        runs.append(Run(
            session_id=session.id, agent_name=session.app_name, invocation_id=f"e-{n}",
            status=status, message={}, started_at=moment,
            finished_at=moment + timedelta(seconds=rnd.uniform(1, 40)),
        ))  # fmt: skip
        plan.append((session.id, at))
    Run.objects.bulk_create(runs, batch_size=5_000)
    # created_at is set on insert (auto_now_add): the runs' moments, by one update per day.
    _runs_dated(runs)
    runs_s = time.perf_counter() - started
    plan.sort(key=lambda p: p[1])  # spans come as time passes: a batch is of one moment
    per_run = max(1, spans_n // max(1, runs_n))
    versions: list[SpanVersion] = []
    stored, store_s = 0, 0.0
    for n, (session_id, at) in enumerate(plan):
        for k in range(per_run):
            kind = "agent" if k == 0 else ("model" if k % 2 else "tool")
            start = int((at + k) * 1e9)
            seconds = rnd.lognormvariate(0, 1) if kind == "model" else rnd.lognormvariate(-2, 1)
            attributes: dict[str, Any] = {"agentdash.span.kind": kind}
            if kind == "model":
                attributes |= {"gen_ai.request.model": rnd.choice(MODELS),
                               "gen_ai.usage.input_tokens": rnd.randint(200, 4000),
                               "gen_ai.usage.output_tokens": rnd.randint(10, 600)}  # fmt: skip
            elif kind == "tool":
                attributes["gen_ai.tool.name"] = rnd.choice(TOOLS)
            versions.append(SpanVersion(
                trace_id=f"{n:032x}", span_id=f"{k:016x}", name=kind, start_time=start,
                end_time=start + int(seconds * 1e9), session_id=session_id,
                status="error" if rnd.random() < 0.04 else "ok", attributes=attributes,
            ))  # fmt: skip
        if len(versions) >= BATCH or n == len(plan) - 1:
            began = time.perf_counter()
            spans_store(versions=versions, announce=False)
            store_s += time.perf_counter() - began
            stored += len(versions)
            versions = []
    return runs_s, stored / store_s


def _runs_dated(runs: list[Any]) -> None:
    from django.db import connection

    from agentdash.runs.models import Run

    table = Run._meta.db_table
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET created_at = %s WHERE invocation_id = %s",
            [(r.started_at, r.invocation_id) for r in runs],
        )


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, round(0.95 * len(times)) - 1)]


def reads_exact(query: Any, viewer: Any) -> dict[str, Any]:
    """The Monitor's numbers read from every span of the range instead of the rollups
    (``steps_read_spans`` over every session: what the page read before them)."""
    from agentdash.monitor.stats import stats_sessions
    from agentdash.spans.step_reads import steps_read_spans

    first = int(query.start.timestamp()) // query.step_s * query.step_s
    read = steps_read_spans(
        start_s=first, end_s=int(query.end.timestamp()) + 1, step_s=query.step_s,
        sessions=stats_sessions(query, viewer=viewer),
    )  # fmt: skip
    return {"calls": sum(v[0] for v in read.by_name.values())}


def measure(repeat: int) -> list[tuple[str, float, float, float | None]]:
    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client

    from agentdash.core.permissions import OPERATORS_GROUP
    from agentdash.core.services import roles_ensure
    from agentdash.monitor.stats import stats, stats_query

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    roles_ensure()
    operator, _ = User.objects.get_or_create(username="bench-operator", defaults={"password": "!"})
    operator.groups.add(Group.objects.get(name=OPERATORS_GROUP))
    operator = User.objects.get(pk=operator.pk)
    user = User.objects.get(username="user7")
    rows: list[tuple[str, float, float, float | None]] = []

    def ask(label: str, who: Any, exact: bool = False, **params: str) -> None:
        query = stats_query(params)
        median, p95 = timed(lambda: stats(query, viewer=who), repeat)
        before = timed(lambda: reads_exact(query, who), max(1, repeat // 5))[0] if exact else None
        rows.append((label, median, p95, before))

    for name in ("1h", "24h", "7d", "30d", "90d"):
        ask(f"everything, last {name} (an operator)", operator, exact=True, range=name)
    ask("90 days, one agent", operator, range="90d", agent="support_desk")
    ask("90 days, one tool", operator, range="90d", tool="run_sql")
    ask("90 days, ingested only", operator, range="90d", source="ingested")
    ask("90 days, failed runs only", operator, range="90d", status="failed")
    ask("90 days, one user's own", user, exact=True, range="90d")
    client = Client(HTTP_HOST="localhost")
    client.force_login(operator)
    for path in ("/monitor/stats.json?range=90d", "/monitor/?range=90d", "/monitor/?range=24h"):
        answer = client.get(path)
        assert answer.status_code == 200, answer.status_code
        median, p95 = timed(lambda p=path: client.get(p), repeat)
        rows.append((f"`GET {path}` (HTTP{', rendered' if 'json' not in path else ''})",
                     median, p95, None))  # fmt: skip
    return rows


def database(kind: str, tmp: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp / 'bench.sqlite3'}"
    import subprocess

    import psycopg

    server = subprocess.run([str(ROOT / "scripts/postgres.sh"), "start"], check=True,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    name = f"agentdash_bench_monitor_{os.getpid()}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server.rsplit('/', 1)[0]}/{name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--fill-only", action="store_true", help="store the spans, print the rate, ask nothing"
    )
    parser.add_argument(
        "--filled",
        metavar="DATABASE_URL",
        help="a database this script filled before: ask the questions only",
    )
    parser.add_argument(
        "--no-rollups",
        action="store_true",
        help="store without keeping the rollups (their cost, by difference)",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentdash-monitor-"))
    os.environ.update(
        DATABASE_URL=args.filled or database(args.db, tmp),
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        ALLOWED_HOSTS="localhost",
    )
    manage(dict(os.environ), "migrate", "--noinput")
    import django

    django.setup()
    if args.no_rollups:
        from agentdash.spans import services

        services.versions_counted = lambda versions: None  # type: ignore[assignment]
    from agentdash.spans.models import Span, StepRollup

    if not args.filled:
        runs_s, rate = fill(args.runs, args.spans)
        print(f"{args.db}: {args.runs:,} runs ({runs_s:.0f} s), {Span.objects.count():,} spans "
              f"stored at {rate:,.0f} spans/s, {StepRollup.objects.count():,} rollup rows "
              f"({tmp})\n")  # fmt: skip
    if args.fill_only:
        return
    print("| question | median | p95 | every span read (median) |\n|---|---:|---:|---:|")
    for label, median, p95, before in measure(args.repeat):
        exact = f"{before:,.0f} ms ({before / median:,.0f}×)" if before else "—"
        print(f"| {label} | {median:,.1f} ms | {p95:,.1f} ms | {exact} |")


if __name__ == "__main__":
    main()
