"""Building blocks of the project's admin pages: the base every model admin uses
(:class:`SafeInputAdmin`), read-only model admins and list filters."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.db import connections, models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from agentdash.core.forms import BoundedJSONField
from agentdash.core.hygiene import text_problem

RECENT = 20


def value_fits(field: models.Field, value: Any) -> bool:
    """Whether ``value`` (as sent in a URL or a form) can be compared with ``field`` at all:
    it converts to the field's type, has no NUL or unpaired surrogate, is no longer than a
    text column and within an integer column's range. A value that does not fit matches no
    row, so callers answer "not found" instead of letting the query fail."""
    if isinstance(value, str) and text_problem(value):
        return False
    target = getattr(field, "target_field", None)  # a foreign key compares as what it points to
    if isinstance(target, models.Field):
        field = target
    try:
        converted = field.to_python(value)
    except (ValidationError, ValueError, TypeError):
        return False
    max_length = getattr(field, "max_length", None)
    if isinstance(converted, str) and max_length is not None and len(converted) > max_length:
        return False
    if isinstance(converted, int) and not isinstance(converted, bool):
        try:
            low, high = connections["default"].ops.integer_field_range(field.get_internal_type())
        except KeyError:  # not a column type with a range
            return True
        if (low is not None and converted < low) or (high is not None and converted > high):
            return False
    return True


class SafeInputAdmin(admin.ModelAdmin):
    r"""The base of every model admin of the project (a test keeps it so): what a signed-in
    person can put in the admin's URLs and forms ends in a page, never a 500.

    - an object id that cannot be an id (``_00``, the admin's quoting of NUL; too long; not
      a number for a numeric key) is a missing object (the admin's "doesn't exist");
    - an action over selected ids that cannot be ids does nothing and says so; an action
      form that does not validate says why (not Django's "No action selected");
    - a changelist's parameters that break its date hierarchy (year 10000) are the
      changelist's own "wacky parameters" redirect (``?e=1``);
    - model ``JSONField``\s are edited through :class:`~agentdash.core.forms.BoundedJSONField`.

    NUL and unpaired surrogates anywhere else in a request are refused before the admin sees
    them (``agentdash.core.middleware.InputHygieneMiddleware``)."""

    formfield_overrides = {models.JSONField: {"form_class": BoundedJSONField}}

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        model = self.model
        field = model._meta.get_field(from_field) if from_field else model._meta.pk
        if not value_fits(field, object_id):
            return None
        return super().get_object(request, object_id, from_field)

    def get_changelist_instance(self, request: HttpRequest) -> ChangeList:
        try:
            return super().get_changelist_instance(request)
        except (ValueError, OverflowError) as exc:
            # A date hierarchy of year 10000 or 10**30 (Django catches only some of these):
            # the changelist's own answer to wacky parameters, a redirect to ?e=1.
            raise IncorrectLookupParameters(exc) from exc

    def response_action(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        pk = self.model._meta.pk
        if any(not value_fits(pk, value) for value in selected):
            self.message_user(
                request,
                "The selection holds values that are not ids of "
                f"{self.model._meta.verbose_name_plural}; nothing was done.",
                messages.WARNING,
            )
            return None
        action_form = self.action_form(request.POST, auto_id=None)
        action_form.fields["action"].choices = self.get_action_choices(request)
        if not action_form.is_valid():
            problems = {k: v for k, v in action_form.errors.items() if k != "action"}
            if problems:
                said = "; ".join(f"{k}: {' '.join(v)}" for k, v in problems.items())
                self.message_user(request, f"Nothing was done: {said}", messages.WARNING)
                return None
        return super().response_action(request, queryset)


class ReadOnlyModelAdmin(SafeInputAdmin):
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
        if not value:
            return queryset
        if not value_fits(queryset.model._meta.get_field(self.column), value):
            return queryset.none()  # no row holds what no column can
        return queryset.filter(**{self.column: value})


class SessionFilter(RecentValuesFilter):
    title = "session"
    parameter_name = "session"
    column = "session_id"
