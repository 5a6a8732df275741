"""Per-invocation cost, our runtime vs google-adk, side by side: ``make bench``.

Ensures google-adk has its own virtualenv (``bench/.venv-adk``: it is never a dependency of
the project), starts five long-lived workers — ADK and ours, each without and with an
OpenTelemetry SDK, and ours on the whole path of the embedded default (``workload_full.py``:
traced, stored and streamed) —, lets each warm up, then asks them for rounds of timed
invocations in alternation, so that machine noise hits every side. Prints a table and
rewrites the results section of ``docs/BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _doc import DOC, doc_update, machine

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
ADK_VENV = BENCH / ".venv-adk"
ADK_PYTHON = ADK_VENV / "bin" / "python"
ADK_VERSION = "2.13.0"
# What bench/.venv-adk holds: google-adk with no extras (the benchmark's side), plus the
# official OTLP/HTTP exporter for tests/agentdash/ingest/adk_agent.py (the OTLP ingest's
# interop test; the benchmark never imports it). The exporter's version is the one of the
# opentelemetry-sdk that google-adk pins (<=1.44): they are released in lockstep.
ADK_REQUIREMENTS = (f"google-adk=={ADK_VERSION}", "opentelemetry-exporter-otlp-proto-http==1.44.0")
GOALS = {False: 0.2, True: 0.3}  # ours/ADK median, from the issue
FULL_GOAL = 1.0  # the whole path (traced, stored, streamed) / ADK's untraced in-memory run
VARIANTS = {False: "plain", True: "OTel SDK + live span processor"}


def _adk_cache() -> Path:
    """Where the ADK venv is made once per machine, for every work tree and clone: the user's
    cache, named by what it holds and the Python it is made from (its base installation, not
    a work tree's venv: another set of requirements or another Python is another venv)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(f"{sys.version}|{sys.base_prefix}|{ADK_REQUIREMENTS}".encode()).hexdigest()
    return base / "agentdash" / f"venv-adk-{key[:16]}"


def ensure_adk_venv() -> None:
    """Make bench/.venv-adk hold ADK_REQUIREMENTS. A work tree without one links it to the
    machine's cached venv (made there, once, when missing or left half-made), so a fresh
    clone — CI's — does not install google-adk again; a venv of its own is kept and checked:
    with the right google-adk but not the rest it only gets the rest installed."""
    if not ADK_VENV.exists() and not ADK_VENV.is_symlink():
        cache = _adk_cache()
        done = cache / ".agentdash-complete"
        if not done.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            print(f"creating {cache} with {' '.join(ADK_REQUIREMENTS)}", flush=True)
            subprocess.run([sys.executable, "-m", "venv", "--clear", cache], check=True)
            subprocess.run([*_installer(cache / "bin" / "python"), *ADK_REQUIREMENTS], check=True)
            done.touch()
        ADK_VENV.symlink_to(cache, target_is_directory=True)
        return
    names = [requirement.split("==")[0] for requirement in ADK_REQUIREMENTS]
    probe = f"import importlib.metadata as m; print(*(n + '==' + m.version(n) for n in {names}))"
    adk_found = False
    if ADK_PYTHON.exists():
        found = subprocess.run([ADK_PYTHON, "-c", probe], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.split() == list(ADK_REQUIREMENTS):
            return
        adk_probe = "import importlib.metadata as m; print(m.version('google-adk'))"
        found = subprocess.run([ADK_PYTHON, "-c", adk_probe], capture_output=True, text=True)
        adk_found = found.returncode == 0 and found.stdout.strip() == ADK_VERSION
    if not adk_found:
        print(
            f"creating {ADK_VENV.relative_to(ROOT)} with {' '.join(ADK_REQUIREMENTS)}", flush=True
        )
        # the project's own interpreter, so both sides run on the same Python
        subprocess.run([sys.executable, "-m", "venv", "--clear", ADK_VENV.resolve()], check=True)
    subprocess.run([*_installer(ADK_PYTHON), *ADK_REQUIREMENTS], check=True)


def _installer(python: Path) -> list[Any]:
    """The command that installs packages into ``python``'s venv: uv (the project's dev
    tools; ~8 s for google-adk against pip's ~45 s), else that venv's own pip."""
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv", "pip", "install", "--quiet", "--python", python]
    return [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]


@dataclass
class Worker:
    """One long-lived workload process; start-up and warm-up happen before any timing."""

    side: str
    otel: bool
    proc: subprocess.Popen[str]
    versions: dict[str, str] = field(default_factory=dict)
    ns: list[int] = field(default_factory=list)
    round_medians: list[float] = field(default_factory=list)
    spans: float = 0.0
    events: int = 0

    @classmethod
    def start(cls, side: str, otel: bool) -> Worker:
        python = ADK_PYTHON if side == "adk" else Path(sys.executable)  # ours, full: ours
        argv = [str(python), str(BENCH / f"workload_{side}.py"), *(["--otel"] if otel else [])]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        return cls(side, otel, proc)

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise SystemExit(f"the {self.label} worker exited ({code}); its traceback is above")
        data: dict[str, Any] = json.loads(line)
        return data

    def wait_ready(self) -> None:
        self.versions = self.read()["versions"]

    def run_round(self, n: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"n": n}) + "\n")
        self.proc.stdin.flush()
        result = self.read()
        self.ns.extend(result["ns"])
        self.round_medians.append(statistics.median(result["ns"]))
        self.spans, self.events = result["spans"], result["events"]

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

    @property
    def label(self) -> str:
        return f"{self.side}{' +otel' if self.otel else ''}"

    def median_ms(self) -> float:
        return statistics.median(self.ns) / 1e6

    def quantile_ms(self, q: int) -> float:
        return statistics.quantiles(self.ns, n=100)[q - 1] / 1e6


