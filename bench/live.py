"""The live pipeline's latency and throughput (``make bench-live``; docs/BENCHMARKS.md, "Live
pipeline"), on the embedded default and on the scale mode.

  .venv/bin/python bench/live.py [--setup embedded|scale|both] [--rounds N]
                                 [--burst-runs N] [--burst-calls N] [--together N]
                                 [--no-doc]

Setups (servers started here, in a temporary directory):

- **embedded**: one daphne, the inline executor, an SQLite file, the in-memory channel layer;
- **scale**: PostgreSQL and Redis (``scripts/postgres.sh``, ``scripts/redis.sh``; a database
  of its own, dropped after), one daphne serving the clients, two Celery workers (threads
  pool, 10 slots each) running the agents; the Redis channel layer between them. The servers
  run with ``DEBUG`` off, as deployed (the embedded one with it on, as ``make run``).

Measures, after one warm-up run:

- **Latency**: span start in the run (the span item's ``start_time``, Unix ns, taken by the
  runtime) → the span's first version received by a websocket client (``time.time_ns()`` on
  receipt; same machine, same clock), stored (a ``changes`` message) or not yet (``spans``:
  what a busy flusher keeps waiting goes out before it is stored); beside it, the span's
  first stored version alone. The capital agent on the offline model, 1 session / 1 client,
  then 20 sessions / 20 clients sending at once.
- **Peer baseline (modeled)**: during the same runs, a client that polls the database every
  2 s (as Phoenix/Langfuse-style UIs refresh) for new spans; its latency is the first poll
  that finds the span, minus the span's start.
- **Throughput**: ``bench/live_agents.py``'s burst agent (``--burst-calls`` tool calls in one
  turn); the run's spans, stored and delivered in their final version to one live client,
  per second from the ``chat.send`` to the last one received — one run at a time, then
  ``--together`` runs at once (a session and a client each; their spans per second from the
  first ``chat.send`` to the last final version received): one run is one worker's, the
  scale mode spreads runs over its workers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _doc import DOC, doc_update, machine  # noqa: E402

from tests.agentdash.live_harness import (  # noqa: E402
    Browserless,
    LiveClient,
    Processes,
    base_env,
    manage,
    script,
)

AGENTS = "agentdash.demo.capital:root_agent,bench.live_agents:root_agent"
POLL_S = 2.0
GOALS = {"p50": 20.0, "p99": 100.0, "spans_per_s": 5000.0}  # issue 30's, both modes
QUESTION = "What is the capital of France?"


# ── The database, read from outside (the modeled peer, and counting stored spans) ──────────
@dataclass
class Database:
    url: str

    def connect(self) -> Any:
        if self.url.startswith("sqlite:///"):
            path = self.url.removeprefix("sqlite:///")
            return sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, timeout=30, check_same_thread=False
            )
        import psycopg

        return psycopg.connect(self.url, autocommit=True)

    def param(self) -> str:
        return "?" if self.url.startswith("sqlite") else "%s"


async def poller(db: Database, seen: dict[tuple[str, str], int], stop: asyncio.Event) -> None:
    """The modeled peer: every POLL_S, read the spans table; note when each span is found."""
    conn = db.connect()

    def poll() -> list[tuple[str, str]]:
        return list(conn.execute("SELECT trace_id, span_id FROM spans_span").fetchall())

    try:
        while not stop.is_set():
            rows = await asyncio.to_thread(poll)  # off the clients' loop
            now = time.time_ns()
            for trace_id, span_id in rows:
                seen.setdefault((trace_id, span_id), now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), POLL_S)
    finally:
        conn.close()


async def stored_spans(db: Database, run_id: int) -> int:
    """How many spans the run has once all are stored and ended (the run has ended; the
    pipeline may still be writing its last spans)."""
    query = (
        f"SELECT count(*), count(*) - count(end_time) FROM spans_span WHERE run_id = {db.param()}"
    )
    last = None
    conn = db.connect()
    try:
        while True:
            found = tuple(conn.execute(query, (run_id,)).fetchone())
            if found == last and found[1] == 0:
                return int(found[0])
            last = found
            await asyncio.sleep(0.2)
    finally:
        conn.close()


# ── Measurements ───────────────────────────────────────────────────────────────────────────
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def first_seen(
    client: LiveClient, *, stored: bool = False
) -> dict[tuple[str, str], tuple[int, int]]:
    """(trace, span) → (first receive time, start_time): of any version the page shows —
    stored (``changes``) or not yet (``spans``) —, or of its first stored one only."""
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for received in client.received:
        message = received.message
        if message.get("type") == "changes":
            datas = [i["data"] for i in message["items"] if i["kind"] == "span"]
        elif message.get("type") == "spans" and not stored:
            datas = message["items"]
        else:
            continue
        for data in datas:
            if data is not None:
                seen.setdefault(
                    (data["trace_id"], data["span_id"]), (received.at_ns, data["start_time"])
                )
    return seen


def final_seen(client: LiveClient) -> dict[tuple[str, str], int]:
    """(trace, span) → when its final (ended) version was received."""
    seen: dict[tuple[str, str], int] = {}
    for at, item in client.items("span"):
        data = item["data"]
        if data is not None and data["end_time"] is not None:
            seen.setdefault((data["trace_id"], data["span_id"]), at)
    return seen


async def ask(client: LiveClient, text: str, timeout: float = 180.0) -> int:
    """Send ``text``; the run's id once it ended."""
    client_id = uuid.uuid4().hex
    await client.send({"type": "chat.send", "text": text, "client_id": client_id})
    accepted = await client.message("chat.accepted", client_id=client_id)
    await client.run_ended(int(accepted["run_id"]), timeout)
    return int(accepted["run_id"])


