"""Admin for alert rules (saved and deleted through the services: audited, a firing rule
resolved first) and their events (read-only: checks and deliveries write them)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from agentdash.core.admin_base import ReadOnlyModelAdmin, SafeInputAdmin
from agentdash.monitor.alerts import rule_snapshot
from agentdash.monitor.forms import AlertRuleForm
from agentdash.monitor.models import AlertEvent, AlertRule
from agentdash.monitor.services import rule_delete, rule_save


@admin.register(AlertRule)
class AlertRuleAdmin(SafeInputAdmin):
    form = AlertRuleForm
    list_display = ("name", "metric", "comparison", "threshold", "window_s", "state", "value",
                    "enabled", "checked_at")  # fmt: skip
    list_filter = ("state", "enabled", "metric")
    search_fields = ("name", "agent", "model", "tool")
    readonly_fields = ("state", "state_since", "value", "checked_at", "check_error")

    def save_model(
        self, request: HttpRequest, obj: AlertRule, form: ModelForm, change: bool
    ) -> None:
        before: dict[str, Any] | None = None
        if change:
            before = rule_snapshot(AlertRule.objects.get(pk=obj.pk))
        rule_save(rule=obj, actor=request.user, before=before)

    def delete_model(self, request: HttpRequest, obj: AlertRule) -> None:
        rule_delete(rule=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AlertRule]) -> None:
        for rule in queryset:
            rule_delete(rule=rule, actor=request.user)


@admin.register(AlertEvent)
class AlertEventAdmin(ReadOnlyModelAdmin):
    formfield_overrides = {
        **ReadOnlyModelAdmin.formfield_overrides,
        models.URLField: {"assume_scheme": "https"},  # as the rule form reads it
    }
    list_display = ("at", "rule_name", "kind", "value", "delivery", "attempts", "last_error")
    list_filter = ("kind", "delivery")
    search_fields = ("rule_name", "event_id")
    ordering = ("-at",)
