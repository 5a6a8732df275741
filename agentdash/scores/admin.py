"""Admin for score definitions (operators keep them: saved through the service, checked and
audited) and the scores given (read-only: people, evaluators and the API give them)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.forms import ModelForm
from django.http import HttpRequest

from agentdash.core.admin_base import ReadOnlyModelAdmin, SafeInputAdmin
from agentdash.scores.models import Score, ScoreDefinition
from agentdash.scores.services import definition_check, definition_save


class ScoreDefinitionForm(forms.ModelForm):
    class Meta:
        model = ScoreDefinition
        fields = ("name", "kind", "description", "minimum", "maximum", "categories", "enabled")

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if not self.errors:
            candidate = ScoreDefinition(**{k: found.get(k) for k in self.Meta.fields})
            candidate.categories = found.get("categories") or []
            try:
                definition_check(candidate)
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    self.add_error(field, messages)
        return found


@admin.register(ScoreDefinition)
class ScoreDefinitionAdmin(SafeInputAdmin):
    form = ScoreDefinitionForm
    list_display = ("name", "kind", "enabled", "minimum", "maximum", "updated_at")
    list_filter = ("kind", "enabled")
    search_fields = ("name", "description")

    def save_model(
        self, request: HttpRequest, obj: ScoreDefinition, form: ModelForm, change: bool
    ) -> None:
        definition_save(definition=obj, actor=request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # turned off instead: its scores keep their meaning


@admin.register(Score)
class ScoreAdmin(ReadOnlyModelAdmin):
    list_display = ("definition", "label", "value", "target", "session", "source", "author_name",
                    "updated_at")  # fmt: skip
    list_filter = ("source", "target", "definition")
    search_fields = ("session__id", "author_name", "comment")
    ordering = ("-updated_at",)
