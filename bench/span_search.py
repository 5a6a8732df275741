"""The timeline's attribute search at scale, timed (docs/BENCHMARKS.md, "Finding spans").

  .venv/bin/python bench/span_search.py [--spans 50000]

A fresh SQLite file in a temporary directory (the embedded default's database), migrated and
seeded, then one session of ``--spans`` spans made through the app's services
(``bench/ui_sessions.py``: runs of ~500 spans with the attributes the runtime writes). Each
search is what ``GET /sessions/<id>/spans/search/?q=`` runs (``span_search``), one warm-up
then the median of 7:

- a value one span holds (its tool call id);
- a word hundreds of spans hold in their attributes (a country asked about);
- text no span holds, ASCII and not (the whole session is read);

Prints a Markdown table; nothing is written to the docs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from usage import fresh_site, generate, timed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=50_000)
    args = parser.parse_args()

    env = fresh_site("search")
    session_id = generate(env, args.spans)

    os.environ.update(env)
    import django

    django.setup()
    from agentdash.spans.models import Span
    from agentdash.spans.search import span_search

    tool = (
        Span.objects.filter(session_id=session_id, name__startswith="execute_tool")
        .order_by("-start_time")
        .values_list("attributes", flat=True)
        .first()
    )
    assert tool is not None
    call_id = str(tool["gen_ai.tool.call.id"])
    cases = [
        ("one span's tool call id", call_id),
        ("a country many spans were asked about", "France"),
        ("text no span holds", "no-such-text"),
        ("non-ASCII text no span holds", "Zürich"),
    ]
    print(
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}); SQLite; one session "
        f"of {args.spans:,} spans (`bench/span_search.py --spans {args.spans}`).\n"
    )
    print("| search | spans found | median |\n|---|---:|---:|")
    for label, text in cases:
        found = span_search(session_id=session_id, text=text)
        ms = timed(lambda text=text: span_search(session_id=session_id, text=text))
        more = "+" if found.truncated else ""
        print(f"| {label} (`{text}`) | {len(found.keys):,}{more} | {ms:.0f} ms |")


if __name__ == "__main__":
    main()
