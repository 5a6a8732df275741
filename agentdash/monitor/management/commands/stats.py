"""``manage.py stats``: the Monitor's numbers for scripts — every session's (as an operator sees
them), over ``--range`` (1h … 90d) or ``--from``/``--to``, narrowed by the filters; a table, or
``--json`` (the same document as ``/monitor/stats.json``)."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.monitor.stats import FILTERS, RANGES, stats, stats_query


class _Everyone:
    """Sees every session, as an operator does (the command runs on the server)."""

    is_authenticated = True
    is_active = True
    is_superuser = True
    pk = None

    def has_perm(self, perm: str) -> bool:
        return True


class Command(BaseCommand):
    help = "The agents' numbers over a time range (docs/MONITOR.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--range", choices=sorted(RANGES), help="the last 1h … 90d")
        parser.add_argument("--from", dest="from_", help="ISO 8601, with its offset")
        parser.add_argument("--to", help="ISO 8601, with its offset")
        for name in FILTERS:
            parser.add_argument(f"--{name}", default="")
        parser.add_argument("--json", action="store_true", help="the whole document as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        params = {name: options[name] for name in FILTERS if options[name]}
        if options["range"]:
            params["range"] = options["range"]
        if options["from_"] or options["to"]:
            params["from"], params["to"] = options["from_"] or "", options["to"] or ""
        try:
            query = stats_query(params)
        except ValidationError as exc:
            said = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            raise CommandError(said) from None
        found = stats(query, viewer=_Everyone())
        if options["json"]:
            self.stdout.write(json.dumps(found, indent=1))
            return
        totals = found["totals"]
        self.stdout.write(f"{found['range']['from']} → {found['range']['to']}")
        for label, key in (("runs", "runs"), ("model calls", "model_calls"),
                           ("tool calls", "tool_calls"), ("tool errors", "tool_errors"),
                           ("tokens in", "tokens_in"), ("tokens out", "tokens_out")):  # fmt: skip
            self.stdout.write(f"{label:>12}  {totals[key]}")
        self.stdout.write(f"{'error rate':>12}  {totals['error_rate']}")
        self.stdout.write(f"{'cost $':>12}  {totals['cost_usd']}")
        for label, key in (("run s", "run_seconds"), ("model s", "model_seconds"),
                           ("1st token s", "first_token_seconds"), ("tool s", "tool_seconds"),
                           ("waited s", "wait_seconds")):  # fmt: skip
            p = totals[key]
            self.stdout.write(f"{label:>12}  p50 {p['p50']}  p95 {p['p95']}  p99 {p['p99']}")
        answers = ", ".join(f"{n} {a}" for a, n in totals["confirmations"].items()) or "none"
        self.stdout.write(f"{'confirmed':>12}  {answers}")
        for tool in found["tools"]:
            self.stdout.write(f"{'tool':>12}  {tool['name']}: {tool['calls']} calls, "
                              f"{tool['errors']} errors")  # fmt: skip
