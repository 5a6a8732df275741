"""Admin for sessions: everything read-only; state edits only through
``session_state_update`` (a form with a reason, checked against the version on the page)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from agentdash.agent_sessions.errors import StateConflictError
from agentdash.agent_sessions.models import AgentSession, AppState, SessionEvent, UserState
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.agent_sessions.services import session_delete, session_state_update
from agentdash.core.admin_base import ReadOnlyModelAdmin, value_fits
from agentdash.core.forms import BoundedJSONField
from agentdash.core.models import AuditEntry
from agentdash.core.permissions import can_edit_state, is_operator
from runtime.sessions.base_session_service import SessionNotFoundError
from runtime.sessions.state import State

REASON_MAX_LENGTH = 1000
"""The longest reason a state edit takes (the audit trail's column, when it has a limit)."""


def _pretty(value: Any) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True))


class StateEditForm(forms.Form):
    """One key of a session's state. The hidden versions are those the page showed."""

    key = forms.CharField(max_length=200)
    value = BoundedJSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
        help_text='JSON: "text", 3, true, null, [1, 2], {"a": 1}.',
    )
    reason = forms.CharField(
        max_length=AuditEntry._meta.get_field("reason").max_length or REASON_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the state is changed; kept in the audit trail.",
    )
    expected_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    expected_app_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    expected_user_version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    def clean_key(self) -> str:
        key: str = self.cleaned_data["key"].strip()
        if key.startswith(State.TEMP_PREFIX):
            raise forms.ValidationError("temp: keys live for one invocation and are never stored.")
        return key

    def clean_value(self) -> Any:
        if not str(self.data.get(self.add_prefix("value"), "")).strip():
            raise forms.ValidationError("Enter a JSON value (null for none).")
        return self.cleaned_data["value"]


class _ReadOnly(ReadOnlyModelAdmin):
    """Rows the admin shows but never adds, changes or deletes; operators may view them."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_view_permission(request, obj) or is_operator(request.user)


@admin.register(AgentSession)
class AgentSessionAdmin(_ReadOnly):
    list_display = (
        "id",
        "app_name",
        "user_id",
        "owner",
        "title",
        "version",
        "event_count",
        "last_update",
    )
    list_filter = ("app_name", ("owner", admin.RelatedOnlyFieldListFilter), "created_at")
    list_select_related = ("owner",)
    search_fields = ("=id", "app_name", "user_id", "title", "owner__username")
    ordering = ("-last_update_time",)
    fields = (
        ("id", "title"),
        ("app_name", "user_id", "owner"),
        ("version", "event_count", "created_at", "last_update"),
        "merged_state",
        "state",
    )
    readonly_fields = (
        "id",
        "title",
        "app_name",
        "user_id",
        "owner",
        "version",
        "event_count",
        "created_at",
        "last_update",
        "merged_state",
        "state",
    )

    @admin.display(description="last update", ordering="last_update_time")
    def last_update(self, obj: AgentSession) -> str:
        return f"{datetime.fromtimestamp(obj.last_update_time, tz=UTC):%Y-%m-%d %H:%M:%S} UTC"

    @admin.display(description="state (merged: app, user, own)")
    def merged_state(self, obj: AgentSession) -> str:
        return _pretty(session_state_view(session_id=obj.pk).state)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return admin.ModelAdmin.has_delete_permission(self, request, obj)

    def delete_model(self, request: HttpRequest, obj: AgentSession) -> None:
        session_delete(session_id=obj.pk, actor=request.user, reason="deleted in the admin")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AgentSession]) -> None:
        for session_id in queryset.values_list("pk", flat=True):
            session_delete(session_id=session_id, actor=request.user, reason="deleted in the admin")

    def get_urls(self) -> list[Any]:
        edit = self.admin_site.admin_view(self.state_edit_view)
        return [
            path("<path:object_id>/state/", edit, name="agent_sessions_agentsession_state"),
            *super().get_urls(),
        ]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # ``object_id`` is as the admin quotes it in URLs (``a_2Fb`` for ``a/b``).
        session_id = unquote(object_id)
        extra = dict(extra_context or {})
        extra["events_url"] = reverse(
            "admin:agent_sessions_sessionevent_changelist"
        ) + "?" + urlencode({"session__id__exact": session_id})  # fmt: skip
        if can_edit_state(request.user):
            extra["state_edit_url"] = reverse(
                "admin:agent_sessions_agentsession_state", args=[quote(session_id)]
            )
        return super().change_view(request, object_id, form_url, extra)

    def state_edit_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Show the merged state and set one key through ``session_state_update``. On a
        conflict nothing is written; the form comes back with the typed value kept, the
        current value in the error, and the page's versions moved to the current ones, so
        submitting again is a deliberate overwrite."""
        if not can_edit_state(request.user):
            raise PermissionDenied
        session_id = unquote(object_id)  # the admin's quoting of ids in URLs, undone
        if not value_fits(AgentSession._meta.pk, session_id):
            raise Http404("no such session")
        session = AgentSession.objects.filter(pk=session_id).first()
        if session is None:
            raise Http404("no such session")
        view = session_state_view(session_id=session.pk)
        form = StateEditForm(
            request.POST or None,
            initial={
                "expected_version": view.version,
                "expected_app_version": view.app_version,
                "expected_user_version": view.user_version,
            },
        )
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                result = session_state_update(
                    session_id=session.pk,
                    delta={data["key"]: data["value"]},
                    expected_version=data["expected_version"],
                    expected_app_version=data["expected_app_version"],
                    expected_user_version=data["expected_user_version"],
                    actor=request.user,
                    reason=data["reason"],
                )
            except StateConflictError as exc:
                form = _with_current_versions(request, view, str(exc))
            except (ValueError, SessionNotFoundError) as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(
                    request,
                    f"State key {data['key']!r} set; session is at version {result.version}.",
                )
                change = reverse(
                    "admin:agent_sessions_agentsession_change", args=[quote(session.pk)]
                )
                return HttpResponseRedirect(change)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": session,
            "title": f"Edit state of {session}",
            "form": form,
            "view": view,
            "state_json": json.dumps(view.state, indent=2, sort_keys=True),
        }
        return TemplateResponse(
            request, "admin/agent_sessions/agentsession/state_edit.html", context
        )