async def warm_up(url: str) -> None:
    """One run first: imports, connections and caches of every process are ready."""
    http = Browserless(url)
    http.log_in("alice")
    client = LiveClient(http, http.new_chat("capital_agent"))
    await client.open()
    await client.hello()
    await ask(client, QUESTION, timeout=300)
    await client.close()


async def latency(url: str, db: Database, clients_n: int, rounds: int) -> dict[str, float]:
    clients = []
    for _ in range(clients_n):
        http = Browserless(url)
        http.log_in("alice")
        client = LiveClient(http, http.new_chat("capital_agent"))  # its first run has ended
        await client.open()
        await client.hello(http.runs_settled(client.session_id))  # only what comes next
        clients.append(client)
    polled: dict[tuple[str, str], int] = {}
    stop = asyncio.Event()
    poll_task = asyncio.create_task(poller(db, polled, stop))
    try:
        for _ in range(rounds):
            await asyncio.gather(*(ask(c, QUESTION) for c in clients))
        await asyncio.sleep(POLL_S * 1.5)  # let the poller find the last spans
    finally:
        stop.set()
        await poll_task
        for c in clients:
            await c.close()
    live_ms, stored_ms, poll_ms = [], [], []
    for c in clients:
        for key, (at, start) in first_seen(c).items():
            live_ms.append((at - start) / 1e6)
            if key in polled:
                poll_ms.append((polled[key] - start) / 1e6)
        stored_ms += [(at - start) / 1e6 for at, start in first_seen(c, stored=True).values()]
    return {
        "runs": clients_n,
        "spans": len(live_ms),
        "p50": statistics.median(live_ms),
        "p99": pct(live_ms, 0.99),
        "stored_p50": statistics.median(stored_ms),
        "stored_p99": pct(stored_ms, 0.99),
        "poll_p50": statistics.median(poll_ms),
        "poll_p99": pct(poll_ms, 0.99),
    }


async def bursts_at_once(url: str, db: Database, sessions: int) -> tuple[int, float]:
    """``sessions`` burst runs at once: (their spans, spans/s from the first ``chat.send`` to
    the last final version received)."""
    clients = []
    for _ in range(sessions):
        http = Browserless(url)
        http.log_in("alice")
        client = LiveClient(http, http.new_chat("burst_agent"))
        await client.open()
        await client.hello(http.runs_settled(client.session_id))
        clients.append(client)
    sent = time.time_ns()
    runs = await asyncio.gather(*(ask(c, "go", timeout=900) for c in clients))
    total = 0
    last = sent
    for client, run_id in zip(clients, runs, strict=True):
        stored = await stored_spans(db, run_id)
        await client.wait_for(lambda _, c=client, n=stored: len(final_seen(c)) >= n, "spans")
        total += stored
        last = max(last, *final_seen(client).values())
        await client.close()
    return total, total / ((last - sent) / 1e9)


