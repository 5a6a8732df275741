"""The per-session change log: what changed, in which order (``seq``), and the counter that
gives out the seqs."""

from __future__ import annotations

from django.db import models


class SessionChange(models.Model):
    """The session's change log: every event (an operator's state edit is one), span version
    and run status change gets the next ``seq``; a reconnecting client asks for everything
    after the last it saw. ``ref`` names the row that changed; the app that owns that kind
    of row says how it becomes a change item (``agentdash.changes.items``)."""

    class Kind(models.TextChoices):
        EVENT = "event"
        SPAN = "span"
        RUN = "run"
        PAUSE = "pause"  # a remote app's step paused for a person (remote.RemotePause)
        SCORE = "score"  # a score given, replaced or taken back (scores.Score)

    session = models.ForeignKey(
        "agent_sessions.AgentSession",
        on_delete=models.CASCADE,
        related_name="changes",
        db_index=False,  # the unique (session, seq) index serves it
    )
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    ref = models.CharField(max_length=128, help_text="Event id, trace:span id or run id.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="change_seq_unique")]
        ordering = ["session", "seq"]

    def __str__(self) -> str:
        return f"{self.session_id}@{self.seq} {self.kind}"


class SessionSeq(models.Model):
    """The last change seq given out in a session. A row apart from the session's own, so
    that taking seqs — for an event, a run's status, a batch of spans — waits only for another
    writer's seqs (held from its taking to its commit), never for the session's other updates.
    """

    session = models.OneToOneField(
        "agent_sessions.AgentSession",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="+",
    )
    last_seq = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.session_id}@{self.last_seq}"