def _with_current_versions(request: HttpRequest, view: Any, error: str) -> StateEditForm:
    data = request.POST.copy()
    fresh = session_state_view(session_id=view.session_id)
    data["expected_version"] = str(fresh.version)
    data["expected_app_version"] = str(fresh.app_version)
    data["expected_user_version"] = str(fresh.user_version)
    form = StateEditForm(data)
    form.is_valid()
    form.add_error(None, f"Nothing was saved: {error}. Submit again to overwrite.")
    return form


@admin.register(SessionEvent)
class SessionEventAdmin(_ReadOnly):
    list_display = ("seq", "session", "author", "invocation_id", "version", "keys", "when")
    list_filter = ("author",)
    list_select_related = ("session",)
    search_fields = ("=session__id", "=invocation_id", "=event_id")
    ordering = ("session", "seq")
    fields = (
        ("session", "seq", "version"),
        ("event_id", "invocation_id", "author", "when"),
        "state_delta_keys",
        "pretty_data",
    )
    readonly_fields = (
        "session",
        "seq",
        "version",
        "event_id",
        "invocation_id",
        "author",
        "when",
        "state_delta_keys",
        "pretty_data",
    )

    @admin.display(description="state keys")
    def keys(self, obj: SessionEvent) -> str:
        return ", ".join(obj.state_delta_keys)

    @admin.display(description="time", ordering="timestamp")
    def when(self, obj: SessionEvent) -> str:
        return f"{datetime.fromtimestamp(obj.timestamp, tz=UTC):%Y-%m-%d %H:%M:%S.%f} UTC"

    @admin.display(description="event")
    def pretty_data(self, obj: SessionEvent) -> str:
        return _pretty(obj.data)


class _ScopeStateAdmin(_ReadOnly):
    @admin.display(description="state")
    def pretty_state(self, obj: AppState | UserState) -> str:
        return _pretty(obj.state)


@admin.register(AppState)
class AppStateAdmin(_ScopeStateAdmin):
    list_display = ("app_name", "version")
    search_fields = ("app_name",)
    fields = ("app_name", "version", "pretty_state")
    readonly_fields = fields


@admin.register(UserState)
class UserStateAdmin(_ScopeStateAdmin):
    list_display = ("app_name", "user_id", "version")
    list_filter = ("app_name",)
    search_fields = ("app_name", "=user_id")
    fields = ("app_name", "user_id", "version", "pretty_state")
    readonly_fields = fields