async def throughput(url: str, db: Database, runs: int) -> list[tuple[int, float]]:
    """Per run: (spans, spans/s from the ``chat.send`` to the last span's final version)."""
    http = Browserless(url)
    http.log_in("alice")
    results = []
    for _ in range(runs):
        client = LiveClient(http, http.new_chat("burst_agent"))  # its first run has ended
        await client.open()
        await client.hello(http.runs_settled(client.session_id))  # only what comes next
        sent = time.time_ns()
        run_id = await ask(client, "go", timeout=600)
        stored = await stored_spans(db, run_id)
        await client.wait_for(lambda _, c=client, n=stored: len(final_seen(c)) >= n, "every span")
        last = max(final_seen(client).values())
        results.append((stored, stored / ((last - sent) / 1e9)))
        await client.close()
    return results


# ── Setups ─────────────────────────────────────────────────────────────────────────────────
def common_env(tmp: Path, burst_calls: int, **extra: str) -> dict[str, str]:
    env = base_env(
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        AGENTDASH_AGENTS=AGENTS,
        AGENTDASH_BENCH_BURST_CALLS=str(burst_calls),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        LOG_LEVEL="WARNING",
        **extra,
    )
    return env


@contextlib.contextmanager
def embedded(tmp: Path, burst_calls: int) -> Iterator[tuple[str, Database, Processes]]:
    url = f"sqlite:///{tmp / 'agentdash.sqlite3'}"
    env = common_env(
        tmp,
        burst_calls,
        DATABASE_URL=url,
        AGENTDASH_EXECUTOR="inline",
        AGENTDASH_INLINE_CONCURRENCY="20",
    )
    env.pop("REDIS_URL", None)
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    procs = Processes(tmp)
    try:
        yield procs.daphne("daphne", env), Database(url), procs
    finally:
        procs.stop()


@contextlib.contextmanager
def scale(tmp: Path, burst_calls: int) -> Iterator[tuple[str, Database, Processes]]:
    started = []
    for name in ("postgres", "redis"):
        if script(name, "status").returncode != 0:
            started.append(name)
        found = script(name, "start")
        if found.returncode != 0:
            raise RuntimeError(f"scripts/{name}.sh start failed:\n{found.stderr}")
    import psycopg

    server = script("postgres", "url").stdout.strip()
    name = f"agentdash_bench_{os.getpid()}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"{server.rsplit('/', 1)[0]}/{name}"
    redis = script("redis", "url").stdout.strip().rsplit("/", 1)[0] + "/13"
    env = common_env(
        tmp,
        burst_calls,
        DATABASE_URL=url,
        REDIS_URL=redis,
        AGENTDASH_EXECUTOR="celery",
        CELERY_QUEUE=f"agentdash-bench-{os.getpid()}",
        DATABASE_CONN_MAX_AGE="60",
    )
    procs = Processes(tmp)
    try:
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")  # (refused with DEBUG off: the servers only run so)
        # The servers as a deployment runs them (docs/DEPLOY.md): DEBUG off, which spares
        # every statement Django's query log.
        served = {**env, "DEBUG": "0", "SECRET_KEY": "bench-live-secret-key-" + "x" * 40}
        procs.worker("worker-1", served, concurrency=10)
        procs.worker("worker-2", served, concurrency=10)
        yield procs.daphne("daphne", served), Database(url), procs
    finally:
        procs.stop()
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        for service in reversed(started):
            script(service, "stop")


SETUPS = {"embedded": embedded, "scale": scale}


