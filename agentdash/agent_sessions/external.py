"""Sessions of agents that run elsewhere (their spans come over OTLP): the reads and writes
the ingest needs, so that only this app writes session rows. Their ids start with
:data:`~agentdash.agent_sessions.models.EXTERNAL_SESSION_PREFIX`."""

from __future__ import annotations

import time
from collections.abc import Collection

from django.db import IntegrityError, transaction

from agentdash.agent_sessions.models import EXTERNAL_SESSION_PREFIX, AgentSession
from agentdash.core.hygiene import text_storable


def sessions_existing(*, ids: Collection[str]) -> set[str]:
    """Which of ``ids`` are stored sessions."""
    return set(AgentSession.objects.filter(pk__in=ids).values_list("pk", flat=True))


def session_owners(*, ids: Collection[str]) -> dict[str, tuple[int | None, str]]:
    """Each stored session of ``ids`` → (its owner's id, its app name)."""
    rows = AgentSession.objects.filter(pk__in=ids).values_list("pk", "owner_id", "app_name")
    return {pk: (owner_id, app_name) for pk, owner_id, app_name in rows}


def external_session_ensure(
    *, session_id: str, app_name: str, owner_id: int, title: str, first_message: str
) -> None:
    """Make the session ``session_id`` of ``owner_id`` unless it exists (made meanwhile by
    another request of the same sender is fine). Titles are cut to what is shown and made
    storable."""
    try:
        with transaction.atomic():
            AgentSession.objects.create(
                id=session_id,
                app_name=app_name,
                user_id=str(owner_id),
                owner_id=owner_id,
                title=text_storable(title[:200])[0],
                first_message=text_storable(first_message[:500])[0],
                state={},
                initial_state={},
                last_update_time=time.time(),
            )
    except IntegrityError:
        pass


def sessions_touch(*, ids: Collection[str]) -> None:
    """``ids`` had activity now (the sessions list orders by it)."""
    if ids:
        AgentSession.objects.filter(pk__in=ids).update(last_update_time=time.time())


def external_sessions_delete(*, ids: Collection[str]) -> None:
    """Delete those of ``ids`` that are external sessions (their spans moved to another
    session); a session of the runtime's is never deleted here."""
    if not ids:  # Django's delete collects every related model's rows even for none
        return
    AgentSession.objects.filter(pk__in=ids, pk__startswith=EXTERNAL_SESSION_PREFIX).delete()
