"""``manage.py health``: the database, the channel layer, and every process's background
services, one line each; exit status 1 when anything needs an operator (a check failed, a
live process has a service down, or no live worker executes runs with the celery executor).
``--json`` prints what ``/health/`` gives staff."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.runs.health import ProcessState
from agentdash.runs.health_checks import HealthReport, health_report


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _process_line(process: ProcessState) -> str:
    role = "worker" if process.runs_agents else "web"
    if process.stopped_at is not None:
        state = f"stopped at {process.stopped_at.isoformat(timespec='seconds')}"
    elif process.live:
        state = f"live (beat {process.beat_age_s:.1f} s ago)"
    else:
        state = f"gone (no beat for {process.beat_age_s:.0f} s)"
    return f"{process.name} {role} {state}"


def _service_line(process: ProcessState, name: str, service: dict[str, Any]) -> str:
    line = (
        f"{process.name}   {name} {service.get('state')} since "
        f"{_when(float(service.get('since') or 0))}, {service.get('restarts', 0)} restarts"
    )
    if service.get("last_error"):
        line += f", last stop: {service['last_error']}"
    return line


class Command(BaseCommand):
    help = "Report the health of the database, the channel layer and every process's services."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        report: HealthReport = async_to_sync(health_report)()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(details=True), indent=2))
        else:
            self.stdout.write(f"database: {report.database}")
            self.stdout.write(f"channel layer: {report.channel_layer}")
            self.stdout.write(f"executor: {report.executor}")
            for process in report.processes:
                self.stdout.write(_process_line(process))
                for name, service in sorted(process.services.items()):
                    self.stdout.write(_service_line(process, name, service))
        problems = report.problems
        for problem in problems:
            self.stderr.write(f"problem: {problem}")
        if problems:
            raise CommandError(f"{len(problems)} problem(s)", returncode=1)
