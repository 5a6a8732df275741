"""The alert rule form (the Alerts page's and the admin's): it parses and validates; saving
goes through ``services``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.core.exceptions import ValidationError

from agentdash.core.conf import agentdash_setting
from agentdash.monitor.alert_metrics import METRICS, metric_choices
from agentdash.monitor.models import AlertRule
from agentdash.monitor.stats import SOURCES

MIN_WINDOW_S = 60
MAX_WINDOW_S = 90 * 86400
MAX_FOR_S = 86400
MAX_THRESHOLD = 1e15


class AlertRuleForm(forms.ModelForm):
    metric = forms.ChoiceField(choices=metric_choices)
    webhook_url = forms.URLField(
        label="Webhook URL", max_length=500, required=False, assume_scheme="https",
        help_text="Where firing and resolving are posted, signed (blank: none).",
    )  # fmt: skip
    source = forms.ChoiceField(
        choices=[("", "local and ingested"), *((s, s) for s in SOURCES)], required=False
    )

    class Meta:
        model = AlertRule
        fields = ("name", "metric", "comparison", "threshold", "window_s", "for_s", "agent",
                  "model", "tool", "source", "owner", "webhook_url", "enabled")  # fmt: skip
        labels = {"window_s": "Window (s)", "for_s": "For (s)", "webhook_url": "Webhook URL"}

    def clean_name(self) -> str:
        name = str(self.cleaned_data["name"]).strip()
        if not name:
            raise ValidationError("Give the rule a name.")
        return name

    def clean_threshold(self) -> float:
        value = float(self.cleaned_data["threshold"])
        if abs(value) > MAX_THRESHOLD:
            raise ValidationError(f"A threshold between -{MAX_THRESHOLD:g} and {MAX_THRESHOLD:g}.")
        return value

    def clean_window_s(self) -> int:
        value = int(self.cleaned_data["window_s"])
        if not MIN_WINDOW_S <= value <= MAX_WINDOW_S:
            raise ValidationError(f"A window of {MIN_WINDOW_S} s to 90 days ({MAX_WINDOW_S} s).")
        return value

    def clean_for_s(self) -> int:
        value = int(self.cleaned_data["for_s"])
        if value > MAX_FOR_S:
            raise ValidationError(f"At most a day ({MAX_FOR_S} s).")
        return value

    def clean_webhook_url(self) -> str:
        url = str(self.cleaned_data.get("webhook_url") or "").strip()
        if not url:
            return ""
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValidationError("An http or https URL.")
        if not agentdash_setting("ALERT_WEBHOOK_SECRET"):
            raise ValidationError(
                "Set AGENTDASH_ALERT_WEBHOOK_SECRET first: webhooks are signed with it."
            )
        return url

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        metric = METRICS.get(str(data.get("metric", "")))
        threshold = data.get("threshold")
        percent = metric is not None and metric.unit == "%"
        if percent and threshold is not None and not 0 <= float(threshold) <= 100:
            self.add_error("threshold", "A percentage: 0 to 100.")
        return data
