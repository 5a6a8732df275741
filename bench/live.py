"""The live pipeline's latency and throughput, on the embedded default: one daphne, the
inline executor, an SQLite file in a temporary directory (docs/BENCHMARKS.md, "Live
pipeline").

  .venv/bin/python bench/live.py [--rounds N] [--burst-runs N] [--burst-calls N]

- **Latency**: span start in the run (the span item's ``start_time``, Unix ns, taken by the
  runtime) → the span's first version received by a websocket client (``time.time_ns()`` on
  receipt; same machine, same clock). The capital agent on the offline model, 1 session /
  1 client, then 20 sessions / 20 clients sending at once.
- **Peer baseline (modeled)**: during the same runs, a client that polls the database every
  2 s (as Phoenix/Langfuse-style UIs refresh) for new spans; its latency is the first poll
  that finds the span, minus the span's start.
- **Throughput**: ``bench/live_agents.py``'s burst agent (hundreds of tool calls in one
  turn); distinct spans persisted and delivered to one live client, per second from the
  ``chat.send`` to the last span received.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agentdash.live_harness import (  # noqa: E402
    Browserless,
    LiveClient,
    Processes,
    base_env,
    manage,
)

AGENTS = "agentdash.demo.capital:root_agent,bench.live_agents:root_agent"
POLL_S = 2.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def first_seen(client: LiveClient) -> dict[tuple[str, str], tuple[int, int]]:
    """(trace, span) → (first receive time, start_time)."""
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for at, item in client.items("span"):
        data = item["data"]
        if data is not None:
            seen.setdefault((data["trace_id"], data["span_id"]), (at, data["start_time"]))
    return seen


async def poller(db: Path, seen: dict[tuple[str, str], int], stop: asyncio.Event) -> None:
    """The modeled peer: every POLL_S, read the spans table; note when each span is found."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        while not stop.is_set():
            rows = conn.execute("SELECT trace_id, span_id FROM timeline_span").fetchall()
            now = time.time_ns()
            for trace_id, span_id in rows:
                seen.setdefault((trace_id, span_id), now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), POLL_S)
    finally:
        conn.close()


async def latency(url: str, db: Path, clients_n: int, rounds: int) -> dict[str, float]:
    clients = []
    for _ in range(clients_n):
        http = Browserless(url)
        http.log_in("alice")
        client = LiveClient(http, http.new_chat("capital_agent"))
        await client.open()
        await client.hello()
        clients.append(client)
    polled: dict[tuple[str, str], int] = {}
    stop = asyncio.Event()
    poll_task = asyncio.create_task(poller(db, polled, stop))
    try:
        for r in range(rounds):
            accepted = []
            for c in clients:
                await c.send({"type": "chat.send", "text": "What is the capital of France?",
                              "client_id": str(r)})  # fmt: skip
            for c in clients:
                accepted.append((c, await c.message("chat.accepted", client_id=str(r))))
            for c, a in accepted:
                await c.run_ended(int(a["run_id"]))
        await asyncio.sleep(POLL_S * 1.5)  # let the poller find the last spans
    finally:
        stop.set()
        await poll_task
        for c in clients:
            await c.close()
    live_ms, poll_ms = [], []
    for c in clients:
        for key, (at, start) in first_seen(c).items():
            live_ms.append((at - start) / 1e6)
            if key in polled:
                poll_ms.append((polled[key] - start) / 1e6)
    return {
        "spans": len(live_ms),
        "p50": statistics.median(live_ms),
        "p99": pct(live_ms, 0.99),
        "poll_p50": statistics.median(poll_ms),
        "poll_p99": pct(poll_ms, 0.99),
    }


async def stored_spans(db: Path, session_id: str) -> int:
    """How many spans the session has once they are all stored and ended (the run has
    ended, but the pipeline may still be writing its last spans)."""
    query = "SELECT count(*), count(*) - count(end_time) FROM timeline_span WHERE session_id = ?"
    last = None
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        while True:
            found = conn.execute(query, (session_id,)).fetchone()
            if found == last and found[1] == 0:
                return int(found[0])
            last = found
            await asyncio.sleep(0.2)


async def throughput(url: str, db: Path, runs: int) -> list[tuple[int, float]]:
    """Per run: (spans, spans/s from the ``chat.send`` to the last span's final version)."""
    http = Browserless(url)
    http.log_in("alice")
    results = []
    for r in range(runs):
        client = LiveClient(http, http.new_chat("burst_agent"))
        await client.open()
        await client.hello()
        sent = time.time_ns()
        await client.send({"type": "chat.send", "text": "go", "client_id": str(r)})
        accepted = await client.message("chat.accepted")
        await client.run_ended(int(accepted["run_id"]), timeout=600)
        stored = await stored_spans(db, client.session_id)
        await client.wait_for(lambda _, c=client, n=stored: len(final_seen(c)) >= n, "every span")
        last = max(final_seen(client).values())
        results.append((stored, stored / ((last - sent) / 1e9)))
        await client.close()
    return results


def final_seen(client: LiveClient) -> dict[tuple[str, str], int]:
    """(trace, span) → when its final (ended) version was received."""
    seen: dict[tuple[str, str], int] = {}
    for at, item in client.items("span"):
        data = item["data"]
        if data is not None and data["end_time"] is not None:
            seen.setdefault((data["trace_id"], data["span_id"]), at)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="rounds of 1 client (20: /4)")
    parser.add_argument("--burst-runs", type=int, default=3)
    parser.add_argument("--burst-calls", type=int, default=1000, help="tool calls per burst run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentdash-bench-live-") as tmp_dir:
        tmp = Path(tmp_dir)
        db = tmp / "agentdash.sqlite3"
        env = base_env(
            DATABASE_URL=f"sqlite:///{db}",
            AGENTDASH_VAR_DIR=str(tmp / "var"),
            AGENTDASH_EXECUTOR="inline",
            AGENTDASH_INLINE_CONCURRENCY="20",
            AGENTDASH_AGENTS=AGENTS,
            AGENTDASH_BENCH_BURST_CALLS=str(args.burst_calls),
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            LOG_LEVEL="WARNING",
        )
        env.pop("REDIS_URL", None)
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")
        procs = Processes(tmp)
        try:
            url = procs.daphne("daphne", env)
            for n, rounds in ((1, args.rounds), (20, max(1, args.rounds // 4))):
                found = asyncio.run(latency(url, db, n, rounds))
                print(
                    f"latency, {n} concurrent run(s), {found['spans']:.0f} spans: "
                    f"live p50 {found['p50']:.1f} ms, p99 {found['p99']:.1f} ms | "
                    f"polling every {POLL_S:.0f} s (modeled peer): p50 "
                    f"{found['poll_p50']:.0f} ms, p99 {found['poll_p99']:.0f} ms | "
                    f"p50 ratio {found['poll_p50'] / found['p50']:.0f}x",
                    flush=True,
                )
            bursts = asyncio.run(throughput(url, db, args.burst_runs))
            rates = [rate for _, rate in bursts]
            print(
                f"throughput, 1 client: {bursts[0][0]} spans per run, "
                f"median {statistics.median(rates):.0f} spans/s "
                f"(runs: {', '.join(f'{x:.0f}' for x in rates)})",
                flush=True,
            )
        except BaseException:
            print(procs.logs(), file=sys.stderr)
            raise
        finally:
            procs.stop()


if __name__ == "__main__":
    main()
