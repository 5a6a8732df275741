"""Fixtures for the Django session store's tests.

Threads and processes here share the test database; on SQLite that needs a file, not
pytest-django's default in-memory database (concurrent writers would fail with "database
table is locked" instead of queueing, and other processes could not see it at all).
``tests/conftest.py`` sets that up; ``test_concurrency`` checks it holds.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission

from agentdash.agent_sessions.session_service import DjangoSessionService


@pytest.fixture
def service() -> DjangoSessionService:
    return DjangoSessionService()


def _user_with(django_user_model: Any, username: str, *codenames: str) -> Any:
    user = django_user_model.objects.create_user(username, password="pw", is_staff=True)
    perms = Permission.objects.filter(
        content_type__app_label="agent_sessions", codename__in=codenames
    )
    user.user_permissions.add(*perms)
    return django_user_model.objects.get(pk=user.pk)  # fresh: no stale permission cache


@pytest.fixture
def operator(django_user_model: Any) -> Any:
    """A staff user who may see every session and edit state."""
    return _user_with(django_user_model, "olivia", "view_all_sessions", "edit_session_state")


@pytest.fixture
def viewer(django_user_model: Any) -> Any:
    """A staff user who may see every session but not edit state."""
    return _user_with(django_user_model, "victor", "view_all_sessions")
