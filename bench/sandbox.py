"""A trivial sandboxed run's cost: ``make bench-sandbox``.

Times ``sandbox_run("pass")`` (the whole supervisor: slot, cgroup, file systems, the gated
sandbox, the interpreter's start, the clean-up) against the same interpreter started bare
(``python3 -I -S -B -c pass``, no sandbox) and, as the peer, gVisor's ``runsc do`` of it
(Debian's runsc, ptrace platform, no network: a user-space kernel, the heavier isolation),
in alternation so that machine noise hits all three; the overhead is the difference of the
medians with the bare run. Also times 20 trivial runs started at once (the worker's
concurrency case). Prints a table and rewrites the "Sandbox" section of
``docs/BENCHMARKS.md`` unless ``--no-doc``.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
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
GVISOR = ["runsc", "--platform=ptrace", "--network=none", "do", *BARE]


async def one_sandboxed() -> float:
    started = time.perf_counter()
    done = await sandbox_run("pass", SandboxLimits())
    elapsed = (time.perf_counter() - started) * 1000
    if done.exit_code != 0:
        raise SystemExit(f"a trivial run failed: {done}")
    return elapsed


def one_bare(command: list[str] = BARE) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    gvisor: list[float] = []
    peer = shutil.which("runsc") is not None
    asyncio.run(one_sandboxed())  # warm-up: the probe, the filter, the first slot
    one_bare()
    if peer:
        one_bare(GVISOR)
    for _ in range(args.runs):
        sandboxed.append(asyncio.run(one_sandboxed()))
        bare.append(one_bare())
        if peer:
            gvisor.append(one_bare(GVISOR))
    batches = [asyncio.run(at_once(20)) for _ in range(5)]
    med_sandboxed, med_bare = statistics.median(sandboxed), statistics.median(bare)
    overhead = med_sandboxed - med_bare
    batch = statistics.median(batches)
    med_gvisor = statistics.median(gvisor) if gvisor else float("nan")
    info = machine()
    day = datetime.now(UTC).date().isoformat()
    print(f"sandbox: {version}")
    print(f"trivial run, sandboxed: median {med_sandboxed:.1f} ms (min {min(sandboxed):.1f})")
    print(f"trivial run, bare interpreter: median {med_bare:.1f} ms")
    print(f"overhead: {overhead:.1f} ms; 20 at once: {batch:.0f} ms")
    print(f"gVisor runsc do (ptrace): median {med_gvisor:.1f} ms" if gvisor else "no runsc")
    if args.no_doc:
        return
    where = f"{info['arch']}, {info['cpus']} CPUs ({info['cpu']}), Python {info['python']}"
    latest = (
        f"{day}, {where}, {version}; medians of {args.runs} runs.\n\n"
        "| | median ms |\n| --- | ---: |\n"
        f'| `sandbox_run("pass")` | {med_sandboxed:.1f} |\n'
        f"| bare `python3 -I -S -B -c pass` | {med_bare:.1f} |\n"
        f"| **overhead** (goal ≤ 150) | **{overhead:.1f}** |\n"
        f"| 20 runs started at once, all done | {batch:.0f} |\n"
        f"| peer: gVisor `runsc do` of the bare run (ptrace) | {med_gvisor:.1f} |\n\n"
        f"Ours / gVisor: {med_sandboxed / med_gvisor:.2f}× the time of a trivial run."
    )
    doc_update(
        name="sandbox",
        heading="## Sandbox",
        latest=latest,
        history_header="| date | machine | sandboxed ms | bare ms | overhead ms | 20 at once ms "
        "| gVisor ms |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        history_row=f"| {day} | {info['arch']}, {info['cpus']} CPUs | {med_sandboxed:.1f} | "
        f"{med_bare:.1f} | {overhead:.1f} | {batch:.0f} | {med_gvisor:.1f} |",
    )


if __name__ == "__main__":
    main()
