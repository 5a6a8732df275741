"""The runtime's artifact store, backed by the Django database (``StoredArtifact``)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, Q, QuerySet
from google.genai import types

from agentdash.agent_sessions.models import StoredArtifact
from agentdash.core.hygiene import storable
from agentdash.core.threads import in_worker_thread
from runtime.artifacts.base_artifact_service import (
    USER_PREFIX,
    BaseArtifactService,
    is_user_scoped,
    validate_filename,
)

_SAVE_ATTEMPTS = 10


def _where(app_name: str, user_id: str, session_id: str, filename: str) -> dict[str, str]:
    validate_filename(filename)
    scope = "" if is_user_scoped(filename) else session_id
    return {"app_name": app_name, "user_id": user_id, "session_id": scope, "filename": filename}


def _versions(where: dict[str, str]) -> QuerySet[StoredArtifact]:
    return StoredArtifact.objects.filter(**where)


class DjangoArtifactService(BaseArtifactService):
    """Every version of every artifact as a row; ``user:`` files have a blank session id.

    Parts are stored as ``Part.model_dump(mode="json")`` (bytes as base64) and rebuilt with
    ``Part.model_validate``, so a loaded part is always a fresh copy. Version numbers come
    from the unique constraint: two concurrent saves of one file cannot get the same number
    (the loser retries with the next one).
    """

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        artifact: types.Part,
    ) -> int:
        where = _where(app_name, user_id, session_id, filename)
        # What an agent saves is stored, never refused: NUL and lone surrogates in its text
        # become U+FFFD (core.hygiene), as in events.
        part, _ = storable(artifact.model_dump(mode="json", exclude_none=True))
        saved: int = await in_worker_thread(_save)(where, part)
        return saved

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        where = _where(app_name, user_id, session_id, filename)
        data = await in_worker_thread(_load)(where, version)
        return None if data is None else types.Part.model_validate(data)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        keys: list[str] = await in_worker_thread(_keys)(app_name, user_id, session_id)
        return keys

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        where = _where(app_name, user_id, session_id, filename)
        await in_worker_thread(_delete)(where)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        where = _where(app_name, user_id, session_id, filename)
        versions: list[int] = await in_worker_thread(_version_list)(where)
        return versions


def _save(where: dict[str, str], part: dict[str, Any]) -> int:
    for _ in range(_SAVE_ATTEMPTS):
        try:
            with transaction.atomic():
                newest = _versions(where).aggregate(newest=Max("version"))["newest"]
                version = 0 if newest is None else newest + 1
                StoredArtifact.objects.create(**where, version=version, part=part)
            return version
        except IntegrityError:
            continue  # a concurrent save took this number
    raise RuntimeError(f"could not save artifact {where['filename']!r}: too many concurrent saves")


def _load(where: dict[str, str], version: int | None) -> dict[str, Any] | None:
    versions = _versions(where)
    if version is None:
        versions = versions.order_by("-version")
    elif version < 0:
        return None
    else:
        versions = versions.filter(version=version)
    found: dict[str, Any] | None = versions.values_list("part", flat=True).first()
    return found


def _keys(app_name: str, user_id: str, session_id: str) -> list[str]:
    own = Q(session_id=session_id) & ~Q(filename__startswith=USER_PREFIX)
    shared = Q(session_id="", filename__startswith=USER_PREFIX)
    names = (
        StoredArtifact.objects.filter(own | shared, app_name=app_name, user_id=user_id)
        .values_list("filename", flat=True)
        .distinct()
    )
    return sorted(names)


def _delete(where: dict[str, str]) -> None:
    _versions(where).delete()


def _version_list(where: dict[str, str]) -> list[int]:
    return list(_versions(where).order_by("version").values_list("version", flat=True))
