"""Admin for the span store — look, never touch (the live pipeline and the reaper write it) —
and for the price table, which operators edit (each save through the audited service)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from agentdash.core.admin_base import (
    ReadOnlyModelAdmin,
    RecentValuesFilter,
    SafeInputAdmin,
    SessionFilter,
)
from agentdash.spans.models import ModelPrice, Span, SpanSource
from agentdash.spans.prices import PRICE_FIELDS, model_price_delete, model_price_set


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


@admin.register(SpanSource)
class SpanSourceAdmin(ReadOnlyModelAdmin):
    """Who sent spans from outside: each OTLP resource and scope, as sent."""

    list_display = ("__str__", "scope_name", "scope_version", "created_at")
    search_fields = ("scope_name", "scope_version", "digest")
    ordering = ("-created_at",)


class ModelPriceForm(forms.ModelForm):
    reason = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why you make this change; kept in the audit trail.",
    )

    class Meta:
        model = ModelPrice
        fields = ("model", *PRICE_FIELDS)


@admin.register(ModelPrice)
class ModelPriceAdmin(SafeInputAdmin):
    """Prices per model: a span's cost is read from them whenever it is shown, so a change
    here changes every cost on every page at once."""

    form = ModelPriceForm
    list_display = ("model", *PRICE_FIELDS, "edited_on")
    list_filter = ("match", "as_of")
    search_fields = ("model", "source")
    ordering = ("model",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # A row's model is what it prices: another model is another row.
        return () if obj is None else ("model", "edited_on")

    def save_model(
        self, request: HttpRequest, obj: ModelPrice, form: forms.ModelForm, change: bool
    ) -> None:
        saved = model_price_set(
            model=obj.model,
            match=obj.match,
            input_per_mtok=obj.input_per_mtok,
            output_per_mtok=obj.output_per_mtok,
            cached_input_per_mtok=obj.cached_input_per_mtok,
            thinking_per_mtok=obj.thinking_per_mtok,
            as_of=obj.as_of,
            source=obj.source,
            actor=request.user,
            reason=form.cleaned_data.get("reason", ""),
        )
        obj.pk = saved.pk
        obj._state.adding = False

    def delete_model(self, request: HttpRequest, obj: ModelPrice) -> None:
        model_price_delete(price=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ModelPrice]) -> None:
        for price in queryset:
            model_price_delete(price=price, actor=request.user)
