"""Each process's health record: a row of ``ProcessHealth`` per process that starts a run
host (daphne, Celery workers), written by the process itself every ``HEALTH_INTERVAL_S``
and as soon as one of its services stops or starts again.

The database is where every process can read every other's state, so ``manage.py health``
and ``/health/`` (:mod:`agentdash.runs.health_checks`) read it there. A process whose row
has not been written for ``STALE_BEATS`` of its intervals is *gone* (killed, frozen, cut off
from the database); one stopped cleanly says so (``stopped_at``); rows not written for
``PRUNE_AFTER_S`` are deleted by the writers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from agentdash.core.conf import agentdash_setting
from agentdash.core.threads import in_worker_thread
from agentdash.runs.models import ProcessHealth
from agentdash.runs.supervisor import RUNNING, STOPPED

if TYPE_CHECKING:
    from agentdash.runs.host import RunHost

logger = logging.getLogger(__name__)

STALE_BEATS = 3
PRUNE_AFTER_S = 3600.0
STOP_TIMEOUT_S = 5.0

PROCESS_STARTED = timezone.now()
"""When this process imported the runs app: close enough to when it started."""

# A thread of its own: the record must not queue behind agents' tools and database work on
# the loop's default pool, or a busy process would look gone.
_writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdash-health")


def process_health_write(
    *,
    name: str,
    runs_agents: bool,
    services: Mapping[str, Mapping[str, Any]],
    beat_every_s: float,
    started_at: datetime = PROCESS_STARTED,
) -> None:
    """Record process ``name`` as alive now with ``services`` (name → state, restarts,
    last_error, since), and delete the rows of processes gone for ``PRUNE_AFTER_S``."""
    now = timezone.now()
    ProcessHealth.objects.update_or_create(
        name=name[:128],
        defaults={
            "runs_agents": runs_agents,
            "started_at": started_at,
            "beat_at": now,
            "beat_every_s": beat_every_s,
            "stopped_at": None,
            "services": dict(services),
        },
    )
    ProcessHealth.objects.filter(beat_at__lt=now - timedelta(seconds=PRUNE_AFTER_S)).delete()


def process_health_stop(*, name: str) -> None:
    """Record that process ``name`` stopped cleanly (its services too)."""
    now = timezone.now()
    found = ProcessHealth.objects.filter(name=name[:128]).first()
    if found is None:
        return
    services = {k: {**v, "state": STOPPED} for k, v in found.services.items()}
    ProcessHealth.objects.filter(pk=found.pk).update(stopped_at=now, beat_at=now, services=services)


@dataclass(frozen=True)
class ProcessState:
    """One process as its row shows it, ``beat_age_s`` after it last wrote it: ``live``
    unless it stopped or has not written for ``stale_after_s`` (``STALE_BEATS`` of its
    intervals); ``down`` names its services that are not running."""

    name: str
    runs_agents: bool
    started_at: datetime
    beat_at: datetime
    beat_age_s: float
    stale_after_s: float
    stopped_at: datetime | None
    services: dict[str, dict[str, Any]]

    @property
    def live(self) -> bool:
        return self.stopped_at is None and self.beat_age_s <= self.stale_after_s

    @property
    def down(self) -> list[str]:
        return sorted(n for n, s in self.services.items() if s.get("state") != RUNNING)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "runs_agents": self.runs_agents,
            "live": self.live,
            "started_at": self.started_at.isoformat(),
            "beat_at": self.beat_at.isoformat(),
            "beat_age_s": round(self.beat_age_s, 1),
            "stopped_at": self.stopped_at.isoformat() if self.stopped_at else None,
            "services": self.services,
        }


def processes_health(*, now: datetime | None = None) -> list[ProcessState]:
    """Every recorded process, by name."""
    now = now or timezone.now()
    return [
        ProcessState(
            name=row.name,
            runs_agents=row.runs_agents,
            started_at=row.started_at,
            beat_at=row.beat_at,
            beat_age_s=max(0.0, (now - row.beat_at).total_seconds()),
            stale_after_s=STALE_BEATS * row.beat_every_s,
            stopped_at=row.stopped_at,
            services=row.services,
        )
        for row in ProcessHealth.objects.order_by("name")
    ]


async def health_record_forever(host: RunHost) -> None:
    """Write this process's row now, then every ``HEALTH_INTERVAL_S`` and whenever one of
    the host's services changes state, until cancelled (then the row says it stopped). The
    runs app registers it as a service of every run host; a failed write stops it (and the
    supervisor starts it again)."""
    write = in_worker_thread(process_health_write, executor=_writer)
    try:
        while True:
            every = float(agentdash_setting("HEALTH_INTERVAL_S"))
            states = host.service_states()
            await write(
                name=host.worker_name,
                runs_agents=host.runs_agents,
                services={name: state.as_dict() for name, state in states.items()},
                beat_every_s=every,
            )
            await host.service_changed(every)
    except asyncio.CancelledError:
        stop = in_worker_thread(process_health_stop, executor=_writer)
        try:
            async with asyncio.timeout(STOP_TIMEOUT_S):
                await stop(name=host.worker_name)
        except Exception:
            logger.warning("could not record that this process stopped", exc_info=True)
        raise
