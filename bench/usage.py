"""Tokens and cost at scale, timed (docs/BENCHMARKS.md, "Tokens and cost").

  .venv/bin/python bench/usage.py [--heavy 5] [--spans 50000]

A fresh SQLite file in a temporary directory (the embedded default's database), migrated and
seeded (the demo accounts, the price table), then ``--heavy`` sessions of ``--spans`` spans
each (runs of ~500 spans, as the runtime traces them, through the app's services:
``bench/ui_sessions.py``; a sixth of the spans are model calls with their tokens). Each read
is made as the pages make it — one warm-up, then the median of 7:

- the totals of one session and its runs (``session_usage``: the snapshot's read);
- one run's totals (``runs_usage``: what each live ``run`` change reads);
- a page of the sessions list: ``sessions_usage`` over 50 sessions, the heavy ones among them;
- the session page's whole snapshot (``session_snapshot_data``), usage included;
- for comparison, the same totals read out of the spans' JSON attributes (what the totals
  would cost without the usage columns and their index).

Prints a Markdown table; nothing is written to the docs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agentdash.live_harness import manage  # noqa: E402

ROUNDS = 7


def timed(read: Callable[[], Any]) -> float:
    """The median of ``ROUNDS`` reads, in ms, after one warm-up."""
    read()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        read()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def generate(env: dict[str, str], spans: int) -> str:
    """One session of ``spans`` spans, made by ``bench/ui_sessions.py``; its id."""
    found = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ui_sessions.py"), "spans", "--count",
         str(spans), "--owner", "alice"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    session_id: str = json.loads(found.stdout.strip().splitlines()[-1])["session_id"]
    return session_id


def fresh_site(name: str) -> dict[str, str]:
    """The environment of a fresh embedded site (an SQLite file in a temporary directory,
    migrated and seeded with the demo accounts and prices), for a benchmark's processes."""
    tmp = Path(tempfile.mkdtemp(prefix=f"agentdash-{name}-bench-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "AGENTDASH_VAR_DIR": str(tmp / "var"),
        "DJANGO_SETTINGS_MODULE": "agentdash.settings",
        "DEBUG": "1",
    }
    manage(env, "migrate", "-v0")
    manage(env, "seed_demo")
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", type=int, default=5, help="sessions of --spans spans")
    parser.add_argument("--spans", type=int, default=50_000)
    args = parser.parse_args()

    env = fresh_site("usage")
    heavy = [generate(env, args.spans) for _ in range(args.heavy)]

    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db.models import Count, IntegerField, Q, Sum
    from django.db.models.fields.json import KT
    from django.db.models.functions import Cast, Coalesce

    from agentdash.agent_sessions.models import AgentSession
    from agentdash.dashboard.session.selectors import session_snapshot_data
    from agentdash.runs.models import Run
    from agentdash.spans.models import Span
    from agentdash.spans.totals import runs_usage, session_usage, sessions_usage

    big = heavy[0]
    operator = User.objects.get(username="operator")
    session = AgentSession.objects.get(pk=big)
    run = Run.objects.filter(session_id=big).order_by("id").first()
    assert run is not None
    light = list(
        AgentSession.objects.exclude(pk__in=heavy).values_list("pk", flat=True)[: 50 - len(heavy)]
    )
    total, by_run = session_usage(session_id=big)

    def from_json() -> list[Any]:
        usage = Q(attributes__has_key="gen_ai.usage.input_tokens") | Q(
            attributes__has_key="gen_ai.usage.output_tokens"
        )
        model = Coalesce(
            KT("attributes__gen_ai.response.model"), KT("attributes__gen_ai.request.model")
        )

        def tokens(key: str) -> Any:
            return Sum(Cast(KT(f"attributes__gen_ai.usage.{key}"), IntegerField()))

        return list(
            Span.objects.filter(session_id=big)
            .filter(usage)
            .annotate(model=model)
            .values("run_id", "model")
            .annotate(i=tokens("input_tokens"), o=tokens("output_tokens"), n=Count("id"))
            .order_by()
        )

    page = [*heavy, *light]
    rows = [
        (
            "one session's totals and its runs' (`session_usage`)",
            timed(lambda: session_usage(session_id=big)),
        ),
        (
            "one run's totals (`runs_usage`, each live `run` change)",
            timed(lambda: runs_usage(session_ids=[big], run_ids=[run.pk])),
        ),
        (
            f"a sessions-list page: 50 sessions, {len(heavy)} of {args.spans:,} spans "
            "(`sessions_usage`)",
            timed(lambda: sessions_usage(session_ids=page)),
        ),
        (
            "the session page's snapshot, usage included (`session_snapshot_data`)",
            timed(lambda: session_snapshot_data(session=session, user=operator)),
        ),
        ("for comparison: one session's totals read from the spans' JSON", timed(from_json)),
    ]
    load = os.getloadavg()[0]
    print(
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} CPUs (load average {load:.1f}); SQLite; {args.heavy} sessions of "
        f"{args.spans:,} spans, the first with {total.calls:,} model calls in {len(by_run)} runs "
        f"(`bench/usage.py --heavy {args.heavy} --spans {args.spans}`).\n"
    )
    print("| read | median |\n|---|---:|")
    for label, ms in rows:
        print(f"| {label} | {ms:.1f} ms |")


if __name__ == "__main__":
    main()