def measure(setup: str, args: argparse.Namespace) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix=f"agentdash-bench-live-{setup}-") as tmp_dir,
        SETUPS[setup](Path(tmp_dir), args.burst_calls) as (url, db, procs),
    ):
        try:
            asyncio.run(warm_up(url))
            found: dict[str, Any] = {"setup": setup, "latency": []}
            for n, rounds in ((1, args.rounds), (20, max(1, args.rounds // 4))):
                row = asyncio.run(latency(url, db, n, rounds))
                print(
                    f"{setup}: latency, {n} concurrent run(s), {row['spans']} spans: "
                    f"live p50 {row['p50']:.1f} ms, p99 {row['p99']:.1f} ms (stored: "
                    f"{row['stored_p50']:.1f} / {row['stored_p99']:.1f} ms) | polling every "
                    f"{POLL_S:.0f} s: p50 {row['poll_p50']:.0f} ms, p99 {row['poll_p99']:.0f} ms",
                    flush=True,
                )
                found["latency"].append(row)
            bursts = asyncio.run(throughput(url, db, args.burst_runs))
            found["spans_per_run"] = bursts[0][0]
            found["rates"] = [rate for _, rate in bursts]
            print(
                f"{setup}: throughput, 1 client: {bursts[0][0]} spans per run, median "
                f"{statistics.median(found['rates']):.0f} spans/s",
                flush=True,
            )
            together = [
                asyncio.run(bursts_at_once(url, db, args.together))
                for _ in range(args.burst_runs if args.together > 1 else 0)
            ]
            found["together"] = [rate for _, rate in together]
            if together:
                print(
                    f"{setup}: throughput, {args.together} runs at once: median "
                    f"{statistics.median(found['together']):.0f} spans/s",
                    flush=True,
                )
            return found
        except BaseException:
            print(procs.logs(chars=50_000), file=sys.stderr)
            raise


# ── Results ────────────────────────────────────────────────────────────────────────────────
def verdict(value: float, goal: float, *, at_least: bool = False) -> str:
    return "met" if (value >= goal if at_least else value <= goal) else "**not met**"


def results_markdown(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    m = machine()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Run {date} on {m['arch']}, {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}: "
        f"`bench/live.py --rounds {args.rounds} --burst-runs {args.burst_runs} "
        f"--burst-calls {args.burst_calls} --together {args.together}`.",
        "",
        "| setup | concurrent runs | spans | live p50 | live p99 "
        f"| goal (p50 ≤ {GOALS['p50']:g}, p99 ≤ {GOALS['p99']:g} ms) "
        "| first stored p50 / p99 | 2 s polling peer p50 / p99 | p50 ratio |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for found in results:
        for row in found["latency"]:
            goal = "met" if row["p50"] <= GOALS["p50"] and row["p99"] <= GOALS["p99"] else None
            lines.append(
                f"| {found['setup']} | {row['runs']} | {row['spans']:,} | {row['p50']:.1f} ms | "
                f"{row['p99']:.1f} ms | {goal or '**not met**'} | {row['stored_p50']:.1f} / "
                f"{row['stored_p99']:.1f} ms | {row['poll_p50']:,.0f} ms / "
                f"{row['poll_p99']:,.0f} ms | {row['poll_p50'] / row['p50']:.0f}× |"
            )
    lines += [
        "",
        "| setup | runs at once | spans per run | spans/s, median | rounds "
        f"| goal (≥ {GOALS['spans_per_s']:,.0f}/s) |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for found in results:
        for at_once, rates in ((1, found["rates"]), (args.together, found["together"])):
            if not rates:
                continue
            rate = statistics.median(rates)
            runs = ", ".join(f"{r:,.0f}" for r in rates)
            lines.append(
                f"| {found['setup']} | {at_once} | {found['spans_per_run']:,} | {rate:,.0f} | "
                f"{runs} | {verdict(rate, GOALS['spans_per_s'], at_least=True)} |"
            )
    return "\n".join(lines)


def history_rows(results: list[dict[str, Any]]) -> str:
    m = machine()
    day, box = datetime.now(UTC).strftime("%Y-%m-%d"), f"{m['arch']}/{m['cpus']} CPUs"
    rows = []
    for found in results:
        one, twenty = found["latency"]
        together = found["together"]
        rows.append(
            f"| {day} | {box} | {found['setup']} | {one['p50']:.1f} / {one['p99']:.1f} | "
            f"{twenty['p50']:.1f} / {twenty['p99']:.1f} | "
            f"{statistics.median(found['rates']):,.0f} | "
            f"{f'{statistics.median(together):,.0f}' if together else '—'} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", choices=("embedded", "scale", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of 1 client (20: /4)")
    parser.add_argument("--burst-runs", type=int, default=3)
    parser.add_argument("--burst-calls", type=int, default=1000, help="tool calls per burst")
    parser.add_argument(
        "--together", type=int, default=2, help="burst runs at once after those alone (1: none)"
    )
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    args = parser.parse_args()
    setups = ("embedded", "scale") if args.setup == "both" else (args.setup,)
    results = [measure(setup, args) for setup in setups]
    latest = results_markdown(results, args)
    print(latest)
    if not args.no_doc:
        doc_update(
            name="bench-live",
            heading="## Live pipeline",
            latest=latest,
            history_header=(
                "| date | machine | setup | 1 run p50 / p99 ms | 20 runs p50 / p99 ms | "
                "spans/s | spans/s, runs at once |\n| --- | --- | --- | ---: | ---: | ---: | ---: |"
            ),
            history_row=history_rows(results),
        )
        print(f"\nupdated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
