"""What ``/metrics`` reads from the database when it is scraped: the state every process of
the service shares — runs by status and agent, how many wait in the queue, for a person, or
for a remote app's answer, how many remote processes are connected — counted now, so every
daphne process answers the same. The database unreachable, ``agentdash_database_up`` is 0
and these are left out (the process's own metrics still answer)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from agentdash.core.outages import caused_by_outage
from agentdash.remote.selectors import remote_counts
from agentdash.runs.selectors import runs_by_status_and_agent

logger = logging.getLogger(__name__)


class DatabaseCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "agentdash_database_up", "Whether the database answered this scrape (1) or not (0)."
        )
        try:
            runs = runs_by_status_and_agent()
            connected, paused = remote_counts()
        except Exception as exc:
            if not caused_by_outage(exc):
                raise
            logger.warning("/metrics: the database is unreachable: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        by_status = GaugeMetricFamily(
            "agentdash_runs",
            "Runs stored, by status (queued, running, waiting, succeeded, failed, cancelled) "
            "and agent.",
            labels=["status", "agent"],
        )
        for status, agent, count in runs:
            by_status.add_metric([status, agent], count)
        yield by_status
        totals: dict[str, int] = {}
        for status, _, count in runs:
            totals[status] = totals.get(status, 0) + count
        yield GaugeMetricFamily(
            "agentdash_run_queue_depth",
            "Runs queued and not started yet (every agent).",
            value=totals.get("queued", 0),
        )
        yield GaugeMetricFamily(
            "agentdash_runs_waiting_for_approval",
            "Runs paused for a person (a tool confirmation or a breakpoint).",
            value=totals.get("waiting", 0),
        )
        yield GaugeMetricFamily(
            "agentdash_remote_pauses_waiting",
            "Steps of agents elsewhere paused for a person's answer.",
            value=paused,
        )
        yield GaugeMetricFamily(
            "agentdash_remote_processes_connected",
            "Processes of agents elsewhere heard from within the last 30 s.",
            value=connected,
        )
