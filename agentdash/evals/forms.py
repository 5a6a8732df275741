"""What people send the eval pages: a file to import, a session to keep as a case, a run to
start. Strings pass the request middleware's NUL/surrogate check before they get here."""

from __future__ import annotations

from typing import Any

from django import forms

from runtime.evaluation import DEFAULT_CRITERIA, RESPONSE_MATCH_SCORE, TOOL_TRAJECTORY_AVG_SCORE


class EvalSetImportForm(forms.Form):
    file = forms.FileField(help_text="An ADK .evalset.json or .test.json file.")
    agent_name = forms.CharField(
        max_length=128, required=False, help_text="The agent to run it against by default."
    )
    replace = forms.BooleanField(
        required=False, help_text="Replace a stored eval set of the same id."
    )


class EvalCaseSaveForm(forms.Form):
    eval_set_id = forms.CharField(max_length=128, help_text="A new or existing eval set.")
    eval_id = forms.CharField(
        max_length=128, required=False, help_text="The case's name (default: the title)."
    )


class EvalRunForm(forms.Form):
    agent_name = forms.ChoiceField(choices=())
    tool_trajectory_avg_score = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=DEFAULT_CRITERIA[TOOL_TRAJECTORY_AVG_SCORE],
        label="Tool trajectory threshold",
    )
    response_match_score = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=DEFAULT_CRITERIA[RESPONSE_MATCH_SCORE],
        label="Response match threshold",
    )

    def __init__(self, *args: Any, agents: list[str], default_agent: str = "", **kw: Any) -> None:
        super().__init__(*args, **kw)
        field = self.fields["agent_name"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(name, name) for name in agents]
        if default_agent in agents:
            field.initial = default_agent

    def criteria(self) -> dict[str, float]:
        return {
            TOOL_TRAJECTORY_AVG_SCORE: self.cleaned_data["tool_trajectory_avg_score"],
            RESPONSE_MATCH_SCORE: self.cleaned_data["response_match_score"],
        }
