"""Admin for spans and session changes: look, never touch (the live processor writes them)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from agentdash.timeline.models import SessionChange, Span

RECENT = 20


class _ValueFilter(admin.SimpleListFilter):
    """Filters on one column; offers its most recent values, accepts any in the URL."""

    column = ""

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        values = (
            model_admin.model.objects.exclude(**{f"{self.column}__isnull": True})
            .order_by("-id")
            .values_list(self.column, flat=True)
        )
        seen: list[str] = []
        for value in values[: RECENT * 20]:
            if value not in seen:
                seen.append(value)
            if len(seen) == RECENT:
                break
        current = self.value()
        if current and current not in seen:
            seen.insert(0, current)
        return [(value, value) for value in seen]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset.filter(**{self.column: value}) if value else queryset


class TraceFilter(_ValueFilter):
    title = "trace"
    parameter_name = "trace"
    column = "trace_id"


class SessionFilter(_ValueFilter):
    title = "session"
    parameter_name = "session"
    column = "session_id"


class _ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Span)
class SpanAdmin(_ReadOnlyAdmin):
    list_display = (
        "name",
        "trace_id",
        "span_id",
        "kind",
        "status",
        "duration_ms",
        "session",
        "seq",
    )
    list_filter = (SessionFilter, TraceFilter, "status", "kind")
    search_fields = ("name", "trace_id", "span_id")
    ordering = ("-start_time",)

    @admin.display(description="Duration (ms)")
    def duration_ms(self, obj: Span) -> str:
        if obj.end_time is None:
            return "running"
        return f"{(obj.end_time - obj.start_time) / 1e6:.1f}"


@admin.register(SessionChange)
class SessionChangeAdmin(_ReadOnlyAdmin):
    list_display = ("session", "seq", "kind", "ref", "at")
    list_filter = (SessionFilter, "kind")
    search_fields = ("ref",)
