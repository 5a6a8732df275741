"""Ingest keys in the admin: made (the secret shown once, on the page after saving),
revoked by an action; both audited through the services. A key is never deleted: revoked,
its record stays with the sessions it wrote."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from agentdash.core.admin_base import SafeInputAdmin
from agentdash.ingest.keys import OWN_KEYS_ONLY, ingest_key_create, ingest_key_revoke
from agentdash.ingest.models import IngestKey

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups  # what get_fields answers


def _staff(request: HttpRequest) -> User:
    """The person on an admin page: signed in (the admin lets no one else in)."""
    user = request.user
    assert user.is_authenticated
    return user


@admin.register(IngestKey)
class IngestKeyAdmin(SafeInputAdmin):
    list_display = ("name", "project", "owner", "prefix", "created_at", "last_used_at", "state")
    list_filter = ("project",)
    search_fields = ("name", "project", "prefix", "owner__username")
    raw_id_fields = ("owner",)
    actions = ["revoke"]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"owner": request.user.pk, **super().get_changeform_initial_data(request)}

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        actor = request.user

        def clean_owner(self: ModelForm) -> Any:
            owner = self.cleaned_data.get("owner")
            if (
                obj is None
                and owner is not None
                and not actor.is_superuser
                and owner.pk != actor.pk
            ):
                raise ValidationError(OWN_KEYS_ONLY)
            return owner

        # The admin's form, subclassed for this request's person (with type(): a class
        # statement on a base made at run time cannot be type-checked).
        return type("KeyForm", (form,), {"clean_owner": clean_owner})

    def get_fields(self, request: HttpRequest, obj: IngestKey | None = None) -> _FieldGroups:
        if obj is None:
            return ["name", "project", "owner"]
        return ["name", "project", "owner", "prefix", "created_at", "created_by",
                "last_used_at", "revoked_at"]  # fmt: skip

    def get_readonly_fields(self, request: HttpRequest, obj: IngestKey | None = None) -> list[str]:
        if obj is None:
            return []
        return ["project", "owner", "prefix", "created_at", "created_by", "last_used_at",
                "revoked_at"]  # fmt: skip

    @admin.display(description="State", boolean=False)
    def state(self, obj: IngestKey) -> str:
        return "revoked" if obj.revoked_at else "active"

    def has_delete_permission(self, request: HttpRequest, obj: IngestKey | None = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: IngestKey, form: ModelForm, change: bool
    ) -> None:
        if change:
            IngestKey.objects.filter(pk=obj.pk).update(name=obj.name)
            return
        saved, raw = ingest_key_create(
            name=obj.name, project=obj.project, owner=obj.owner, actor=_staff(request)
        )
        for field in saved._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved, field.attname))
        obj._state.adding = False
        messages.warning(
            request,
            f"The new ingest key — copy it now, it is not shown again: {raw}  "
            f"(send it as 'Authorization: Bearer <key>' to /v1/traces)",
        )

    @admin.action(
        description="Revoke the selected keys (their senders are refused)", permissions=["change"]
    )
    def revoke(self, request: HttpRequest, queryset: QuerySet[IngestKey]) -> None:
        count = 0
        for key in queryset:
            if key.revoked_at is None:
                ingest_key_revoke(key=key, actor=_staff(request), reason="revoked in the admin")
                count += 1
        messages.success(request, f"{count} key(s) revoked.")
