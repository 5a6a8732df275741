"""A separate process appending events to one session: ``python -m`` this module with
``<database name> <session id> <writer number> <event count>``. Used by test_concurrency."""

from __future__ import annotations

import os
import sys


def main(database: str, session_id: str, writer: int, count: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")
    import django
    from django.conf import settings

    django.setup()
    # The test database, not the development one: set before the first connection opens.
    settings.DATABASES["default"]["NAME"] = database

    from agentdash.agent_sessions.session_service import DjangoSessionService
    from runtime.events import Event, EventActions

    service = DjangoSessionService()
    live = service.get_session(app_name="app", user_id="u", session_id=session_id)
    assert live is not None, "the test's session is not visible from this process"
    for i in range(count):
        delta = {f"p{writer}.{i}": i, f"user:p{writer}": i}
        service.append_event(
            live, Event(author=f"proc{writer}", actions=EventActions(state_delta=delta))
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
