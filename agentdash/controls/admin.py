"""Admin for policies and callback switches. Every save goes through the services (audited,
version-checked); the admin only parses and renders."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from agentdash.controls.breakpoints import breakpoint_add, breakpoint_remove
from agentdash.controls.forms import CallbackSettingForm, PolicyForm, ReasonActionForm
from agentdash.controls.models import Breakpoint, CallbackSetting, Policy
from agentdash.controls.selectors import policy_config_changes
from agentdash.controls.services import (
    callback_setting_clear,
    callback_setting_set,
    policy_create,
    policy_delete,
)
from agentdash.core.admin_base import SafeInputAdmin

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups  # what get_fields answers


def _copy_into(target: Model, source: Model) -> None:
    """Make the admin's in-memory object match what the service stored."""
    for field in source._meta.concrete_fields:
        setattr(target, field.attname, getattr(source, field.attname))
    target._state.adding = False


@admin.register(Policy)
class PolicyAdmin(SafeInputAdmin):
    form = PolicyForm
    list_display = ("name", "kind", "enabled", "agent_list", "version", "updated_at")
    list_filter = ("kind", "enabled")
    search_fields = ("name",)

    def get_fields(self, request: HttpRequest, obj: Policy | None = None) -> _FieldGroups:
        if obj is None:
            return ["name", "kind", "config", "agents_text", "enabled", "reason"]
        return [
            "name",
            "kind",
            "version",
            "config",
            "agents_text",
            "enabled",
            "reason",
            "loaded_version",
            "config_changes",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Policy | None = None) -> list[str]:
        if obj is None:
            return []
        return ["name", "kind", "version", "config_changes"]

    @admin.display(description="Agents")
    def agent_list(self, obj: Policy) -> str:
        return ", ".join(obj.agents)

    @admin.display(description="Last change (previous version → this one)")
    def config_changes(self, obj: Policy) -> str:
        changes = policy_config_changes(policy=obj)
        if changes is None:
            return "No earlier version in the audit trail."
        if not changes:
            return "The config is the same as in the previous version."
        rows = format_html_join(
            "",
            "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>→</td>"
            "<td><code>{}</code></td></tr>",
            (
                (
                    c.key,
                    c.change,
                    c.before if c.before is not None else "—",
                    c.after if c.after is not None else "—",
                )
                for c in changes
            ),
        )
        return format_html(
            '<table class="policy-diff"><thead><tr><th>Key</th><th>Change</th><th>Before</th>'
            "<th></th><th>After</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    def save_model(self, request: HttpRequest, obj: Policy, form: ModelForm, change: bool) -> None:
        data = form.cleaned_data
        if change:
            assert isinstance(form, PolicyForm)
            saved = form.update(actor=request.user)
        else:
            saved = policy_create(
                name=data["name"],
                kind=data["kind"],
                config=data["config"],
                agents=data["agents"],
                enabled=data["enabled"],
                actor=request.user,
                reason=data.get("reason", ""),
            )
        _copy_into(obj, saved)

    def delete_model(self, request: HttpRequest, obj: Policy) -> None:
        policy_delete(policy=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Policy]) -> None:
        for policy in queryset:
            policy_delete(policy=policy, actor=request.user)


