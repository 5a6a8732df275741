"""Sessions stored before first messages were kept get them, and a title made of them when
they had none (migration agent_sessions 0004)."""

from __future__ import annotations

import pytest

from agentdash.agent_sessions.models import AgentSession
from tests.agentdash.migrations import migrated_back_to

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # migrates back and forth


def test_old_sessions_get_their_first_message_and_a_title() -> None:
    with migrated_back_to("agent_sessions", "0003_stored_strings_made_storable") as apps:
        session_model = apps.get_model("agent_sessions", "AgentSession")
        event_model = apps.get_model("agent_sessions", "SessionEvent")

        def session(session_id: str, title: str = "") -> object:
            return session_model.objects.create(
                id=session_id, app_name="app", user_id="u", title=title, last_update_time=0
            )

        def event(owner: object, seq: int, author: str, data: dict[str, object]) -> None:
            event_model.objects.create(
                session=owner, seq=seq, event_id=f"e{seq}", author=author, timestamp=0,
                version=seq, data=data,
            )  # fmt: skip

        def said(*texts: str) -> dict[str, object]:
            return {"content": {"role": "user", "parts": [{"text": t} for t in texts]}}

        untitled = session("untitled")
        event(untitled, 1, "agent", said("an agent spoke first"))
        event(untitled, 2, "user", said("What is the\ncapital", "of France?"))
        event(untitled, 3, "user", said("And Japan?"))
        titled = session("titled", title="Kept")
        event(titled, 1, "user", said("x " * 600))
        session("empty")
        odd = session("odd")
        event(odd, 1, "user", {"content": {"parts": [{"function_response": {}}, "junk"]}})

    rows = {s.id: (s.title, s.first_message) for s in AgentSession.objects.all()}
    assert rows["untitled"] == ("What is the capital of France?",) * 2
    title, first = rows["titled"]
    assert title == "Kept" and len(first) == 500 and first.endswith("…")
    assert rows["empty"] == ("", "") and rows["odd"] == ("", "")
