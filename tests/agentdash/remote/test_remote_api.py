"""The controls API of processes that run elsewhere (``agentdash.remote``) and its client
(``agentdash.client``): a process registers with its app's ingest key, reads the switches that
apply to its agents — globally and per session, its own session ids mapped as ingest maps
them —, registers again when AgentDash forgot it, and keeps its last answer (all on before
one) when AgentDash is away. Bad input gets a clear error; nothing here trusts the sender."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agentdash.client import adk
from agentdash.client.control import Controls
from agentdash.controls.services import callback_setting_set
from agentdash.ingest.keys import ingest_key_create, ingest_key_revoke
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemoteProcess
from tests.agentdash.ingest.otlp_bodies import request_of, span
from tests.agentdash.ingest.test_otlp_ingest import partial, post

AGENTS = [
    {"name": "capitals", "callbacks": [{"slot": "before_model", "name": "count_calls"}],
     "tools": ["get_capital_city"]},
]  # fmt: skip


def new_key(owner: User, project: str = "capitals-app") -> str:
    return ingest_key_create(name="remote", project=project, owner=owner, actor=owner)[1]


def register(client: Client, key: str | None, body: Any) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(
        "/v1/agentdash/processes", data=data, content_type="application/json", **headers
    )


def controls(client: Client, key: str, token: str, *sessions: str, **body: Any) -> Any:
    return client.post(
        f"/v1/agentdash/processes/{token}/controls",
        data=json.dumps({"sessions": list(sessions), **body}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )


@pytest.mark.django_db
def test_a_process_registers_and_reads_its_switches(alice: User) -> None:
    client, key = Client(), new_key(alice)
    body = {"host": "box", "pid": 7, "root_agent": "capitals",
            "versions": {"google-adk": "2.13.0"}, "agents": AGENTS}  # fmt: skip
    answer = register(client, key, body)
    assert answer.status_code == 201
    token = answer.json()["process"]
    process = RemoteProcess.objects.get(token=token)
    assert (process.host, process.pid, process.key.owner) == ("box", 7, alice)
    assert controls(client, key, token).json() == {
        "switches": [],
        "edits": [],
        "waiting": [],
        "breakpoints": [],
        "answers": [],
    }
    # The session the app knows as "s1" is the one ingest made of its spans.
    sent = request_of(span("1" * 32, "1" * 16, "invoke_agent capitals",
                           gen_ai__conversation__id="s1"))  # fmt: skip
    assert partial(post(sent.SerializeToString(), key)) == (0, "")
    ingested = session_id_for(IngestKey.objects.get(), "s1")
    callback_setting_set(agent_name="capitals", callback_name="count_calls", enabled=False,
                         session_id=ingested, actor=alice)  # fmt: skip
    callback_setting_set(agent_name="capitals", callback_name="other", enabled=True, actor=alice)
    callback_setting_set(agent_name="someone_else", callback_name="x", enabled=False, actor=alice)
    found = controls(client, key, token, "s1", "s2").json()["switches"]
    assert sorted(found, key=lambda s: s["callback"]) == [
        {"agent": "capitals", "callback": "count_calls", "session": "s1", "enabled": False},
        {"agent": "capitals", "callback": "other", "session": None, "enabled": True},
    ]
    # Without naming s1, its switch is not sent.
    assert [s["callback"] for s in controls(client, key, token).json()["switches"]] == ["other"]


@pytest.mark.django_db
def test_keys_are_required_and_tokens_are_the_keys_own(alice: User, bob: User) -> None:
    client = Client()
    assert register(client, None, {"agents": AGENTS}).status_code == 401
    assert register(client, "agd_nope", {"agents": AGENTS}).status_code == 401
    key = new_key(alice)
    token = register(client, key, {"agents": AGENTS}).json()["process"]
    assert controls(client, new_key(bob), token).status_code == 404  # not bob's process
    assert controls(client, key, "0" * 32).status_code == 404
    ingest_key_revoke(key=IngestKey.objects.get(owner=alice), actor=alice)
    assert controls(client, key, token).status_code == 401
    assert client.get("/v1/agentdash/processes").status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"not json", "not JSON"),
        ([1, 2], "JSON object"),
        ({"agents": "x"}, "agents must be a list"),
        ({"agents": [{"name": ""}]}, "an agent must be a name"),
        ({"agents": [{"name": "a" * 500}]}, "an agent must be a name"),
        ({"agents": [{"name": "a", "callbacks": [{"slot": "during", "name": "f"}]}]}, "slot"),
        ({"agents": [{"name": "a", "callbacks": [{"slot": "before_tool"}]}]}, "a callback"),
        ({"agents": [{"name": "a"}] * 500}, "at most 200"),
        ({"versions": ["x"]}, "versions"),
    ],
)
def test_bad_registrations_say_what_is_wrong(alice: User, body: Any, said: str) -> None:
    answer = register(Client(), new_key(alice), body)
    assert answer.status_code == 400 and said in answer.json()["error"]["message"]
    assert not RemoteProcess.objects.exists()


@pytest.mark.django_db
def test_hostile_names_are_stored_as_text_and_huge_bodies_refused(alice: User) -> None:
    client, key = Client(), new_key(alice)
    hostile = {"name": "<img src=x onerror=alert(1)>\x00", "callbacks": [
        {"slot": "before_model", "name": "\ud800\x00<script>"}], "tools": ["t\x00"]}  # fmt: skip
    body = json.dumps({"agents": [hostile], "host": "h\x00" * 10, "root_agent": "r"})
    assert register(client, key, body).status_code == 201
    process = RemoteProcess.objects.get()
    assert "\x00" not in json.dumps(process.agents) + process.host
    assert register(client, key, b"{" + b" " * (2 * 1024 * 1024) + b"}").status_code == 413


@pytest.mark.django_db
def test_an_external_session_offers_its_apps_callbacks_to_operators(
    alice: User, operator_user: User
) -> None:
    client, key = Client(), new_key(alice)
    register(client, key, {"agents": AGENTS, "root_agent": "capitals"})
    sent = request_of(span("2" * 32, "2" * 16, "invoke_agent capitals",
                           gen_ai__conversation__id="s1"))  # fmt: skip
    post(sent.SerializeToString(), key)
    session_id = session_id_for(IngestKey.objects.get(), "s1")
    client.force_login(operator_user)
    offered = client.get(f"/sessions/{session_id}/snapshot/").json()["callbacks"]
    assert [(c["agent"], c["slot"], c["name"], c["enabled"]) for c in offered] == [
        ("capitals", "before_model", "count_calls", True)
    ]
    client.force_login(alice)  # not an operator: no switches
    assert "callbacks" not in client.get(f"/sessions/{session_id}/snapshot/").json()


# ── the client ─────────────────────────────────────────────────────────────────────────────
@pytest.mark.slow  # a live server of its own
@pytest.mark.django_db(transaction=True)
def test_the_client_obeys_and_registers_again_when_forgotten(live_server: Any, alice: User) -> None:
    key = new_key(alice)
    found = Controls(url=live_server.url, key=key, agents=AGENTS, root_agent="capitals",
                     poll_s=0.05).start()  # fmt: skip
    try:
        assert found.connected.wait(30)
        assert found.enabled(agent="capitals", callback="count_calls", session=None)
        callback_setting_set(agent_name="capitals", callback_name="count_calls",
                             enabled=False, actor=alice)  # fmt: skip
        asyncio.run(_until(lambda: not found.enabled(agent="capitals", callback="count_calls",
                                                     session=None)))  # fmt: skip
        first = found.token
        RemoteProcess.objects.all().delete()  # AgentDash forgot it (a database restored, say)
        asyncio.run(_until(lambda: RemoteProcess.objects.exists()))
        assert RemoteProcess.objects.get().token != first
    finally:
        found.stop()


def test_the_client_without_agentdash_keeps_everything_on_and_never_blocks() -> None:
    away = Controls(url="http://127.0.0.1:9", key="agd_x", agents=AGENTS, root_agent="capitals")
    away.start()
    try:
        assert not away.connected.wait(0.5)
        assert away.enabled(agent="capitals", callback="count_calls", session="s1")
    finally:
        away.stop()


async def _until(check: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await asyncio.to_thread(check):
        assert loop.time() < deadline, "gave up waiting"
        await asyncio.sleep(0.02)


class _Agent:
    """Just the attributes ``agentdash.client.adk`` reads of an ADK agent."""

    def __init__(self, name: str, **fields: Any) -> None:
        self.name, self.sub_agents, self.tools = name, fields.pop("sub_agents", []), []
        for slot, _ in adk.SLOTS:
            setattr(self, slot, fields.get(slot))


class _Switches(Controls):
    def __init__(self) -> None:
        super().__init__(url="http://unused", key="k", agents=[], root_agent="root")
        self.off: set[tuple[str, str]] = set()

    def enabled(self, *, agent: str, callback: str, session: str | None) -> bool:
        return (agent, callback) not in self.off


class _Context:
    class session:
        id = "s1"


def test_wrapped_callbacks_run_until_switched_off_sync_async_and_in_lists() -> None:
    calls: list[str] = []

    def log_model(callback_context: Any, llm_request: Any) -> str:
        calls.append("log_model")
        return "answered"

    async def audit(tool: Any, args: Any, tool_context: Any) -> str:
        calls.append("audit")
        return "checked"

    child = _Agent("child", before_tool_callback=[audit])
    root = _Agent("root", before_model_callback=log_model, sub_agents=[child])
    described = [
        {"name": "root", "callbacks": [{"slot": "before_model", "name": "log_model"}], "tools": []},
        {"name": "child", "callbacks": [{"slot": "before_tool", "name": "audit"}], "tools": []},
    ]
    assert adk.describe(root) == described
    switches = _Switches()
    adk.instrument(root, switches)
    adk.instrument(root, switches)  # a second time changes nothing
    assert adk.describe(root) == described  # the step hook is AgentDash's own: not listed
    # The step hook first, then the pause hook, then the app's (once each, however often
    # instrumented).
    step, pause, log = root.before_model_callback
    assert root.before_agent_callback is step  # where the app had none
    assert root.after_agent_callback is step
    assert pause.__name__ == "agentdash_model_pause"
    assert [h.__name__ for h in child.before_tool_callback[:1]] == ["agentdash_tool_pause"]
    assert log(callback_context=_Context(), llm_request=None) == "answered"
    audit_hook = child.before_tool_callback[1]
    tool_call = audit_hook(tool=None, args={}, tool_context=_Context())
    assert asyncio.run(tool_call) == "checked"
    switches.off = {("root", "log_model"), ("child", "audit")}
    assert log(callback_context=_Context(), llm_request=None) is None
    assert audit_hook(tool=None, args={}, tool_context=_Context()) is None
    assert calls == ["log_model", "audit"]  # each ran once: before it was switched off


@pytest.mark.django_db
def test_reported_states_are_mirrored_and_operators_edits_sent_until_applied(
    alice: User, operator_user: User
) -> None:
    from agentdash.agent_sessions.selectors import session_state_view
    from agentdash.agent_sessions.services import session_state_update

    client, key = Client(), new_key(alice)
    token = register(client, key, {"agents": AGENTS, "root_agent": "capitals"}).json()["process"]
    # Before AgentDash has the session (its spans are on their way): reported again later.
    early = controls(client, key, token, "s1", states={"s1": {"step": 1}}).json()
    assert early["waiting"] == ["s1"]
    sent = request_of(span("3" * 32, "3" * 16, "invoke_agent capitals",
                           gen_ai__conversation__id="s1"))  # fmt: skip
    post(sent.SerializeToString(), key)
    session_id = session_id_for(IngestKey.objects.get(), "s1")
    # An edit made before the process named the session is not this process's to apply.
    session_state_update(session_id=session_id, delta={"old": 1}, expected_version=0,
                         actor=operator_user, reason="before")  # fmt: skip
    states = {"s1": {"step": 2, "temp:scratch": "x", "user:tier": "gold"}}
    answer = controls(client, key, token, "s1", states=states).json()
    assert answer["waiting"] == [] and answer["edits"] == []
    view = session_state_view(session_id=session_id)
    assert view.state["step"] == 2 and view.state["user:tier"] == "gold"
    assert "temp:scratch" not in view.state
    # The same state again: nothing new is written.
    controls(client, key, token, "s1", states=states)
    assert session_state_view(session_id=session_id).version == view.version
    edit = session_state_update(session_id=session_id, delta={"city": "Oslo"},
                                expected_version=view.version, actor=operator_user,
                                reason="try Oslo")  # fmt: skip
    pending = controls(client, key, token, "s1").json()["edits"]
    assert pending == [{"id": edit.seq, "session": "s1", "delta": {"city": "Oslo"}}]
    assert controls(client, key, token, "s1").json()["edits"] == pending  # until applied
    done = controls(client, key, token, "s1", applied={"s1": edit.seq}).json()
    assert done["edits"] == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {"sessions": "s1"},
        {"sessions": [1]},
        {"states": ["x"]},
        {"states": {"s1": "not an object"}},
        {"applied": {"s1": "x"}},
        {"applied": {"s1": -1}},
    ],
)
def test_bad_control_requests_say_what_is_wrong(alice: User, body: dict[str, Any]) -> None:
    client, key = Client(), new_key(alice)
    token = register(client, key, {"agents": AGENTS}).json()["process"]
    answer = client.post(
        f"/v1/agentdash/processes/{token}/controls",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert answer.status_code == 400 and answer.json()["error"]["message"]


def test_a_step_applies_pending_edits_once_and_keeps_the_state_to_report() -> None:
    found = Controls(url="http://unused", key="k", agents=[], root_agent="root")
    found._edits = {"s1": [
        {"id": 7, "session": "s1", "delta": {"city": "Oslo"}},
        {"id": 5, "session": "s1", "delta": {"city": "Rome", "n": 1}},
    ]}  # fmt: skip
    state: dict[str, Any] = {"n": 0}
    assert found.step(session="s1", state=dict(state), apply=state.__setitem__) == 2
    assert state == {"n": 1, "city": "Oslo"}  # oldest first: the later edit wins
    assert json.loads(found._states["s1"]) == {"n": 1, "city": "Oslo"}
    assert found.step(session="s1", state=dict(state), apply=state.__setitem__) == 0


@pytest.mark.django_db
def test_an_app_named_operator_cannot_pass_its_state_for_an_operators_edit(alice: User) -> None:
    from agentdash.agent_sessions.models import SessionEvent

    client, key = Client(), new_key(alice)
    token = register(client, key, {"agents": AGENTS, "root_agent": "operator"}).json()["process"]
    sent = request_of(span("4" * 32, "4" * 16, "invoke_agent x", gen_ai__conversation__id="s1"))
    post(sent.SerializeToString(), key)
    controls(client, key, token, "s1")  # names the session: edits start after what is there
    controls(client, key, token, "s1", states={"s1": {"city": "Rome"}})
    session_id = session_id_for(IngestKey.objects.get(), "s1")
    authors = set(
        SessionEvent.objects.filter(session_id=session_id).values_list("author", flat=True)
    )
    assert "operator" not in authors and "operator (app)" in authors
    assert controls(client, key, token, "s1").json()["edits"] == []


@pytest.mark.django_db
def test_operators_see_which_processes_of_the_app_are_connected(
    alice: User, operator_user: User
) -> None:
    client, key = Client(), new_key(alice)
    sent = request_of(span("5" * 32, "5" * 16, "invoke_agent x", gen_ai__conversation__id="s1"))
    post(sent.SerializeToString(), key)
    session_id = session_id_for(IngestKey.objects.get(), "s1")
    client.force_login(operator_user)
    page = client.get(f"/sessions/{session_id}/").content.decode()
    assert "No process of this app has connected" in page
    register(client, key, {"agents": AGENTS, "root_agent": "capitals", "pid": 4242,
                           "host": "<b>box</b>", "versions": {"google-adk": "2.13.0"}})  # fmt: skip
    page = client.get(f"/sessions/{session_id}/").content.decode()
    assert 'data-connected="true"' in page and "(pid 4242)" in page
    assert "&lt;b&gt;box&lt;/b&gt;" in page and "<b>box</b>" not in page  # text, escaped
    assert "google-adk 2.13.0" in page
    client.force_login(alice)  # the owner, not an operator: no controls at all
    assert "Processes of this app" not in client.get(f"/sessions/{session_id}/").content.decode()
