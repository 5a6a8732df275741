"""Admin for the audit trail (read-only for everyone, superusers included), and Django's
user and group admins on the project's admin base."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.utils.html import format_html

from agentdash.core.admin_base import ReadOnlyModelAdmin, SafeInputAdmin
from agentdash.core.models import AuditEntry


# Django's own user and group admins, kept as they are but on SafeInputAdmin: a junk id in
# an action's selection is a message there too, not a 500. Only superusers and whoever is
# given the auth permissions reach them (operators are not).
class SafeUserAdmin(SafeInputAdmin, UserAdmin):
    pass


class SafeGroupAdmin(SafeInputAdmin, GroupAdmin):
    pass


for _model, _model_admin in ((User, SafeUserAdmin), (Group, SafeGroupAdmin)):
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
    admin.site.register(_model, _model_admin)


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
