"""The database artifact store: the in-memory store's tests, rerun, plus storage checks."""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from agentdash.agent_sessions.artifact_service import DjangoArtifactService
from agentdash.agent_sessions.models import StoredArtifact
from tests.runtime.artifacts import test_in_memory_artifact_service as shared

pytestmark = pytest.mark.django_db(transaction=True)

# Every test of the in-memory store, collected again here with the `service` fixture below.
for _name in dir(shared):
    if _name.startswith("test_"):
        globals()[_name] = getattr(shared, _name)


@pytest.fixture
def service() -> DjangoArtifactService:
    return DjangoArtifactService()


WHERE = {"app_name": "app", "user_id": "alice", "session_id": "s1"}


async def test_bytes_are_stored_as_base64_json_and_round_trip(service) -> None:
    data = bytes(range(256))
    part = types.Part.from_bytes(data=data, mime_type="application/octet-stream")
    await service.save_artifact(filename="blob.bin", artifact=part, **WHERE)
    stored = await StoredArtifact.objects.aget(filename="blob.bin")
    assert isinstance(stored.part["inline_data"]["data"], str)
    loaded = await service.load_artifact(filename="blob.bin", **WHERE)
    assert loaded == part and loaded.inline_data.data == data


async def test_user_files_are_stored_without_a_session(service) -> None:
    await service.save_artifact(filename="user:p.txt", artifact=types.Part(text="p"), **WHERE)
    stored = await StoredArtifact.objects.aget(filename="user:p.txt")
    assert (stored.session_id, stored.version) == ("", 0)


async def test_concurrent_saves_get_distinct_versions(service) -> None:
    saves = [
        service.save_artifact(filename="log.txt", artifact=types.Part(text=str(i)), **WHERE)
        for i in range(8)
    ]
    versions = await asyncio.gather(*saves)
    assert sorted(versions) == list(range(8))
    listed = await service.list_versions(filename="log.txt", **WHERE)
    assert listed == list(range(8))
