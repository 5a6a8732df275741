"""Admin for the change log: look, never touch (only the services that record changes write
it)."""

from __future__ import annotations

from django.contrib import admin

from agentdash.changes.models import SessionChange
from agentdash.core.admin_base import ReadOnlyModelAdmin, SessionFilter


@admin.register(SessionChange)
class SessionChangeAdmin(ReadOnlyModelAdmin):
    list_display = ("session", "seq", "kind", "ref", "at")
    list_filter = (SessionFilter, "kind")
    search_fields = ("ref",)
