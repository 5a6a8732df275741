"""Is the site healthy? The database and the channel layer, checked from here, and every
process's services as their health records say (:mod:`agentdash.runs.health`).

:func:`health_report` gathers it for ``manage.py health`` and the ``/health/`` endpoint.
A load balancer needs to know whether *this* process can serve: ``serving`` (the database
and the channel layer answer). An operator wants everything: ``problems`` also lists a
live process with a service that is not running and, with the celery executor, the absence
of any live worker (runs would be accepted and never run).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from channels.layers import get_channel_layer
from django.db import connection

from agentdash.core.conf import agentdash_setting
from agentdash.core.threads import in_worker_thread
from agentdash.runs.health import ProcessState, processes_health

CHECK_TIMEOUT_S = 5.0
OK = "ok"
HEALTH_GROUP = "agentdash.health"


def _database_ping() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


async def database_check(*, timeout: float = CHECK_TIMEOUT_S) -> str:
    """``"ok"``, or why the database cannot be reached (within ``timeout``)."""
    try:
        async with asyncio.timeout(timeout):
            await in_worker_thread(_database_ping)()
    except TimeoutError:
        return f"no answer in {timeout:g} s"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return OK


async def channel_layer_check(*, timeout: float = CHECK_TIMEOUT_S) -> str:
    """``"ok"``, or why a message cannot be published on the channel layer (a group send
    to a group nobody joins: with Redis, a PUBLISH)."""
    layer = get_channel_layer()
    if layer is None:
        return "no channel layer is configured"
    try:
        async with asyncio.timeout(timeout):
            await layer.group_send(HEALTH_GROUP, {"type": "health.check"})
    except TimeoutError:
        return f"no answer in {timeout:g} s"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return OK


@dataclass
class HealthReport:
    """The checks' results (``"ok"`` or an error) and every recorded process."""

    database: str
    channel_layer: str
    executor: str
    processes: list[ProcessState] = field(default_factory=list)
    processes_error: str = ""

    @property
    def serving(self) -> bool:
        """This process can serve pages: the database answers. (Without the channel layer
        pages still work — only live updates pause — so taking every process out of a load
        balancer for it would make things worse: that is ``degraded``.)"""
        return self.database == OK

    @property
    def status(self) -> str:
        """``ok``; ``degraded`` (the channel layer is away: pages serve, live updates
        pause); ``unavailable`` (the database is away)."""
        if not self.serving:
            return "unavailable"
        return OK if self.channel_layer == OK else "degraded"

    @property
    def problems(self) -> list[str]:
        """Everything an operator should look at; empty when all is well."""
        found = []
        if self.database != OK:
            found.append(f"database: {self.database}")
        if self.channel_layer != OK:
            found.append(f"channel layer: {self.channel_layer}")
        if self.processes_error:
            found.append(f"process records: {self.processes_error}")
        live = [p for p in self.processes if p.live]
        for process in live:
            for name in process.down:
                state = process.services[name]
                found.append(
                    f"{process.name}: {name} is {state.get('state')} "
                    f"({state.get('last_error') or 'no error recorded'})"
                )
        workers = any(p.runs_agents for p in live)
        if self.executor == "celery" and not self.processes_error and not workers:
            found.append("no live worker executes runs (start a Celery worker)")
        return found

    def as_dict(self, *, details: bool) -> dict[str, Any]:
        """The JSON form; without ``details`` only the status and the checks' outcomes
        (no error texts, no process names: enough for a load balancer)."""
        status = self.status
        if not details:
            return {
                "status": status,
                "checks": {
                    "database": "ok" if self.database == OK else "failed",
                    "channel_layer": "ok" if self.channel_layer == OK else "failed",
                },
            }
        return {
            "status": status,
            "checks": {"database": self.database, "channel_layer": self.channel_layer},
            "executor": self.executor,
            "problems": self.problems,
            "processes": [p.as_dict() for p in self.processes],
        }


async def health_report(
    *, processes: bool = True, timeout: float = CHECK_TIMEOUT_S
) -> HealthReport:
    """Check the database and the channel layer (at once, each within ``timeout``) and, if
    ``processes``, read every process's record."""
    database, layer = await asyncio.gather(
        database_check(timeout=timeout), channel_layer_check(timeout=timeout)
    )
    report = HealthReport(
        database=database, channel_layer=layer, executor=str(agentdash_setting("EXECUTOR"))
    )
    if processes and database == OK:
        try:
            report.processes = await in_worker_thread(processes_health)()
        except Exception as exc:
            report.processes_error = f"{type(exc).__name__}: {exc}"
    elif processes:
        report.processes_error = "the database cannot be reached"
    return report
