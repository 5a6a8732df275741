"""Admin forms of the controls app: they parse and validate; saving goes through services."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.forms.fields import InvalidJSONInput
from django.forms.renderers import BaseRenderer
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agentdash.controls.models import CallbackSetting, Policy
from agentdash.controls.policies import POLICY_KINDS, policy_validate
from agentdash.controls.selectors import callback_names_known, policy_current_version
from agentdash.controls.services import PolicyVersionConflict, policy_update
from agentdash.core.forms import BoundedJSONField


class DatalistInput(forms.TextInput):
    """A text input offering ``options`` through a ``<datalist>``: free text stays possible."""

    def __init__(self, options: list[str], attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.options = options

    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: BaseRenderer | None = None,
    ) -> SafeString:
        attrs = dict(attrs or {})
        list_id = f"{attrs.get('id') or 'id_' + name}_options"
        attrs["list"] = list_id
        field = super().render(name, value, attrs, renderer)
        if not self.options:
            return field
        options = format_html_join("", '<option value="{}"></option>', ((o,) for o in self.options))
        return format_html('{}<datalist id="{}">{}</datalist>', field, list_id, options)


class PrettyJSONField(BoundedJSONField):
    """JSON text indented for editing; invalid input is shown back exactly as typed. Depth
    and storability are checked before anything else reads it (``BoundedJSONField``)."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, InvalidJSONInput):
            return value
        return json.dumps(value, ensure_ascii=False, indent=2, cls=self.encoder)


def reason_field() -> forms.CharField:
    return forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why you make this change; kept in the audit trail.",
    )


AGENTS_TEXT_MAX_LENGTH = 4000
"""The longest list of agent names a policy form takes (names are up to 128 characters)."""


def _agent_names(text: str) -> list[str]:
    return [name for name in re.split(r"[\s,]+", text) if name]


class PolicyForm(forms.ModelForm):
    """Edits a policy's config as JSON text. ``clean`` validates it against the kind's schema
    (each problem listed with its path) and, when editing, checks the policy is still at the
    version the form was loaded at (``loaded_version``, a hidden field)."""

    kind = forms.ChoiceField(choices=())
    config = PrettyJSONField(
        widget=forms.Textarea(attrs={"rows": 14, "cols": 80, "class": "vLargeTextField"}),
        help_text="JSON object; its keys depend on the kind.",
    )
    agents_text = forms.CharField(
        label="Agents",
        required=False,
        max_length=AGENTS_TEXT_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Names of the agents this policy governs, separated by commas or spaces.",
    )
    enabled = forms.BooleanField(required=False, initial=True)
    reason = reason_field()
    loaded_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Policy
        fields = ["name", "kind", "config", "enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "kind" in self.fields:
            kind_field = self.fields["kind"]
            assert isinstance(kind_field, forms.ChoiceField)
            kind_field.choices = [
                (name, f"{name} — {kind.description}")
                for name, kind in sorted(POLICY_KINDS.items())
            ]
        if self.instance.pk:
            self.initial.setdefault("loaded_version", self.instance.version)
            self.initial.setdefault("agents_text", ", ".join(self.instance.agents))
            self.fields["loaded_version"].required = True

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        cleaned["agents"] = _agent_names(cleaned.get("agents_text") or "")
        kind = self.instance.kind if self.instance.pk else cleaned.get("kind")
        if kind and "config" in cleaned:
            try:
                cleaned["config"] = policy_validate(kind=kind, config=cleaned["config"])
            except ValidationError as exc:
                self._add_policy_errors(exc)
        if self.instance.pk and cleaned.get("loaded_version") is not None:
            self._check_version(cleaned["loaded_version"])
        return cleaned

    def update(self, *, actor: Any) -> Policy:
        """Store the edit of a valid form as the policy's next version (``policy_update``:
        ``PolicyVersionConflict`` when someone saved meanwhile, ``ValidationError``)."""
        data = self.cleaned_data
        return policy_update(
            policy=self.instance,
            config=data["config"],
            enabled=data["enabled"],
            agents=data["agents"],
            actor=actor,
            reason=data.get("reason", ""),
            expected_version=data["loaded_version"],
        )

    def _check_version(self, loaded: int) -> None:
        # Inside the admin's transaction the row stays locked until the save: no one can
        # slip in between this check and policy_update (which checks again regardless).
        lock = transaction.get_connection().in_atomic_block
        current = policy_current_version(policy_id=self.instance.pk, lock=lock)
        if current is None:
            self.add_error(None, "This policy was deleted while you were editing it.")
        elif current != loaded:
            conflict = PolicyVersionConflict(
                policy=self.instance, expected_version=loaded, current_version=current
            )
            self.add_error(None, ValidationError(str(conflict), code="conflict"))

    def _add_policy_errors(self, exc: ValidationError) -> None:
        for path, messages in exc.message_dict.items():
            if path == "kind":
                self.add_error("kind" if "kind" in self.fields else None, messages)
                continue
            where = path.removeprefix("config").lstrip(".")
            self.add_error("config", [f"{where}: {m}" if where else m for m in messages])


class CallbackSettingForm(forms.ModelForm):
    """Adds or edits one switch; agent and callback names are offered from the registry."""

    reason = reason_field()

    class Meta:
        model = CallbackSetting
        fields = ["agent_name", "callback_name", "session", "enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        known = callback_names_known()
        for field, options in (("agent_name", known.agents), ("callback_name", known.callbacks)):
            if field in self.fields:
                self.fields[field].widget = DatalistInput(options, attrs={"size": 40})


class ReasonActionForm(ActionForm):
    """The admin action bar with a reason, recorded with each change an action makes."""

    reason = forms.CharField(required=False, max_length=1000, label="Reason:")


class PolicyEditForm(PolicyForm):
    """A policy's config, agents and switch, edited outside the admin (the guardrails page):
    the same checks as :class:`PolicyForm`; name and kind stay as they are."""

    class Meta(PolicyForm.Meta):
        fields = ["config", "enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.pop("kind", None)
        self.fields["config"].widget.attrs.update({"rows": 16, "cols": 60, "spellcheck": "false"})
