"""``bench/ui.py``'s results as Markdown: the latest tables with the issue's goals, and the
history rows (docs/BENCHMARKS.md, "Session page in the browser")."""

from __future__ import annotations

import argparse
import statistics
from datetime import UTC, datetime
from typing import Any

from _doc import machine

GOALS = {  # issue 10, for 50k spans and 10k events
    "first_ms": 1_000,
    "usable_ms": 2_000,
    "scroll_task_ms": 50,
    "details_ms": 100,
    "dom": 5_000,
    "heap_mb": 100,
    "latest_ms": 300,
}


def median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [row[key] for row in rows if row.get(key) is not None]
    if len(values) < len(rows):
        return None  # not reached in every run: say so, not a median of the lucky ones
    return statistics.median_high(values) if values else None  # a measured value, never a mean


def ms(value: float | None) -> str:
    if value is None:
        return "not reached"
    return f"{value:,.0f} ms"


def task(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "—" if value == 0 else f"{value:,.0f}"


def verdict(value: float | None, goal: float) -> str:
    return "met" if value is not None and value <= goal else "**not met**"


def results_markdown(
    spans: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    events: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    args: argparse.Namespace,
) -> str:
    m = machine()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{x:.1f}" for x in args.load)
    lines = [
        f"Run {date} on {m['arch']}, {m['cpus']} CPUs ({m['cpu']}; load average before / "
        f"after: {load}), Chromium {args.chromium_version} headless at 1440×900, the embedded "
        f"default (one daphne, SQLite, DEBUG on as `make run`): `bench/ui.py --runs "
        f"{args.runs}`; medians of {args.runs} page loads, each in a fresh browser context "
        "(empty cache, fresh heap), after one untimed load. Sessions generated through the "
        "app's services (`bench/ui_sessions.py`: runs of ~500 spans — invocation → agent → "
        "model and tool calls with their callbacks, nested agent tools, some tool errors, 5% "
        "failed and 5% cancelled runs; chat turns of four events with Markdown answers).",
        "",
        "| session | page paint | first rows | usable | longest task: load / scroll / "
        "click / collapse | details | collapse | DOM elements | JS heap |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for session, rows in spans:
        tasks = " / ".join(
            task(median(rows, k))
            for k in ("load_task_ms", "scroll_task_ms", "click_task_ms", "collapse_task_ms")
        )
        usable = median(rows, "usable_ms")
        shown = "" if usable is not None else f" ({rows[-1]['shown'] or 'nothing'} shown)"
        lines.append(
            f"| {session['spans']:,} spans | {ms(median(rows, 'fcp_ms'))} | "
            f"{ms(median(rows, 'first_ms'))} | {ms(usable)}{shown} | {tasks} ms | "
            f"{ms(median(rows, 'details_ms'))} | {ms(median(rows, 'collapse_ms'))} | "
            f"{count(median(rows, 'dom'))} | {mb(median(rows, 'heap_mb'))} |"
        )
    if events:
        lines += [
            "",
            "| session | page paint | first message | latest messages | longest task: load "
            "/ scroll to the top | DOM elements | JS heap |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
    for session, rows in events:
        lines.append(
            f"| {session['events']:,} chat events | {ms(median(rows, 'fcp_ms'))} | "
            f"{ms(median(rows, 'first_ms'))} | {ms(median(rows, 'latest_ms'))} | "
            f"{task(median(rows, 'load_task_ms'))} / {task(median(rows, 'scroll_task_ms'))} ms "
            f"| {count(median(rows, 'dom'))} | {mb(median(rows, 'heap_mb'))} |"
        )
    lines += ["", *goals_markdown(spans, events)]
    return "\n".join(lines)


def count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f} MB"


def goals_markdown(
    spans: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    events: list[tuple[dict[str, Any], list[dict[str, Any]]]],
) -> list[str]:
    lines = ["| goal (issue 10) | measured | |", "| --- | ---: | --- |"]
    biggest = max(spans, key=lambda s: s[0]["spans"], default=None)
    if biggest is not None:
        session, rows = biggest
        n = f"{session['spans']:,} spans"
        checks = [
            (f"{n}: first rows ≤ 1 s", median(rows, "first_ms"), GOALS["first_ms"], ms),
            (f"{n}: usable ≤ 2 s", median(rows, "usable_ms"), GOALS["usable_ms"], ms),
            (
                f"{n}: no task > 50 ms while scrolling",
                median(rows, "scroll_task_ms"),
                GOALS["scroll_task_ms"],
                lambda v: "none over 50 ms" if v == 0 else ms(v),
            ),
            (f"{n}: details ≤ 100 ms", median(rows, "details_ms"), GOALS["details_ms"], ms),
            (
                f"{n}: DOM < 5,000 elements",
                median(rows, "dom"),
                GOALS["dom"] - 1,
                lambda v: "n/a" if v is None else f"{v:,.0f}",
            ),
            (
                f"{n}: heap < 100 MB",
                median(rows, "heap_mb"),
                GOALS["heap_mb"],
                lambda v: "n/a" if v is None else f"{v:,.1f} MB",
            ),
        ]
        for label, value, goal, show in checks:
            lines.append(f"| {label} | {show(value)} | {verdict(value, goal)} |")
    for session, rows in events:
        value = median(rows, "latest_ms")
        lines.append(
            f"| {session['events']:,} events: latest messages ≤ 300 ms | {ms(value)} | "
            f"{verdict(value, GOALS['latest_ms'])} |"
        )
    return lines


def history_rows(
    spans: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    events: list[tuple[dict[str, Any], list[dict[str, Any]]]],
) -> str:
    m = machine()
    day, box = datetime.now(UTC).strftime("%Y-%m-%d"), f"{m['arch']}/{m['cpus']} CPUs"
    rows = []
    for session, found in spans:
        rows.append(
            f"| {day} | {box} | {session['spans']:,} spans | {ms(median(found, 'first_ms'))} | "
            f"{ms(median(found, 'usable_ms'))} | {task(median(found, 'scroll_task_ms'))} | "
            f"{ms(median(found, 'details_ms'))} | {count(median(found, 'dom'))} |"
        )
    for session, found in events:
        rows.append(
            f"| {day} | {box} | {session['events']:,} events | "
            f"{ms(median(found, 'first_ms'))} | {ms(median(found, 'latest_ms'))} | "
            f"{task(median(found, 'scroll_task_ms'))} | — | {count(median(found, 'dom'))} |"
        )
    return "\n".join(rows)
