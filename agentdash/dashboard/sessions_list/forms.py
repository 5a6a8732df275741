"""The sessions list's filters, as the page's query string carries them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Q

from agentdash.dashboard.form_choices import agent_choices
from agentdash.dashboard.sessions_list.reads import (
    STATUS_FILTERS,
    STEP_FILTERS,
    Cursor,
    SessionListFilters,
)
from agentdash.runs.selectors import RUN_STATUSES
from agentdash.scores.selectors import definition_names, score_condition


class SessionListForm(forms.Form):
    """The sessions list's filters and cursors, from the query string. A value that is not
    valid is dropped (the list shows as if it were not given) and said next to its field."""

    q = forms.CharField(required=False, max_length=200, label="Search")
    agent = forms.ChoiceField(required=False, choices=())
    status = forms.ChoiceField(required=False, choices=())
    with_errors = forms.BooleanField(required=False, label="With errors")
    judges = forms.BooleanField(required=False, label="Judges' sessions")
    owner = forms.CharField(required=False, max_length=150)
    after = forms.CharField(required=False, max_length=200)
    before = forms.CharField(required=False, max_length=200)
    runs_from = forms.CharField(required=False, max_length=64)
    runs_to = forms.CharField(required=False, max_length=64)
    outcome = forms.ChoiceField(
        required=False, choices=[("", "any"), *zip(RUN_STATUSES, RUN_STATUSES, strict=True)]
    )
    steps_from = forms.CharField(required=False, max_length=64)
    steps_to = forms.CharField(required=False, max_length=64)
    step = forms.ChoiceField(required=False, choices=[("", "any"), *STEP_FILTERS.items()])
    step_name = forms.CharField(required=False, max_length=255)
    scores_from = forms.CharField(required=False, max_length=64)  # with scores_to: sessions
    scores_to = forms.CharField(required=False, max_length=64)  # given a score between
    score = forms.ChoiceField(required=False, choices=())
    score_value = forms.CharField(required=False, max_length=100, label="Score value")
    SORTS = [("", "latest activity first"), ("score", "score, lowest first"),
             ("-score", "score, highest first")]  # fmt: skip
    sort = forms.ChoiceField(required=False, choices=SORTS)
    page = forms.IntegerField(required=False, min_value=1, max_value=200)

    STATUS_LABELS = {
        "active": "Queued or running",
        "queued": "Queued",
        "running": "Running",
        "waiting": "Waiting for approval",
        "succeeded": "Succeeded",
        "failed": "Failed",
        "cancelled": "Cancelled",
        "none": "No runs",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agent, status = self.fields["agent"], self.fields["status"]
        assert isinstance(agent, forms.ChoiceField) and isinstance(status, forms.ChoiceField)
        agent.choices = [("", "All agents"), *agent_choices()]
        score = self.fields["score"]
        assert isinstance(score, forms.ChoiceField)
        score.choices = [("", "Any score"), *((n, n) for n in definition_names())]
        self.scored: Q | None = None
        status.choices = [("", "Any status")] + [
            (value, self.STATUS_LABELS[value]) for value in STATUS_FILTERS
        ]

    def filters(self) -> SessionListFilters:
        """The filters given, the invalid ones left out (call after ``is_valid()``)."""
        data = {
            name: self.cleaned_data[name]
            for name in self.fields
            if name not in self.errors and name in self.cleaned_data
        }

        def cursor(name: str) -> Cursor | None:
            return Cursor.parse(data[name]) if data.get(name) else None

        def moment(name: str) -> datetime | None:
            return datetime.fromisoformat(data[name]) if data.get(name) else None

        return SessionListFilters(
            q=" ".join(str(data.get("q") or "").split()),
            agent=data.get("agent") or "",
            status=data.get("status") or "",
            errors=bool(data.get("with_errors")),
            judges=bool(data.get("judges")),
            owner=str(data.get("owner") or "").strip(),
            after=cursor("after"),
            before=cursor("before"),
            runs_from=moment("runs_from"),
            runs_to=moment("runs_to"),
            outcome=data.get("outcome") or "",
            steps_from=moment("steps_from"),
            steps_to=moment("steps_to"),
            step=data.get("step") or "",
            step_name=str(data.get("step_name") or "").strip(),
            scored=self.scored,
            score_name=(data.get("score") or "") if self.scored is not None else "",
            sort=data.get("sort") or "",
            page=data.get("page") or 1,
        )

    def clean(self) -> dict[str, Any]:
        """A score's condition read against its definition (``score_value`` alone says
        nothing), and the window scores were given in (``scores_from``, ``scores_to``)."""
        cleaned = super().clean() or {}
        name = cleaned.get("score") or ""
        if name:
            try:
                self.scored = score_condition(name=name, said=cleaned.get("score_value") or "")
            except ValidationError as exc:
                self.add_error("score_value", exc)
        start, end = cleaned.get("scores_from"), cleaned.get("scores_to")
        if start and end:  # the Monitor's scores chart: scores given in its bucket
            given = Q(
                updated_at__gte=datetime.fromisoformat(start),
                updated_at__lt=datetime.fromisoformat(end),
            )
            self.scored = given if self.scored is None else self.scored & given
        return cleaned

    def clean_runs_from(self) -> str:
        return _moment_checked(self.cleaned_data.get("runs_from") or "")

    def clean_runs_to(self) -> str:
        return _moment_checked(self.cleaned_data.get("runs_to") or "")

    def clean_scores_from(self) -> str:
        return _moment_checked(self.cleaned_data.get("scores_from") or "")

    def clean_scores_to(self) -> str:
        return _moment_checked(self.cleaned_data.get("scores_to") or "")

    def clean_steps_from(self) -> str:
        return _moment_checked(self.cleaned_data.get("steps_from") or "")

    def clean_steps_to(self) -> str:
        return _moment_checked(self.cleaned_data.get("steps_to") or "")


def _moment_checked(value: str) -> str:
    """An ISO 8601 time with its offset (the Monitor's drill-down links carry them)."""
    if value:
        try:
            found = datetime.fromisoformat(value)
        except ValueError:
            raise forms.ValidationError("an ISO 8601 time with its offset") from None
        if found.tzinfo is None:
            raise forms.ValidationError("give its offset (Z or +01:00)")
    return value
