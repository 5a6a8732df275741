"""Admin for runs: read-only, plus a "cancel" action that goes through the service."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest

from agentdash.core.admin_base import SafeInputAdmin
from agentdash.runs.lifecycle import CANCELLABLE
from agentdash.runs.models import Run
from agentdash.runs.services import RunNotCancellable, run_cancel_request


class CancelActionForm(ActionForm):
    reason = forms.CharField(required=False, max_length=1000, label="Reason:")


@admin.register(Run)
class RunAdmin(SafeInputAdmin):
    action_form = CancelActionForm
    actions = ["cancel_runs"]
    list_display = (
        "invocation_id",
        "agent_name",
        "status",
        "session",
        "attempt",
        "cancel_requested",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "agent_name", "cancel_requested")
    search_fields = ("invocation_id", "trace_id", "agent_name", "session__id")
    date_hierarchy = "created_at"
    list_select_related = ("session",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False  # a run changes only through its executor and the cancel action

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("runs.cancel_run")

    @admin.action(description="Cancel the selected runs", permissions=["cancel"])
    def cancel_runs(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        reason = request.POST.get("reason", "").strip()
        requested = already = 0
        for run in queryset:
            if run.status in CANCELLABLE and run.cancel_requested:
                already += 1
                continue
            try:
                run_cancel_request(run=run, actor=request.user, reason=reason)
            except RunNotCancellable as exc:
                self.message_user(request, str(exc), messages.WARNING)
            else:
                requested += 1
        if requested:
            self.message_user(
                request, f"Cancellation requested for {requested} run(s).", messages.SUCCESS
            )
        if already:
            self.message_user(
                request, f"{already} run(s) had already been asked to stop.", messages.INFO
            )
