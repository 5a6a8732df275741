"""What both benchmarks share: the machine they ran on, and their sections of
docs/BENCHMARKS.md (a block of latest results between two markers, and a history table whose
last line is a marker; missing ones are added at the end)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "BENCHMARKS.md"


def machine() -> dict[str, str]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "arch": platform.machine(),
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "python": platform.python_version(),
    }


def doc_update(
    *, name: str, heading: str, latest: str, history_header: str, history_row: str
) -> None:
    """Put ``latest`` between ``<!-- {name}:latest:start/end -->`` and add ``history_row``
    above ``<!-- {name}:history:end -->`` (creating both under ``heading`` when missing)."""
    start, end = f"<!-- {name}:latest:start -->", f"<!-- {name}:latest:end -->"
    history_end = f"<!-- {name}:history:end -->"
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    if start not in text or end not in text:
        text += f"\n{heading}\n\n{start}\n{end}\n"
    if history_end not in text:
        text += f"\n{heading} — history\n\n{history_header}\n{history_end}\n"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    text = f"{head}{start}\n{latest}\n{end}{tail}"
    DOC.write_text(text.replace(history_end, f"{history_row}\n{history_end}"))
