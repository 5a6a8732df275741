"""Admin for instructions: every version listed (read-only: a version is never changed), and
a new version added through the service — checked against the current one and audited. The
editor with a preview, the diff and rollback is ``/instructions/<agent>/``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.forms import ModelForm
from django.http import HttpRequest

from agentdash.core.admin_base import SafeInputAdmin
from agentdash.instructions.models import InstructionVersion
from agentdash.instructions.selectors import instruction_current
from agentdash.instructions.services import InstructionConflict, instruction_check, instruction_save


class InstructionVersionForm(forms.ModelForm):
    class Meta:
        model = InstructionVersion
        fields = ("agent_name", "text", "reason")

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if not self.errors:
            try:
                instruction_check(
                    agent_name=found.get("agent_name", ""), text=found.get("text"),
                    reason=found.get("reason", ""),
                )  # fmt: skip
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    self.add_error("agent_name" if field == "agent" else field, messages)
                return found
            current = instruction_current(agent_name=found["agent_name"])
            if current is not None and current.text == found["text"].replace("\r\n", "\n"):
                self.add_error("text", "this is the current instruction already")
        return found


@admin.register(InstructionVersion)
class InstructionVersionAdmin(SafeInputAdmin):
    form = InstructionVersionForm
    list_display = ("agent_name", "version", "author_name", "created_at", "reason", "rollback_of")
    list_filter = ("agent_name",)
    search_fields = ("agent_name", "text", "reason")
    ordering = ("agent_name", "-version")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None:  # a stored version is history
            return ("agent_name", "version", "text", "reason", "rollback_of", "author_name",
                    "created_at")  # fmt: skip
        return ()

    def save_model(
        self, request: HttpRequest, obj: InstructionVersion, form: ModelForm, change: bool
    ) -> None:
        current = instruction_current(agent_name=obj.agent_name)
        try:
            saved = instruction_save(
                agent_name=obj.agent_name, text=obj.text, reason=obj.reason, actor=request.user,
                expected_version=current.version if current else 0,
            )  # fmt: skip
        except (InstructionConflict, ValidationError) as exc:
            raise PermissionDenied(str(exc)) from exc
        obj.pk = saved.pk

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the history only grows: roll back instead
