"""Admin for the audit trail: read-only for everyone, superusers included."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.utils.html import format_html

from agentdash.core.admin_base import ReadOnlyModelAdmin
from agentdash.core.models import AuditEntry


def _pretty(value: Any) -> str:
    if value is None:
        return "—"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return format_html('<pre class="audit-json">{}</pre>', text)


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyModelAdmin):
    list_display = ("at", "actor_label", "action", "target", "short_reason", "request_id")
    list_filter = ("action", "target_type", "at")
    search_fields = ("actor_label", "action", "target_id", "reason", "request_id")
    date_hierarchy = "at"
    fields = (
        "at",
        "actor_label",
        "actor",
        "action",
        "target_type",
        "target_id",
        "reason",
        "request_id",
        "before_pretty",
        "after_pretty",
    )
    readonly_fields = fields

    @admin.display(description="Target", ordering="target_type")
    def target(self, obj: AuditEntry) -> str:
        return f"{obj.target_type}:{obj.target_id}"

    @admin.display(description="Reason")
    def short_reason(self, obj: AuditEntry) -> str:
        return obj.reason if len(obj.reason) <= 80 else obj.reason[:79] + "…"

    @admin.display(description="Before")
    def before_pretty(self, obj: AuditEntry) -> str:
        return _pretty(obj.before)

    @admin.display(description="After")
    def after_pretty(self, obj: AuditEntry) -> str:
        return _pretty(obj.after)
