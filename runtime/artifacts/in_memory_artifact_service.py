"""An artifact store in process memory: for tests, scripts and the examples."""

from __future__ import annotations

import threading

from google.genai import types

from runtime.artifacts.base_artifact_service import (
    BaseArtifactService,
    is_user_scoped,
    validate_filename,
)

# (app, user, session id or None for user-scoped, filename)
_Key = tuple[str, str, str | None, str]


class InMemoryArtifactService(BaseArtifactService):
    """Keeps every version of every artifact in a dict guarded by one lock.

    Parts are deep-copied on the way in and on the way out, so neither the caller's later
    changes to a saved part nor changes to a loaded part affect what is stored. Nothing
    survives the process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._artifacts: dict[_Key, list[types.Part]] = {}

    @staticmethod
    def _key(app_name: str, user_id: str, session_id: str, filename: str) -> _Key:
        validate_filename(filename)
        scope = None if is_user_scoped(filename) else session_id
        return (app_name, user_id, scope, filename)

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        artifact: types.Part,
    ) -> int:
        key = self._key(app_name, user_id, session_id, filename)
        stored = artifact.model_copy(deep=True)
        with self._lock:
            versions = self._artifacts.setdefault(key, [])
            versions.append(stored)
            return len(versions) - 1

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        key = self._key(app_name, user_id, session_id, filename)
        with self._lock:
            versions = self._artifacts.get(key)
            if not versions:
                return None
            if version is None:
                part = versions[-1]
            elif 0 <= version < len(versions):
                part = versions[version]
            else:
                return None
        return part.model_copy(deep=True)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        with self._lock:
            names = [
                filename
                for (app, user, scope, filename), versions in self._artifacts.items()
                if versions
                and app == app_name
                and user == user_id
                and (scope is None or scope == session_id)
            ]
        return sorted(names)

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        key = self._key(app_name, user_id, session_id, filename)
        with self._lock:
            self._artifacts.pop(key, None)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        key = self._key(app_name, user_id, session_id, filename)
        with self._lock:
            return list(range(len(self._artifacts.get(key, []))))
