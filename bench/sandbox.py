"""A trivial sandboxed run's cost: ``make bench-sandbox``.

Times ``sandbox_run("pass")`` (the whole supervisor: set-up, the sandbox, the interpreter's
start, clean-up) against the same interpreter started bare (``python3 -I -S -B -c pass``,
no sandbox), in alternation so that machine noise hits both; the overhead is the difference
of the medians. Also times 20 trivial runs started at once (the worker's concurrency case).
Prints a table and rewrites the "Sandbox" section of ``docs/BENCHMARKS.md`` unless
``--no-doc``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _doc import doc_update, machine  # noqa: E402

from runtime.code_executors import SandboxLimits, sandbox_check, sandbox_run  # noqa: E402

BARE = ["/usr/bin/python3", "-I", "-S", "-B", "-c", "pass"]


async def one_sandboxed() -> float:
    started = time.perf_counter()
    done = await sandbox_run("pass", SandboxLimits())
    elapsed = (time.perf_counter() - started) * 1000
    if done.exit_code != 0:
        raise SystemExit(f"a trivial run failed: {done}")
    return elapsed


def one_bare() -> float:
    started = time.perf_counter()
    subprocess.run(BARE, check=True)
    return (time.perf_counter() - started) * 1000


async def at_once(count: int) -> float:
    started = time.perf_counter()
    done = await asyncio.gather(*(sandbox_run("pass") for _ in range(count)))
    if any(outcome.exit_code != 0 for outcome in done):
        raise SystemExit("a run of the concurrent batch failed")
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    version = sandbox_check()
    sandboxed: list[float] = []
    bare: list[float] = []
    asyncio.run(one_sandboxed())  # warm-up: the probe, the filter, the first slot
    one_bare()
    for _ in range(args.runs):
        sandboxed.append(asyncio.run(one_sandboxed()))
        bare.append(one_bare())
    batches = [asyncio.run(at_once(20)) for _ in range(5)]
    med_sandboxed, med_bare = statistics.median(sandboxed), statistics.median(bare)
    overhead = med_sandboxed - med_bare
    batch = statistics.median(batches)
    info = machine()
    day = datetime.now(UTC).date().isoformat()
    print(f"sandbox: {version}")
    print(f"trivial run, sandboxed: median {med_sandboxed:.1f} ms (min {min(sandboxed):.1f})")
    print(f"trivial run, bare interpreter: median {med_bare:.1f} ms")
    print(f"overhead: {overhead:.1f} ms; 20 at once: {batch:.0f} ms")
    if args.no_doc:
        return
    where = f"{info['arch']}, {info['cpus']} CPUs ({info['cpu']}), Python {info['python']}"
    latest = (
        f"{day}, {where}, {version}; medians of {args.runs} runs.\n\n"
        "| | median ms |\n| --- | ---: |\n"
        f'| `sandbox_run("pass")` | {med_sandboxed:.1f} |\n'
        f"| bare `python3 -I -S -B -c pass` | {med_bare:.1f} |\n"
        f"| **overhead** (goal ≤ 150) | **{overhead:.1f}** |\n"
        f"| 20 runs started at once, all done | {batch:.0f} |"
    )
    doc_update(
        name="sandbox",
        heading="## Sandbox",
        latest=latest,
        history_header="| date | machine | sandboxed ms | bare ms | overhead ms | 20 at once ms |\n"
        "| --- | --- | ---: | ---: | ---: | ---: |",
        history_row=f"| {day} | {info['arch']}, {info['cpus']} CPUs | {med_sandboxed:.1f} | "
        f"{med_bare:.1f} | {overhead:.1f} | {batch:.0f} |",
    )


if __name__ == "__main__":
    main()