def results_markdown(workers: dict[tuple[str, bool], Worker], rounds: int, n: int) -> str:
    adk, ours = workers["adk", False], workers["ours", False]
    m = machine()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Run {date} on {m['arch']}, {m['cpus']} CPUs ({m['cpu']}), Python {m['python']}.",
        f"ADK side: google-adk {adk.versions['google-adk']}, google-genai "
        f"{adk.versions['google-genai']}, opentelemetry-sdk {adk.versions['opentelemetry-sdk']}, "
        f"Python {adk.versions['python']}.",
        f"Our side: agentdash {ours.versions['agentdash']}, google-genai "
        f"{ours.versions['google-genai']}, opentelemetry-sdk "
        f"{ours.versions['opentelemetry-sdk']}, Python {ours.versions['python']}.",
        f"{rounds} rounds x {n} invocations per worker = {rounds * n} samples each, after warm-up.",
        "",
        "| variant | ADK median | ours median | ours / ADK | goal |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for otel in (False, True):
        a, o = workers["adk", otel], workers["ours", otel]
        ratio = o.median_ms() / a.median_ms()
        met = "met" if ratio <= GOALS[otel] else "not met"
        lines.append(
            f"| {VARIANTS[otel]} | {a.median_ms():.3f} ms | {o.median_ms():.3f} ms | "
            f"{ratio:.4f} | ≤ {GOALS[otel]} ({met}) |"
        )
    full = workers.get(("full", False))
    if full is not None:
        ratio = full.median_ms() / adk.median_ms()
        met = "met" if ratio <= FULL_GOAL else "not met"
        lines.append(
            f"| traced + stored + streamed (embedded default) vs ADK plain | "
            f"{adk.median_ms():.3f} ms | {full.median_ms():.3f} ms | {ratio:.4f} | "
            f"≤ {FULL_GOAL} ({met}) |"
        )
    lines += [
        "",
        "| worker | median | p10 | p90 | round medians (min–max) | samples | events/inv | "
        "spans/inv |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for w in workers.values():
        lo, hi = min(w.round_medians) / 1e6, max(w.round_medians) / 1e6
        lines.append(
            f"| {w.label} | {w.median_ms():.3f} ms | {w.quantile_ms(10):.3f} | "
            f"{w.quantile_ms(90):.3f} | {lo:.3f}–{hi:.3f} | {len(w.ns)} | {w.events} | "
            f"{w.spans:g} |"
        )
    return "\n".join(lines)


def history_row(workers: dict[tuple[str, bool], Worker]) -> str:
    m = machine()
    cells = [datetime.now(UTC).strftime("%Y-%m-%d"), f"{m['arch']}/{m['cpus']} CPUs"]
    for otel in (False, True):
        a, o = workers["adk", otel], workers["ours", otel]
        cells += [
            f"{a.median_ms():.3f}",
            f"{o.median_ms():.3f}",
            f"{o.median_ms() / a.median_ms():.4f}",
        ]
    full = workers.get(("full", False))
    adk = workers["adk", False]
    if full is None:
        cells += ["—", "—"]
    else:
        cells += [f"{full.median_ms():.3f}", f"{full.median_ms() / adk.median_ms():.2f}"]
    return "| " + " | ".join(cells) + " |"


def update_doc(latest: str, row: str) -> None:
    doc_update(
        name="bench",
        heading="## Per-invocation cost",
        latest=latest,
        history_header=(
            "| date | machine | ADK ms | ours ms | ratio | ADK+OTel ms | ours+OTel ms | ratio | "
            "whole path ms | vs ADK |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        ),
        history_row=row,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--invocations", type=int, default=50, help="per round and worker")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    parser.add_argument("--no-full", action="store_true", help="without the whole-path worker")
    args = parser.parse_args()

    ensure_adk_venv()
    workers = {(s, o): Worker.start(s, o) for o in (False, True) for s in ("adk", "ours")}
    if not args.no_full:
        workers["full", False] = Worker.start("full", False)
    try:
        for w in workers.values():
            w.wait_ready()
        for r in range(args.rounds):
            sides = ("adk", "ours") if r % 2 == 0 else ("ours", "adk")  # A B, then B A
            for otel in (False, True):
                for side in sides:
                    workers[side, otel].run_round(args.invocations)
            if ("full", False) in workers:
                workers["full", False].run_round(args.invocations)
            if sys.stderr.isatty():
                print(f"\rround {r + 1}/{args.rounds}", end="", file=sys.stderr, flush=True)
        if sys.stderr.isatty():
            print(file=sys.stderr)
    finally:
        for w in workers.values():
            if w.proc.poll() is None:
                w.stop()

    latest = results_markdown(workers, args.rounds, args.invocations)
    print(latest)
    if not args.no_doc:
        update_doc(latest, history_row(workers))
        print(f"\nupdated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
