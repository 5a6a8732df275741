"""The contract every artifact store implements."""

from __future__ import annotations

import abc

from google.genai import types

USER_PREFIX = "user:"
"""Filenames with this prefix belong to the (app, user) pair and are shared by its sessions."""


def is_user_scoped(filename: str) -> bool:
    """True when ``filename`` is shared by all of the user's sessions (``user:`` prefix)."""
    return filename.startswith(USER_PREFIX)


def validate_filename(filename: str) -> None:
    """Raise :class:`ValueError` unless ``filename`` is a plain artifact name.

    Names are shown to operators and may end up in URLs, so they stay simple: not empty (nor
    just ``user:``), no ``/`` or ``\\``, no ``..``, no control characters.
    """
    if not isinstance(filename, str):
        raise ValueError(f"artifact filename must be a string, got {type(filename).__name__}")
    bare = filename.removeprefix(USER_PREFIX)
    if not bare.strip():
        raise ValueError(f"artifact filename must not be empty, got {filename!r}")
    if "/" in filename or "\\" in filename:
        raise ValueError(
            f"artifact filename must not contain '/' or '\\', got {filename!r}; "
            "use a plain name such as 'report.pdf'"
        )
    if ".." in filename:
        raise ValueError(f"artifact filename must not contain '..', got {filename!r}")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in filename):
        raise ValueError(f"artifact filename must not contain control characters: {filename!r}")


class BaseArtifactService(abc.ABC):
    """Stores versioned files (``types.Part`` values) produced or consumed by agents.

    Methods are async, as in ADK. An artifact is addressed by app, user, session and filename;
    a filename starting with ``user:`` is addressed by app and user only, so every session of
    that user sees the same file. Each save adds a new version, numbered from 0; older
    versions stay loadable until the artifact is deleted.

    Every method that takes a ``filename`` checks it with :func:`validate_filename` and raises
    :class:`ValueError` for an empty or path-like name.
    """

    @abc.abstractmethod
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        artifact: types.Part,
    ) -> int:
        """Store ``artifact`` as the newest version of ``filename``; return that version
        (0 for the first save). The store keeps its own copy: later changes to ``artifact``
        change nothing stored."""

    @abc.abstractmethod
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        """The given version of ``filename`` (the newest when ``version`` is ``None``), or
        ``None`` when the artifact or that version does not exist."""

    @abc.abstractmethod
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        """The filenames visible from the session, sorted: its own plus the user's ``user:``
        files."""

    @abc.abstractmethod
    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        """Delete every version of ``filename``; a missing artifact is not an error. A later
        save starts again at version 0."""

    @abc.abstractmethod
    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        """The stored versions of ``filename`` in ascending order; ``[]`` when there is none."""
