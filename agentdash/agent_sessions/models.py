"""Sessions, their events and state, stored for the runtime's session service."""

from __future__ import annotations

from django.conf import settings
from django.db import models

EXTERNAL_SESSION_PREFIX = "otlp-"
"""The ids of sessions made by OTLP ingest from an outside agent's spans begin so."""


class AgentSession(models.Model):
    """A runtime ``Session``. ``state`` holds the session's own keys only (``app:`` and
    ``user:`` keys live in :class:`AppState` / :class:`UserState`; ``temp:`` keys are never
    stored). ``version`` goes up by one with every change: writers compare-and-swap on it."""

    id = models.CharField(primary_key=True, max_length=128)
    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128, help_text="The runtime's user id.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="agent_sessions",
        help_text="The dashboard user this session belongs to, if any.",
    )
    title = models.CharField(
        max_length=200,
        blank=True,
        help_text="What the sessions list calls it: its first message shortened, or what its "
        "owner renamed it to (agentdash.agent_sessions.titles).",
    )
    first_message = models.CharField(
        max_length=500,
        blank=True,
        default="",
        # Also the database's own default: rows inserted by code that does not know the column
        # (a process of the previous release during a rolling deploy, a migration's
        # historical model) still store.
        db_default="",
        help_text="The start of the first user message, on one line: searched by the "
        "sessions list.",
    )
    state = models.JSONField(default=dict, blank=True)
    initial_state = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text="The session's own keys at creation, before any event: a fork replays its "
        "events' deltas over them (agentdash.agent_sessions.forks). None for sessions stored "
        "before it was kept.",
    )
    version = models.PositiveBigIntegerField(default=0)
    event_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    last_update_time = models.FloatField(help_text="Unix time of the last change.")
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="forks",
        help_text="The session this one was forked from (agentdash.agent_sessions.forks).",
    )
    forked_from_event = models.CharField(
        max_length=128,
        blank=True,
        default="",
        db_default="",  # as first_message: rows of code that does not know the column store
        help_text="The id of the parent's event this fork was made at (its last copied event).",
    )
    forked_from_seq = models.PositiveIntegerField(
        null=True, blank=True, help_text="That event's position in the parent (from 1)."
    )

    class Meta:
        indexes = [
            models.Index(fields=["app_name", "user_id", "-last_update_time"]),
            # The sessions list, newest activity first, paged by (last_update_time, id):
            # everyone's (operators), one owner's, one agent's.
            models.Index(fields=["-last_update_time", "-id"], name="session_recent"),
            models.Index(fields=["owner", "-last_update_time", "-id"], name="session_owner_recent"),
            models.Index(
                fields=["app_name", "-last_update_time", "-id"], name="session_app_recent"
            ),
        ]
        permissions = [
            ("view_all_sessions", "Can see every user's sessions and runs"),
            ("edit_session_state", "Can edit a session's state"),
        ]

    def __str__(self) -> str:
        return self.title or f"{self.app_name}/{self.user_id}/{self.id}"

    @property
    def is_external(self) -> bool:
        """Its agent runs elsewhere and sends spans over OTLP (agentdash.ingest): nothing
        here can run it, so the page offers no message box."""
        return self.id.startswith(EXTERNAL_SESSION_PREFIX)


OPERATOR_AUTHOR = "operator"
"""The author of an operator's state edit (an event of its own)."""


class SessionEvent(models.Model):
    """One stored runtime ``Event``, whole, in session order (``seq`` from 1)."""

    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    event_id = models.CharField(max_length=128)
    invocation_id = models.CharField(max_length=128, blank=True)
    author = models.CharField(max_length=128)
    timestamp = models.FloatField()
    version = models.PositiveBigIntegerField(
        help_text="The session version this event's state delta produced."
    )
    state_delta_keys = models.JSONField(
        default=list, blank=True, help_text="The stored keys of the event's state delta."
    )
    data = models.JSONField(help_text="The event as the runtime serializes it.")
    html = models.TextField(
        blank=True,
        default="",
        help_text="The event's text, rendered safe (core.rendering) once, when it was stored.",
    )

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="event_seq_unique"),
            models.UniqueConstraint(fields=["session", "event_id"], name="event_id_unique"),
        ]
        indexes = [
            models.Index(fields=["session", "invocation_id"]),
            models.Index(fields=["session", "author"]),
            models.Index(fields=["session", "version"]),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.author}"


class AppState(models.Model):
    """``app:`` keys, shared by every session of an app. ``version`` goes up by one with every
    change (writers compare-and-swap on it); ``key_versions`` maps each key to the version
    that last changed it, so an operator edit can tell whether *its* keys moved."""

    app_name = models.CharField(max_length=128, unique=True)
    state = models.JSONField(default=dict, blank=True)
    version = models.PositiveBigIntegerField(default=0)
    key_versions = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"app state of {self.app_name}"


class UserState(models.Model):
    """``user:`` keys, shared by one user's sessions of an app; versioned like
    :class:`AppState`."""

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    state = models.JSONField(default=dict, blank=True)
    version = models.PositiveBigIntegerField(default=0)
    key_versions = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["app_name", "user_id"], name="user_state_unique")
        ]

    def __str__(self) -> str:
        return f"user state of {self.app_name}/{self.user_id}"


class StoredArtifact(models.Model):
    """One version of an artifact. ``session_id`` is blank for ``user:`` files."""

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128, blank=True)
    filename = models.CharField(max_length=255)
    version = models.PositiveIntegerField()
    part = models.JSONField(help_text="The google.genai Part, serialized.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_id", "filename", "version"],
                name="artifact_version_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.filename} v{self.version}"


class MemoryRecord(models.Model):
    """Text of a past session's event, searchable by keyword."""

    app_name = models.CharField(max_length=128)
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128)
    author = models.CharField(max_length=128, blank=True)
    timestamp = models.FloatField()
    text = models.TextField()
    words = models.TextField(
        help_text="The text's distinct lower-cased words, space separated and space padded "
        "(' cake tea '), so a whole word matches with LIKE '% tea %'."
    )
    content = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["app_name", "user_id", "session_id"])]
