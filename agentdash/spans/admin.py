"""Admin for the span store: look, never touch (the live pipeline and the reaper write it)."""

from __future__ import annotations

from django.contrib import admin

from agentdash.core.admin_base import ReadOnlyModelAdmin, RecentValuesFilter, SessionFilter
from agentdash.spans.models import Span


class TraceFilter(RecentValuesFilter):
    title = "trace"
    parameter_name = "trace"
    column = "trace_id"


@admin.register(Span)
class SpanAdmin(ReadOnlyModelAdmin):
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
