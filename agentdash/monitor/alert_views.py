"""The Alerts page (``/monitor/alerts/``, operators): what fires now, every rule with its state,
the events with their deliveries; rules added, changed, turned off and deleted there (and in
the admin), each audited. ``/monitor/alerts.json``: the same for scripts."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agentdash.core.admin_base import value_fits
from agentdash.core.conf import agentdash_setting
from agentdash.core.permissions import OperatorRequired, PermissionRequired, is_operator
from agentdash.monitor.alert_metrics import METRICS
from agentdash.monitor.alerts import rule_check, rule_snapshot
from agentdash.monitor.forms import AlertRuleForm
from agentdash.monitor.models import AlertEvent, AlertRule
from agentdash.monitor.services import delivery_retry, rule_delete, rule_save

EVENTS_SHOWN = 50
CHANGE = "monitor.change_alertrule"


def _operator(request: HttpRequest) -> None:
    if not is_operator(request.user):
        raise OperatorRequired("only operators see and define alert rules")


def _may_change(request: HttpRequest) -> None:
    _operator(request)
    if not request.user.has_perm(CHANGE):
        raise PermissionRequired(CHANGE, "changing alert rules needs this permission")


def _rule(rule_id: str) -> AlertRule | None:
    if not value_fits(AlertRule._meta.pk, rule_id):
        return None
    return AlertRule.objects.filter(pk=rule_id).first()


def _rule_to_change(request: HttpRequest, rule_id: str) -> AlertRule:
    """The rule a POST names, for someone who may change rules (403), if it exists (404).
    An id that cannot be one names nothing, whoever asks (404 first)."""
    if not value_fits(AlertRule._meta.pk, rule_id):
        raise Http404("no such alert rule")
    _may_change(request)
    rule = _rule(rule_id)
    if rule is None:
        raise Http404("no such alert rule")
    return rule


def condition_text(rule: AlertRule) -> str:
    """ "error rate of the runs that ended above 10 % over 300 s, for 60 s" in words."""
    metric = METRICS.get(rule.metric)
    label, unit = (metric.label, metric.unit) if metric else (rule.metric, "")
    text = f"{label} {rule.comparison} {rule.threshold:g} {unit}"
    if metric is None or metric.read is not None:
        text += f" over the last {_duration(rule.window_s)}"
    if rule.for_s:
        text += f", for {_duration(rule.for_s)}"
    return text


def _duration(seconds: int) -> str:
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def _rows() -> list[dict[str, Any]]:
    last: dict[int, AlertEvent] = {}
    for event in AlertEvent.objects.filter(rule__isnull=False).order_by("rule_id", "-at", "-id"):
        last.setdefault(event.rule_id or 0, event)
    return [
        {"rule": r, "condition": condition_text(r), "last": last.get(r.pk),
         "value": _value_text(r)}
        for r in AlertRule.objects.all()
    ]  # fmt: skip


def _value_text(rule: AlertRule) -> str:
    if rule.value is None:
        return "—"
    metric = METRICS.get(rule.metric)
    unit = metric.unit if metric else ""
    return f"${rule.value:,.4g}" if unit == "$" else f"{rule.value:,.4g} {unit}".strip()


def _page(request: HttpRequest, form: AlertRuleForm, status: int = 200,
          editing: AlertRule | None = None) -> HttpResponse:  # fmt: skip
    context = {
        "rows": _rows(),
        "events": AlertEvent.objects.all()[:EVENTS_SHOWN],
        "form": form,
        "editing": editing,
        "may_change": request.user.has_perm(CHANGE),
        "check_s": agentdash_setting("ALERT_CHECK_S"),
        "is_operator": True,
    }
    return render(request, "monitor/alerts.html", context, status=status)


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def alerts_page(request: HttpRequest) -> HttpResponse:
    """GET: the page (``?edit=<id>``: with that rule in the form). POST: a new rule."""
    _operator(request)
    if request.method == "POST":
        _may_change(request)
        form = AlertRuleForm(request.POST)
        if not form.is_valid():
            return _page(request, form, status=400)
        rule_save(rule=form.instance, actor=request.user)
        return redirect(reverse("monitor_alerts") + f"#rule-{form.instance.pk}")
    editing = _rule(request.GET.get("edit", "")) if "edit" in request.GET else None
    return _page(request, AlertRuleForm(instance=editing), editing=editing)


@login_required
@require_POST
def alert_rule_change(request: HttpRequest, rule_id: str) -> HttpResponse:
    rule = _rule_to_change(request, rule_id)
    before = rule_snapshot(rule)
    form = AlertRuleForm(request.POST, instance=rule)
    if not form.is_valid():
        return _page(request, form, status=400, editing=rule)
    rule_save(rule=form.instance, actor=request.user, before=before)
    return redirect(reverse("monitor_alerts") + f"#rule-{rule.pk}")


@login_required
@require_POST
def alert_rule_delete(request: HttpRequest, rule_id: str) -> HttpResponse:
    rule = _rule_to_change(request, rule_id)
    rule_delete(rule=rule, actor=request.user)
    return redirect("monitor_alerts")


@login_required
@require_POST
def alert_rule_check(request: HttpRequest, rule_id: str) -> HttpResponse:
    """Check one rule now (what its metric reads; it may fire or resolve)."""
    rule = _rule_to_change(request, rule_id)
    rule_check(rule, now=timezone.now())
    return redirect(reverse("monitor_alerts") + f"#rule-{rule.pk}")


@login_required
@require_POST
def alert_delivery_retry(request: HttpRequest, event_id: str) -> HttpResponse:
    """Send a failed delivery again, with its attempts from the start."""
    if not value_fits(AlertEvent._meta.pk, event_id):
        raise Http404("no such alert event")  # names nothing, whoever asks
    _may_change(request)
    event = AlertEvent.objects.filter(pk=event_id).first()
    if event is None:
        return HttpResponse("No such alert event.", status=404, content_type="text/plain")
    if not delivery_retry(event=event, actor=request.user):
        return HttpResponse("Only a failed delivery is retried.", status=409,
                            content_type="text/plain")  # fmt: skip
    return redirect(reverse("monitor_alerts") + "#events")


def event_json(event: AlertEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "event_id": str(event.event_id),
        "rule_id": event.rule_id,
        "rule_name": event.rule_name,
        "kind": event.kind,
        "at": event.at.isoformat(),
        "value": event.value,
        "delivery": event.delivery,
        "attempts": event.attempts,
        "next_attempt_at": event.next_attempt_at.isoformat() if event.next_attempt_at else None,
        "delivered_at": event.delivered_at.isoformat() if event.delivered_at else None,
        "last_error": event.last_error,
    }


@login_required
@require_GET
@never_cache
def alerts_json(request: HttpRequest) -> JsonResponse:
    _operator(request)
    rules = []
    for row in _rows():
        rule: AlertRule = row["rule"]
        rules.append({
            **rule_snapshot(rule),
            "condition": row["condition"],
            "state": rule.state,
            "state_since": rule.state_since.isoformat() if rule.state_since else None,
            "value": rule.value,
            "checked_at": rule.checked_at.isoformat() if rule.checked_at else None,
            "check_error": rule.check_error,
            "last_event": event_json(row["last"]) if row["last"] else None,
        })  # fmt: skip
    events = [event_json(e) for e in AlertEvent.objects.all()[:EVENTS_SHOWN]]
    return JsonResponse({"rules": rules, "events": events})
