"""Scale-out on one machine: the scale mode behind HAProxy (``scripts/haproxy.sh``, the
configuration of docs/DEPLOY.md) with one, then two daphne + worker pairs — the same load
through the balancer each time (``make bench-scale-out``; docs/BENCHMARKS.md, "Scale-out").

  .venv/bin/python bench/scale_out.py [--pairs 1,2] [--clients 20] [--rounds 5]
                                      [--bursts 2] [--burst-calls 1000] [--no-doc]

PostgreSQL and Redis from the project's scripts (a database of its own, dropped after). A
pair is a daphne and a Celery worker (threads pool, 10 slots), each its own process group.
Measured through the balancer, after one warm-up run:

- **latency**: span start → its first version on a websocket, ``--clients`` sessions asking
  at once (the capital agent, offline model), ``--rounds`` times;
- **throughput**: ``--bursts`` sessions each asking the burst agent at once (1,000 tool calls
  in one turn each): their spans, stored and received ended, per second from the first
  ``chat.send`` to the last final version received.

The figure is the ratio of two pairs to one: this machine has two cores, so two pairs share
them with PostgreSQL, Redis, HAProxy and the clients.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _doc import DOC, doc_update, machine  # noqa: E402
from live import (  # noqa: E402
    AGENTS,
    Database,
    bursts_at_once,
    latency,
    warm_up,
)

from tests.agentdash.live_harness import free_port  # noqa: E402
from tests.agentdash.scale_harness import (  # noqa: E402
    Balancer,
    Hosts,
    scale_backends,
    scale_env,
)


@contextlib.contextmanager
def cluster(tmp: Path, pairs: int, burst_calls: int) -> Iterator[tuple[str, Database, Hosts]]:
    """``pairs`` daphne + worker pairs behind HAProxy; (the balancer's URL, the database,
    the hosts)."""
    with scale_backends() as backends:
        env = scale_env(
            backends, tmp / "var", AGENTDASH_AGENTS=AGENTS, LOG_LEVEL="WARNING",
            AGENTDASH_BENCH_BURST_CALLS=str(burst_calls), DATABASE_CONN_MAX_AGE="60",
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        )  # fmt: skip
        hosts = Hosts(tmp, env)
        lb = Balancer(tmp / "haproxy", free_port())
        try:
            daphnes = []
            for n in range(1, pairs + 1):
                hosts.worker(f"worker-{n}", concurrency=10)
                daphnes.append(hosts.daphne(f"daphne-{n}"))
            yield lb.start(daphnes), Database(backends[0]), hosts
        finally:
            lb.stop()
            hosts.stop()


def measure(pairs: int, args: argparse.Namespace) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix=f"agentdash-bench-out{pairs}-") as tmp_dir,
        cluster(Path(tmp_dir), pairs, args.burst_calls) as (url, db, hosts),
    ):
        try:
            asyncio.run(warm_up(url))
            row = asyncio.run(latency(url, db, args.clients, args.rounds))
            rates = [
                asyncio.run(bursts_at_once(url, db, args.bursts)) for _ in range(args.burst_rounds)
            ]
        except BaseException:
            print(hosts.logs(chars=20_000), file=sys.stderr)
            raise
    per_s = [r for _, r in rates]
    found = {"pairs": pairs, **row, "spans_per_round": rates[0][0],
             "rate": statistics.median(per_s), "rates": per_s}  # fmt: skip
    print(
        f"{pairs} pair(s): {row['runs']} clients, {row['spans']} spans: live p50 "
        f"{row['p50']:.1f} ms, p99 {row['p99']:.1f} ms; {args.bursts} bursts at once: "
        f"{found['rate']:,.0f} spans/s ({', '.join(f'{r:,.0f}' for r in found['rates'])})",
        flush=True,
    )
    return found


def results_markdown(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    m = machine()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Run {date} on {m['arch']}, {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}: "
        f"`bench/scale_out.py --clients {args.clients} --rounds {args.rounds} --bursts "
        f"{args.bursts} --burst-calls {args.burst_calls}` — through HAProxy, PostgreSQL and "
        "Redis on the same machine.",
        "",
        "| daphne + worker pairs | spans | live p50 | live p99 | spans/s, bursts at once "
        "(median) | rounds | vs 1 pair |",
        "| ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    one = results[0]
    for found in results:
        rates = ", ".join(f"{r:,.0f}" for r in found["rates"])
        lines.append(
            f"| {found['pairs']} | {found['spans']:,} | {found['p50']:.1f} ms | "
            f"{found['p99']:.1f} ms | {found['rate']:,.0f} | {rates} | "
            f"{found['rate'] / one['rate']:.2f}× spans/s, {found['p99'] / one['p99']:.2f}× p99 |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="1,2", help="comma-separated: pairs per setup")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bursts", type=int, default=2, help="burst sessions at once")
    parser.add_argument("--burst-rounds", type=int, default=3)
    parser.add_argument("--burst-calls", type=int, default=1000, help="tool calls per burst")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    args = parser.parse_args()
    results = [measure(int(p), args) for p in args.pairs.split(",")]
    latest = results_markdown(results, args)
    print(latest)
    if not args.no_doc:
        m = machine()
        day, box = datetime.now(UTC).strftime("%Y-%m-%d"), f"{m['arch']}/{m['cpus']} CPUs"
        doc_update(
            name="bench-scale-out",
            heading="## Scale-out",
            latest=latest,
            history_header=(
                "| date | machine | pairs | 20 runs p50 / p99 ms | spans/s |\n"
                "| --- | --- | ---: | ---: | ---: |"
            ),
            history_row="\n".join(
                f"| {day} | {box} | {r['pairs']} | {r['p50']:.1f} / {r['p99']:.1f} | "
                f"{r['rate']:,.0f} |"
                for r in results
            ),
        )
        print(f"\nupdated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