@admin.register(CallbackSetting)
class CallbackSettingAdmin(SafeInputAdmin):
    form = CallbackSettingForm
    action_form = ReasonActionForm
    list_display = ("agent_name", "callback_name", "scope_label", "enabled", "updated_at")
    list_filter = ("enabled", "agent_name", "callback_name")
    search_fields = ("agent_name", "callback_name", "session__id")
    raw_id_fields = ("session",)
    actions = ["switch_on", "switch_off"]

    def get_fields(self, request: HttpRequest, obj: CallbackSetting | None = None) -> _FieldGroups:
        return ["agent_name", "callback_name", "session", "enabled", "reason"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: CallbackSetting | None = None
    ) -> list[str]:
        # A switch's scope is its identity: to switch another scope, add another switch.
        return [] if obj is None else ["agent_name", "callback_name", "session"]

    @admin.display(description="Scope", ordering="session")
    def scope_label(self, obj: CallbackSetting) -> str:
        return "every session" if obj.session_id is None else f"session {obj.session_id}"

    def save_model(
        self, request: HttpRequest, obj: CallbackSetting, form: ModelForm, change: bool
    ) -> None:
        saved = callback_setting_set(
            agent_name=obj.agent_name,
            callback_name=obj.callback_name,
            session_id=obj.session_id,
            enabled=obj.enabled,
            actor=request.user,
            reason=form.cleaned_data.get("reason", ""),
        )
        _copy_into(obj, saved)

    def delete_model(self, request: HttpRequest, obj: CallbackSetting) -> None:
        callback_setting_clear(
            agent_name=obj.agent_name,
            callback_name=obj.callback_name,
            session_id=obj.session_id,
            actor=request.user,
        )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[CallbackSetting]) -> None:
        for setting in queryset:
            self.delete_model(request, setting)

    def _switch(self, request: HttpRequest, queryset: QuerySet[CallbackSetting], on: bool) -> None:
        reason = request.POST.get("reason", "").strip()
        settings = list(queryset)
        changed = 0
        for setting in settings:
            if setting.enabled != on:
                changed += 1
            callback_setting_set(
                agent_name=setting.agent_name,
                callback_name=setting.callback_name,
                session_id=setting.session_id,
                enabled=on,
                actor=request.user,
                reason=reason,
            )
        state = "on" if on else "off"
        self.message_user(
            request,
            f"Switched {changed} callback setting(s) {state}; "
            f"{len(settings) - changed} already were.",
            messages.SUCCESS,
        )

    @admin.action(description="Switch on", permissions=["change"])
    def switch_on(self, request: HttpRequest, queryset: QuerySet[CallbackSetting]) -> None:
        self._switch(request, queryset, True)

    @admin.action(description="Switch off", permissions=["change"])
    def switch_off(self, request: HttpRequest, queryset: QuerySet[CallbackSetting]) -> None:
        self._switch(request, queryset, False)


@admin.register(Breakpoint)
class BreakpointAdmin(SafeInputAdmin):
    """Breakpoints are added and removed, never edited (the session's Breakpoints page does
    the same); both audited."""

    list_display = ("agent_name", "where_label", "scope_label", "enabled", "created_at")
    list_filter = ("kind", "agent_name", "enabled")
    search_fields = ("agent_name", "tool_name", "session__id")
    raw_id_fields = ("session",)
    fields = ("agent_name", "kind", "tool_name", "outcome", "session")

    def get_readonly_fields(self, request: HttpRequest, obj: Breakpoint | None = None) -> list[str]:
        return [] if obj is None else ["agent_name", "kind", "tool_name", "outcome", "session"]

    @admin.display(description="Pauses", ordering="kind")
    def where_label(self, obj: Breakpoint) -> str:
        return obj.where

    @admin.display(description="Scope", ordering="session")
    def scope_label(self, obj: Breakpoint) -> str:
        return obj.scope

    def save_model(
        self, request: HttpRequest, obj: Breakpoint, form: ModelForm, change: bool
    ) -> None:
        if change:
            return
        try:
            saved = breakpoint_add(
                agent_name=obj.agent_name,
                kind=obj.kind,
                tool_name=obj.tool_name,
                outcome=obj.outcome,
                session_id=obj.session_id,
                actor=request.user,
            )
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
            return
        _copy_into(obj, saved)

    def delete_model(self, request: HttpRequest, obj: Breakpoint) -> None:
        breakpoint_remove(point=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Breakpoint]) -> None:
        for point in queryset:
            breakpoint_remove(point=point, actor=request.user)
