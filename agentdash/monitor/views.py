"""``GET /monitor/``: the Monitor page — the agents' numbers over a range as charts (drawn in
the browser from the page's own data, ``static/monitor/js/monitor.js``) with the same
numbers in tables beside them; the form's problems said next to it (400).

``GET /monitor/stats.json``: the agents' numbers over a time range (``stats``), for a
signed-in person (operators: every session; others: their own), 400 with each field's
problem for a range or filter that cannot be.

``GET /metrics``: the service's metrics in Prometheus' text format (docs/MONITOR.md) — what
each process counted (``agentdash.core.metrics``; summed over a host's processes in
multiprocess mode) and what the database says now (``collectors.DatabaseCollector``).

Read by a scraper that shows ``AGENTDASH_METRICS_TOKEN`` (``Authorization: Bearer …``), or
from an address of ``AGENTDASH_METRICS_ALLOW`` (loopback by default); anyone else gets 403 (401
for a wrong token). No login, no session: a scraper has neither.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Iterator
from functools import cache

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from agentdash.core.conf import agentdash_setting
from agentdash.core.middleware import takes_no_form
from agentdash.core.permissions import is_operator
from agentdash.monitor.collectors import DatabaseCollector
from agentdash.monitor.stats import FILTERS, RANGES, SOURCES, stats, stats_query
from agentdash.runs.selectors import RUN_STATUSES

MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"


class _ProcessCollector(Collector):
    """This process's metrics: the default registry's (ours, and the client's process,
    platform and garbage-collector metrics)."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


@cache
def _registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get(MULTIPROCESS):
        multiprocess.MultiProcessCollector(registry)  # every process of the host, summed
    else:
        registry.register(_ProcessCollector())
    registry.register(DatabaseCollector())
    return registry


def _networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    found = []
    for part in str(agentdash_setting("METRICS_ALLOW")).split(","):
        if part.strip():
            found.append(ipaddress.ip_network(part.strip(), strict=False))
    return found


def _refused(request: HttpRequest) -> HttpResponse | None:
    token = str(agentdash_setting("METRICS_TOKEN"))
    scheme, _, given = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and given.strip():
        if token and hmac.compare_digest(given.strip().encode(), token.encode()):
            return None
        return _text(401, "the token is not this server's metrics token")
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        address = None
    if address is not None and any(address in net for net in _networks()):
        return None
    return _text(
        403,
        "metrics are read from an address of AGENTDASH_METRICS_ALLOW, or with the token of "
        "AGENTDASH_METRICS_TOKEN (Authorization: Bearer ...)",
    )


def _text(status: int, message: str) -> HttpResponse:
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


@takes_no_form
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        response = _text(405, "read metrics with GET")
        response["Allow"] = "GET, HEAD"
        return response
    refused = _refused(request)
    if refused is not None:
        return refused
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


@login_required
@require_GET
@never_cache
def stats_json(request: HttpRequest) -> JsonResponse:
    try:
        query = stats_query(request.GET.dict())
    except ValidationError as exc:
        problems = {field: " ".join(messages) for field, messages in exc.message_dict.items()}
        return JsonResponse({"error": {"fields": problems}}, status=400)
    return JsonResponse(stats(query, viewer=request.user))


@login_required
@require_GET
@never_cache
def monitor_page(request: HttpRequest) -> HttpResponse:
    params = {k: v for k, v in request.GET.dict().items() if v.strip()}
    problems: dict[str, str] = {}
    try:
        query = stats_query(params)
    except ValidationError as exc:
        problems = {field: " ".join(messages) for field, messages in exc.message_dict.items()}
        query = stats_query({})  # the last day, unfiltered, under the problems
    found = stats(query, viewer=request.user)
    custom = "from" in params or "to" in params
    context = {
        "stats": found,
        "params": params,
        "problems": problems,
        "ranges": list(RANGES),
        "range": "custom" if custom else params.get("range", "24h"),
        # The range as the form's local-time inputs show it: in the reader's zone (tz).
        "custom_from": query.start.strftime("%Y-%m-%dT%H:%M") if custom and not problems else "",
        "custom_to": query.end.strftime("%Y-%m-%dT%H:%M") if custom and not problems else "",
        "filters": FILTERS,
        "sources": SOURCES,
        "statuses": RUN_STATUSES,
        "is_operator": is_operator(request.user),
    }
    return render(request, "monitor/monitor.html", context, status=400 if problems else 200)
