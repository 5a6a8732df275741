import pytest
from google.genai import types

from runtime.artifacts import BaseArtifactService, InMemoryArtifactService

APP, USER, SESSION = "app", "alice", "s1"


def text(value: str) -> types.Part:
    return types.Part(text=value)


@pytest.fixture
def service() -> InMemoryArtifactService:
    return InMemoryArtifactService()


async def save(service: BaseArtifactService, filename: str, part: types.Part, **where: str) -> int:
    ids = {"app_name": APP, "user_id": USER, "session_id": SESSION, **where}
    return await service.save_artifact(filename=filename, artifact=part, **ids)


async def load(
    service: BaseArtifactService, filename: str, version: int | None = None, **where: str
):
    ids = {"app_name": APP, "user_id": USER, "session_id": SESSION, **where}
    return await service.load_artifact(filename=filename, version=version, **ids)


async def keys(service: BaseArtifactService, **where: str) -> list[str]:
    ids = {"app_name": APP, "user_id": USER, "session_id": SESSION, **where}
    return await service.list_artifact_keys(**ids)


async def test_versions_count_from_zero_and_latest_is_loaded_by_default(service):
    assert await save(service, "notes.txt", text("v0")) == 0
    assert await save(service, "notes.txt", text("v1")) == 1
    assert await save(service, "notes.txt", text("v2")) == 2
    assert await load(service, "notes.txt") == text("v2")


async def test_specific_versions_stay_loadable(service):
    for i in range(3):
        await save(service, "notes.txt", text(f"v{i}"))
    assert await load(service, "notes.txt", version=0) == text("v0")
    assert await load(service, "notes.txt", version=1) == text("v1")


async def test_binary_parts_round_trip(service):
    part = types.Part.from_bytes(data=b"\x89PNG...", mime_type="image/png")
    await save(service, "chart.png", part)
    loaded = await load(service, "chart.png")
    assert loaded is not None and loaded.inline_data is not None
    assert loaded.inline_data.data == b"\x89PNG..."
    assert loaded.inline_data.mime_type == "image/png"


async def test_missing_artifact_or_version_is_none(service):
    assert await load(service, "nope.txt") is None
    await save(service, "notes.txt", text("v0"))
    assert await load(service, "notes.txt", version=1) is None
    assert await load(service, "notes.txt", version=-1) is None


async def test_session_files_are_private_to_their_session(service):
    await save(service, "draft.txt", text("s1 draft"))
    assert await load(service, "draft.txt", session_id="s2") is None
    assert await keys(service, session_id="s2") == []
    await save(service, "draft.txt", text("s2 draft"), session_id="s2")
    assert await load(service, "draft.txt") == text("s1 draft")
    assert await load(service, "draft.txt", session_id="s2") == text("s2 draft")


async def test_user_files_are_shared_by_the_users_sessions(service):
    await save(service, "user:profile.json", text("{}"))
    assert await save(service, "user:profile.json", text('{"a": 1}'), session_id="s2") == 1
    assert await load(service, "user:profile.json", session_id="s3") == text('{"a": 1}')
    assert await keys(service, session_id="s3") == ["user:profile.json"]


async def test_user_files_are_not_shared_across_users_or_apps(service):
    await save(service, "user:profile.json", text("{}"))
    assert await load(service, "user:profile.json", user_id="bob") is None
    assert await load(service, "user:profile.json", app_name="other") is None
    assert await keys(service, user_id="bob") == []
    assert await keys(service, app_name="other") == []


async def test_keys_are_sorted_and_include_user_files(service):
    await save(service, "zeta.txt", text("z"))
    await save(service, "alpha.txt", text("a"))
    await save(service, "alpha.txt", text("a2"))
    await save(service, "user:beta.txt", text("b"))
    await save(service, "elsewhere.txt", text("x"), session_id="s2")
    assert await keys(service) == ["alpha.txt", "user:beta.txt", "zeta.txt"]


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "user:",
        "a/b.txt",
        "/etc/passwd",
        "a\\b.txt",
        "..",
        "../x",
        "x..y",
        "user:../x",
        "a\nb",
    ],
)
async def test_bad_names_are_rejected_everywhere(service, bad):
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, "filename": bad}
    with pytest.raises(ValueError, match="artifact filename"):
        await service.save_artifact(artifact=text("x"), **where)
    with pytest.raises(ValueError, match="artifact filename"):
        await service.load_artifact(**where)
    with pytest.raises(ValueError, match="artifact filename"):
        await service.list_versions(**where)
    with pytest.raises(ValueError, match="artifact filename"):
        await service.delete_artifact(**where)
    assert await keys(service) == []


async def test_saving_stores_a_copy(service):
    part = text("original")
    await save(service, "notes.txt", part)
    part.text = "mutated after save"
    assert await load(service, "notes.txt") == text("original")


async def test_loading_returns_a_copy(service):
    await save(service, "notes.txt", text("original"))
    loaded = await load(service, "notes.txt")
    assert loaded is not None
    loaded.text = "mutated after load"
    assert await load(service, "notes.txt") == text("original")


async def test_delete_removes_every_version_and_restarts_numbering(service):
    await save(service, "notes.txt", text("v0"))
    await save(service, "notes.txt", text("v1"))
    await save(service, "other.txt", text("keep"))
    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="notes.txt"
    )
    assert await load(service, "notes.txt") is None
    assert await load(service, "notes.txt", version=0) is None
    assert await keys(service) == ["other.txt"]
    assert await save(service, "notes.txt", text("again")) == 0


async def test_delete_of_a_missing_artifact_is_not_an_error(service):
    await service.delete_artifact(app_name=APP, user_id=USER, session_id=SESSION, filename="nope")


async def test_delete_user_file_from_any_session(service):
    await save(service, "user:prefs", text("p"))
    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id="s9", filename="user:prefs"
    )
    assert await load(service, "user:prefs") is None


async def test_list_versions(service):
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION, "filename": "notes.txt"}
    assert await service.list_versions(**where) == []
    for i in range(3):
        await save(service, "notes.txt", text(f"v{i}"))
    assert await service.list_versions(**where) == [0, 1, 2]
    assert await service.list_versions(**{**where, "session_id": "s2"}) == []
