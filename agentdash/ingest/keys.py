"""Ingest keys made, revoked (both audited) and checked.

A key reads ``agd_`` + 40 URL-safe characters (``core.secrets``: 240 bits); its first 12
characters are its public prefix, the rest is never stored: a SHA-256 of the whole key is.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agentdash.core.prepared import PreparedQuery
from agentdash.core.secrets import PREFIX_CHARS, secret_make, secret_matches, secret_shape_ok
from agentdash.core.services import audit_record
from agentdash.ingest.models import IngestKey

KEY_PREFIX = "agd_"
OWN_KEYS_ONLY = (
    "Only an admin may make a key owned by someone else: its spans become the owner's "
    "sessions. Make it your own, or ask an admin."
)


def _snapshot(key: IngestKey) -> dict[str, Any]:
    return {
        "name": key.name,
        "project": key.project,
        "owner": key.owner.get_username(),
        "prefix": key.prefix,
        "revoked": key.revoked_at is not None,
    }


def ingest_key_create(
    *, name: str, project: str, owner: User, actor: User | None
) -> tuple[IngestKey, str]:
    """A new key and its secret text — the only time the secret exists outside the sender.

    Its spans become ``owner``'s sessions, so a key for someone else is an admin's to make
    (a superuser, or ``actor`` ``None``: the shell): an operator makes keys of their own.
    Raises ``ValidationError`` naming the field."""
    if actor is not None and not getattr(actor, "is_superuser", False) and owner.pk != actor.pk:
        raise ValidationError({"owner": OWN_KEYS_ONLY})
    name, project = name.strip(), project.strip()
    if not name:
        raise ValidationError({"name": "A key needs a name."})
    if not project:
        raise ValidationError({"project": "A key needs a project (its sessions' app name)."})
    raw, prefix, hashed = secret_make(KEY_PREFIX)
    key = IngestKey(
        name=name[:100],
        project=project[:128],
        owner=owner,
        prefix=prefix,
        key_hash=hashed,
        created_by=actor,
    )
    key.full_clean(exclude=["prefix", "key_hash"])
    with transaction.atomic():
        key.save()
        audit_record(
            actor=actor,
            action="ingest_key.create",
            target_type="ingest_key",
            target_id=str(key.pk),
            after=_snapshot(key),
        )
    return key, raw


def ingest_key_revoke(*, key: IngestKey, actor: User | None, reason: str = "") -> IngestKey:
    """Refuse ``key`` from now on (already revoked: nothing changes, nothing is recorded)."""
    with transaction.atomic():
        key = IngestKey.objects.select_for_update().get(pk=key.pk)
        if key.revoked_at is not None:
            return key
        before = _snapshot(key)
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor,
            action="ingest_key.revoke",
            target_type="ingest_key",
            target_id=str(key.pk),
            before=before,
            after=_snapshot(key),
            reason=reason,
        )
    return key


# Read at every export: built once (``core.prepared``).
_LIVE_KEY: PreparedQuery[IngestKey] = PreparedQuery(
    lambda prefix: (
        IngestKey.objects.select_related("owner")
        .filter(prefix=prefix, revoked_at__isnull=True)
        .order_by("pk")[:1]
    )
)


def ingest_key_check(raw: str) -> IngestKey | None:
    """The active key whose secret is ``raw``, or ``None`` (unknown, malformed, revoked)."""
    if not secret_shape_ok(raw, KEY_PREFIX):
        return None
    key = next(iter(_LIVE_KEY.rows(raw[:PREFIX_CHARS])), None)
    if key is None or not secret_matches(key.key_hash, raw):
        return None
    if not key.owner.is_active:
        return None
    return key


def ingest_key_used(key: IngestKey) -> None:
    """Note that ``key`` was used (at most once a minute per key, to spare the database)."""
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        IngestKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
