"""Building blocks of the project's admin pages: read-only model admins and list filters."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

RECENT = 20


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """Rows anyone with the view permission may look at and nobody may add, change or
    delete here (they change only through their services)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RecentValuesFilter(admin.SimpleListFilter):
    """Filters on one ``column``; offers its most recent values, accepts any in the URL."""

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


class SessionFilter(RecentValuesFilter):
    title = "session"
    parameter_name = "session"
    column = "session_id"
