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
from agentdash.scores.models import Evaluation, EvaluatorRule, Score, ScoreDefinition
from agentdash.scores.rules import evaluator_rule_check, evaluator_rule_save
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


class EvaluatorRuleForm(forms.ModelForm):
    class Meta:
        model = EvaluatorRule
        fields = ("name", "enabled", "agent_name", "outcome", "sample_rate", "evaluator",
                  "definition", "config")  # fmt: skip
        help_texts = {
            "config": 'llm_judge: {"rubric": "… {input} … {output} … {trajectory} …", "model": '
            '"offline", "timeout_s": 60}; tool_trajectory: {"expected_tools": [{"name": …, '
            '"args": {…}}], "threshold": 1}; response_match: {"reference": "…", "threshold": '
            '0.8}; regex: {"pattern": "…", "must": "match"}; json_schema: {"schema": {…}}',
        }

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if not self.errors:
            candidate = EvaluatorRule(**{k: found.get(k) for k in self.Meta.fields})
            candidate.config = found.get("config") if found.get("config") is not None else {}
            try:
                evaluator_rule_check(candidate)
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    self.add_error(field, messages)
        return found


@admin.register(EvaluatorRule)
class EvaluatorRuleAdmin(SafeInputAdmin):
    form = EvaluatorRuleForm
    list_display = ("name", "enabled", "evaluator", "agent_name", "outcome", "sample_rate",
                    "definition", "updated_at")  # fmt: skip
    list_filter = ("enabled", "evaluator")
    search_fields = ("name", "agent_name")

    def save_model(
        self, request: HttpRequest, obj: EvaluatorRule, form: ModelForm, change: bool
    ) -> None:
        evaluator_rule_save(rule=obj, actor=request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # turned off instead: its evaluations keep their rule


@admin.register(Evaluation)
class EvaluationAdmin(ReadOnlyModelAdmin):
    list_display = ("rule", "run", "status", "judge_model", "cost_usd", "started_at", "error")
    list_filter = ("status", "rule")
    search_fields = ("session__id", "error", "explanation")
    ordering = ("-started_at",)
