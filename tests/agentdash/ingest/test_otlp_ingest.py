"""OTLP/HTTP ingest at /v1/traces: bodies from the official SDK encoder (protobuf), the same
in OTLP/JSON, gzip; spans grouped into the key owner's sessions by the conversation the
sender named, mapped onto agent/model/tool; pieces in any order converge; keys, limits and
bad input answer as the OTLP specification says."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.ingest.keys import ingest_key_create, ingest_key_revoke
from agentdash.ingest.limits import limiter, sessions_limiter
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import (
    JSON,
    PROTOBUF,
    agent_run,
    gzipped,
    json_of,
    protobuf_of,
    recorded,
    request_of,
    span,
)

pytestmark = pytest.mark.django_db

T1 = "0af7651916cd43dd8448eb211c80319c"
T2 = "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    limiter.forget()
    sessions_limiter.forget()


def new_key(owner: User, project: str = "shop") -> str:
    return ingest_key_create(name="test", project=project, owner=owner, actor=None)[1]


def post(
    body: bytes,
    key: str | None,
    content_type: str = PROTOBUF,
    path: str = "/v1/traces",
    **headers: str,
) -> Any:
    extra = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
    extra.update({f"HTTP_{k.upper()}": v for k, v in headers.items()})
    return Client().post(path, data=body, content_type=content_type, **extra)


def partial(response: Any) -> tuple[int, str]:
    """(rejected spans, error message) of a 200 answer, read in its own encoding."""
    assert response.status_code == 200, response.content
    answer = ExportTraceServiceResponse()
    if response["Content-Type"] == PROTOBUF:
        answer.ParseFromString(response.content)
    else:
        from google.protobuf import json_format

        json_format.Parse(response.content, answer)
    return answer.partial_success.rejected_spans, answer.partial_success.error_message


def status_message(response: Any) -> str:
    status = status_pb2.Status()
    if response["Content-Type"] == PROTOBUF:
        status.ParseFromString(response.content)
    else:
        from google.protobuf import json_format

        json_format.Parse(response.content, status)
    return status.message


def status_code(response: Any) -> int:
    status = status_pb2.Status()
    if response["Content-Type"] == PROTOBUF:
        status.ParseFromString(response.content)
    else:
        from google.protobuf import json_format

        json_format.Parse(response.content, status)
    return status.code


def spans_of(session_id: str) -> dict[str, Span]:
    return {s.name: s for s in Span.objects.filter(session_id=session_id)}


def test_an_sdk_export_becomes_the_owners_session_with_agent_model_and_tool(alice: User) -> None:
    with recorded() as (tracer, finished):
        agent_run(tracer, "conv-42")
        body = protobuf_of(finished())
    response = post(body, new_key(alice))
    assert partial(response) == (0, "")
    session = AgentSession.objects.get()
    assert session.pk == session_id_for(IngestKey.objects.get(), "conv-42")
    assert (session.owner, session.app_name, session.user_id) == (alice, "shop", str(alice.pk))
    assert session.title == "shop · conv-42"
    found = spans_of(session.pk)
    kinds = {name: s.attributes.get("agentdash.span.kind") for name, s in found.items()}
    assert kinds == {
        "invoke_agent shopper": "agent",
        "chat gemini-2.5-flash": "model",
        "execute_tool find_product": "tool",
    }
    assert found["invoke_agent shopper"].attributes["gen_ai.agent.name"] == "shopper"
    assert found["execute_tool find_product"].attributes["gen_ai.tool.name"] == "find_product"
    model = found["chat gemini-2.5-flash"]
    assert (model.tokens_in, model.tokens_out, model.usage_model) == (120, 30, "gemini-2.5-flash")
    assert model.parent_span_id == found["invoke_agent shopper"].span_id
    assert all(s.end_time for s in found.values())
    assert found["chat gemini-2.5-flash"].attributes["service.name"] == "shop"
    # every span is a change of the session: a live page gets them
    refs = set(SessionChange.objects.filter(session=session).values_list("ref", flat=True))
    assert refs == {f"{s.trace_id}:{s.span_id}" for s in found.values()}


@pytest.mark.parametrize("gzip_it", [False, True])
def test_otlp_json_and_gzip_store_the_same(alice: User, gzip_it: bool) -> None:
    with recorded() as (tracer, finished):
        agent_run(tracer, "conv-json")
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        body = json_of(encode_spans(finished()))
    if gzip_it:
        response = post(gzipped(body), new_key(alice), JSON, content_encoding="gzip")
    else:
        response = post(body, new_key(alice), JSON)
    assert response["Content-Type"] == JSON
    assert partial(response) == (0, "")
    assert json.loads(response.content) == {}  # nothing to say: no partial_success
    session = AgentSession.objects.get()
    assert set(spans_of(session.pk)) == {
        "invoke_agent shopper",
        "chat gemini-2.5-flash",
        "execute_tool find_product",
    }


def test_the_langfuse_path_and_basic_auth_are_taken(alice: User) -> None:
    key = new_key(alice)
    basic = base64.b64encode(f"pk-lf-anything:{key}".encode()).decode()
    body = request_of(span(T1, "00f067aa0ba902b7", "root")).SerializeToString()
    response = Client().post(
        "/api/public/otel/v1/traces",
        data=body,
        content_type=PROTOBUF,
        HTTP_AUTHORIZATION=f"Basic {basic}",
    )
    assert partial(response) == (0, "")
    assert Span.objects.filter(trace_id=T1).count() == 1


def test_children_first_then_the_root_naming_the_conversation_converge(alice: User) -> None:
    key = new_key(alice)
    child = span(T1, "00000000000000b1", "execute_tool lookup", parent="00000000000000a1")
    grandchild = span(T1, "00000000000000c1", "chat m", parent="00000000000000b1")
    assert partial(post(request_of(grandchild, child).SerializeToString(), key)) == (0, "")
    (waiting,) = AgentSession.objects.all()
    assert waiting.title.startswith("shop · trace ")
    root = span(T1, "00000000000000a1", "invoke_agent helper", gen_ai__conversation__id="c-7")
    assert partial(post(request_of(root).SerializeToString(), key)) == (0, "")
    (session,) = AgentSession.objects.all()  # the trace's own session is gone
    assert session.pk == session_id_for(IngestKey.objects.get(), "c-7")
    found = spans_of(session.pk)
    assert set(found) == {"execute_tool lookup", "chat m", "invoke_agent helper"}
    seqs = sorted(SessionChange.objects.filter(session=session).values_list("seq", flat=True))
    assert len(seqs) == 3 and seqs == list(range(seqs[0], seqs[0] + 3))
    # A later piece of the same trace, naming nothing, joins it.
    late = span(T1, "00000000000000d1", "execute_tool more", parent="00000000000000a1")
    post(request_of(late).SerializeToString(), key)
    assert set(spans_of(session.pk)) == {*found, "execute_tool more"}


def test_the_same_span_twice_and_a_start_after_its_end_keep_the_end(alice: User) -> None:
    key = new_key(alice)
    ended = span(T1, "00000000000000a1", "invoke_agent a", end=1_700_000_005_000_000_000)
    started = span(T1, "00000000000000a1", "invoke_agent a", end=None)
    post(request_of(ended, ended).SerializeToString(), key)
    # An exporter's retry of what was stored is taken as it is: not "rejected", no error
    # span (it was answered "could not be stored" and an error span stood in each one's place).
    assert partial(post(request_of(ended).SerializeToString(), key)) == (0, "")
    post(request_of(started).SerializeToString(), key)
    (stored,) = Span.objects.all()
    assert stored.end_time == 1_700_000_005_000_000_000


def test_a_span_sent_when_it_starts_then_when_it_ends(alice: User) -> None:
    key = new_key(alice)
    post(
        request_of(span(T1, "00000000000000a1", "invoke_agent a", end=None)).SerializeToString(),
        key,
    )
    assert Span.objects.get().end_time is None
    post(request_of(span(T1, "00000000000000a1", "invoke_agent a")).SerializeToString(), key)
    assert Span.objects.get().end_time == 1_700_000_001_000_000_000


def test_openinference_attributes_map_onto_the_same_kinds_and_tokens(alice: User) -> None:
    key = new_key(alice)
    spans = [
        span(T2, "00000000000000a1", "AgentExecutor", openinference__span__kind="CHAIN",
             session__id="oi-1"),
        span(T2, "00000000000000a2", "ChatOpenAI", parent="00000000000000a1",
             openinference__span__kind="LLM", llm__model_name="gpt-4o",
             llm__token_count__prompt=50, llm__token_count__completion=7),
        span(T2, "00000000000000a3", "search", parent="00000000000000a1",
             openinference__span__kind="TOOL", tool__name="search",
             input__value='{"q": "tea"}', output__value="green tea"),
    ]  # fmt: skip
    assert partial(post(request_of(*spans).SerializeToString(), key)) == (0, "")
    session = AgentSession.objects.get()
    assert session.pk == session_id_for(IngestKey.objects.get(), "oi-1")
    found = spans_of(session.pk)
    assert found["AgentExecutor"].attributes["agentdash.span.kind"] == "agent"
    llm = found["ChatOpenAI"]
    assert llm.attributes["agentdash.span.kind"] == "model"
    assert (llm.tokens_in, llm.tokens_out, llm.usage_model) == (50, 7, "gpt-4o")
    tool = found["search"].attributes
    assert tool["agentdash.span.kind"] == "tool" and tool["gen_ai.tool.name"] == "search"
    assert tool["gen_ai.tool.call.arguments"] == '{"q": "tea"}'
    assert tool["gen_ai.tool.call.result"] == "green tea"
    assert tool["llm.model_name" if False else "input.value"] == '{"q": "tea"}'  # kept as sent


def test_keys_are_required_checked_and_revocable(alice: User) -> None:
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    missing = post(body, None)
    assert missing.status_code == 401 and "Bearer" in missing["WWW-Authenticate"]
    assert "no ingest key" in status_message(missing)
    assert status_code(missing) == 16  # google.rpc UNAUTHENTICATED
    assert post(body, "agd_not_a_real_key_at_all_000000").status_code == 401
    key = new_key(alice)
    assert post(body, key).status_code == 200
    ingest_key_revoke(key=IngestKey.objects.get(), actor=None)
    refused = post(body, key)
    assert refused.status_code == 401 and "revoked" in status_message(refused)
    assert Span.objects.count() == 1


def test_a_key_cannot_write_another_owners_spans_or_sessions(alice: User, bob: User) -> None:
    mine = request_of(span(T1, "00000000000000a1", "invoke_agent a", gen_ai__conversation__id="c"))
    assert partial(post(mine.SerializeToString(), new_key(alice))) == (0, "")
    forged = request_of(
        span(T1, "00000000000000a1", "forged", gen_ai__conversation__id="c"),
        span(T1, "00000000000000a2", "bob's own", gen_ai__conversation__id="c"),
    )
    rejected, message = partial(post(forged.SerializeToString(), new_key(bob)))
    assert rejected == 1 and "another sender's" in message
    assert Span.objects.get(span_id="00000000000000a1").name == "invoke_agent a"
    bobs = Span.objects.get(span_id="00000000000000a2").session
    assert bobs.owner == bob and bobs.pk != Span.objects.get(span_id="00000000000000a1").session_id
    # alice's session stays hers: bob's browser is not shown it
    client = Client()
    client.force_login(bob)
    alices = Span.objects.get(span_id="00000000000000a1").session_id
    assert client.get(f"/sessions/{alices}/").status_code == 404


def test_spans_the_runtime_stored_cannot_be_overwritten(alice: User) -> None:
    AgentSession.objects.create(
        id="runtime-session", app_name="shop", user_id=str(alice.pk), owner=alice,
        last_update_time=0,
    )  # fmt: skip
    Span.objects.create(
        trace_id=T1, span_id="00000000000000a1", name="ours", start_time=1,
        session_id="runtime-session",
    )  # fmt: skip
    rejected, _ = partial(
        post(request_of(span(T1, "00000000000000a1", "x")).SerializeToString(), new_key(alice))
    )
    assert rejected == 1 and Span.objects.get().name == "ours"


def test_each_export_touches_the_sessions_it_stores_in(alice: User) -> None:
    """The sessions list orders by the latest activity: an export touches each session it
    stores in — one its span is stored in already (sent again), too."""
    key = new_key(alice)
    first = span(T1, "00000000000000a1", "first", gen_ai__conversation__id="c1")
    post(request_of(first).SerializeToString(), key)
    post(request_of(span(T2, "00000000000000b1", "second", gen_ai__conversation__id="c2"))
         .SerializeToString(), key)  # fmt: skip
    one = Span.objects.get(span_id="00000000000000a1").session
    two = Span.objects.get(span_id="00000000000000b1").session
    assert two.last_update_time > one.last_update_time
    post(request_of(first).SerializeToString(), key)  # the same span again (a retry)
    one.refresh_from_db()
    assert one.last_update_time > two.last_update_time


def test_bad_spans_are_rejected_one_by_one(alice: User) -> None:
    good = span(T1, "00000000000000a1", "good")
    zero = span("0" * 32, "00000000000000a2", "zero trace")
    short = span(T1, "00000000000000a3", "short id")
    short.span_id = b"\x01\x02"
    rejected, message = partial(
        post(request_of(good, zero, short).SerializeToString(), new_key(alice))
    )
    assert rejected == 2
    assert "trace_id must be 16 bytes" in message and "span_id must be 8 bytes" in message
    assert list(Span.objects.values_list("name", flat=True)) == ["good"]


def test_long_and_hostile_values_are_cut_marked_and_stored_safely(
    alice: User, settings: Any
) -> None:
    settings.AGENTDASH = {"INGEST_MAX_VALUE_CHARS": 100}
    body = request_of(span(T1, "00000000000000a1", "HOSTILE", long="x" * 5000, hostile="HOSTILE"))
    # JSON can carry a NUL and a lone surrogate, escaped (protobuf cannot)
    document = json_of(body).replace(b'"HOSTILE"', b'"a\\u0000b\\ud800c"')
    assert partial(post(document, new_key(alice), JSON)) == (0, "")
    stored = Span.objects.get()
    assert stored.attributes["long"] == "x" * 100 + "…[cut]"
    assert stored.attributes["agentdash.ingest.truncated"] == ["long"]
    assert stored.name == stored.attributes["hostile"] == "a\ufffdb\ufffdc"
    assert stored.attributes["agentdash.storage.replaced"] >= 1  # the NUL, by the span store


@pytest.mark.parametrize(
    ("body", "content_type", "status", "says"),
    [
        (b"\x0a\xff\xff\xff", PROTOBUF, 400, "not a protobuf ExportTraceServiceRequest"),
        (b"{not json", JSON, 400, "not JSON"),
        (b"[1, 2]", JSON, 400, "not an object"),
        (
            json.dumps(
                {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}
            ).encode(),
            JSON,
            400,
            "resourceSpans[0].scopeSpans[0].spans[0].traceId is not hex",
        ),
        (b"[" * 100_000 + b"]" * 100_000, JSON, 400, ""),
        (json.dumps({"resourceSpans": "nope"}).encode(), JSON, 400, "not an OTLP"),
        (b"{}", "text/plain", 415, "is not OTLP"),
        # A form (even one a form check would refuse) is no OTLP body: the same Status.
        (b"a=1&b=%00", "application/x-www-form-urlencoded", 415, "is not OTLP"),
        (b"--x\r\n", "multipart/form-data; boundary=x", 415, "is not OTLP"),
    ],
)
def test_malformed_bodies_say_what_is_wrong(
    alice: User, body: bytes, content_type: str, status: int, says: str
) -> None:
    response = post(body, new_key(alice), content_type)
    assert response.status_code == status
    assert says in status_message(response)
    assert Span.objects.count() == 0


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (wire type 2)."""
    size, length = b"", len(payload)
    while True:
        byte = length & 0x7F
        length >>= 7
        size += bytes([byte | (0x80 if length else 0)])
        if not length:
            return bytes([number << 3 | 2]) + size + payload


def test_deeply_nested_protobuf_values_are_a_400(alice: User) -> None:
    # AnyValue.array_value (5) → ArrayValue.values (1) → AnyValue …, 200 deep: more than a
    # protobuf parser takes (the SDK cannot even build it, so it is written by hand).
    value = _field(1, b"deep")
    for _ in range(200):
        value = _field(5, _field(1, value))
    attribute = _field(1, b"deep") + _field(2, value)  # KeyValue
    spans = span(T1, "00000000000000a1", "deep").SerializeToString() + _field(9, attribute)
    body = _field(1, _field(2, _field(2, spans)))  # request → resource → scope → span
    response = post(body, new_key(alice))
    assert response.status_code == 400
    assert "not a protobuf ExportTraceServiceRequest" in status_message(response)
    assert Span.objects.count() == 0


def test_size_caps_before_and_after_gunzip(alice: User, settings: Any) -> None:
    settings.AGENTDASH = {"INGEST_MAX_BODY_BYTES": 10_000}
    key = new_key(alice)
    big = request_of(span(T1, "00000000000000a1", "x", filler="y" * 20_000)).SerializeToString()
    assert post(big, key).status_code == 413
    bomb = gzipped(big)
    assert len(bomb) < 10_000
    response = post(bomb, key, content_encoding="gzip")
    assert response.status_code == 413 and "uncompressed" in status_message(response)
    assert post(b"\x1f\x8b garbage", key, content_encoding="gzip").status_code == 400
    assert post(b"x", key, content_encoding="br").status_code == 415
    assert Span.objects.count() == 0


def test_a_key_past_its_rate_is_told_when_to_come_back(alice: User, settings: Any) -> None:
    settings.AGENTDASH = {"INGEST_RATE_PER_S": 0.01, "INGEST_BURST": 2}
    key = new_key(alice)
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    assert [post(body, key).status_code for _ in range(2)] == [200, 200]
    limited = post(body, key)
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    # another key is not held back by it
    assert post(body, new_key(alice)).status_code == 200


@pytest.mark.parametrize("content_type", [PROTOBUF, "application/json"])
def test_a_database_outage_is_a_503_status_to_retry_and_stores_nothing(
    alice: User, monkeypatch: pytest.MonkeyPatch, content_type: str
) -> None:
    """OTLP/HTTP: every 5xx carries a ``google.rpc.Status`` in the request's encoding; a 503
    with ``Retry-After`` is what the exporters retry."""
    from django.db import OperationalError

    from agentdash.ingest import receive

    def unreachable(**kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    key = new_key(alice)
    message = request_of(span(T1, "00000000000000a1", "x"))
    body = message.SerializeToString()
    if content_type != PROTOBUF:
        body = json_of(message)
    monkeypatch.setattr(receive, "spans_ingest", unreachable)
    answer = post(body, key, content_type=content_type)
    assert (answer.status_code, answer["Retry-After"]) == (503, "5")
    assert answer["Content-Type"] == content_type
    assert "unreachable" in status_message(answer)
    assert not Span.objects.exists()
    monkeypatch.undo()
    assert partial(post(body, key, content_type=content_type)) == (0, "")  # taken again


def test_only_post(alice: User) -> None:
    response = Client().get("/v1/traces", HTTP_AUTHORIZATION=f"Bearer {new_key(alice)}")
    assert response.status_code == 405 and response["Allow"] == "POST"


def test_search_and_token_totals_work_on_ingested_spans(alice: User) -> None:
    with recorded() as (tracer, finished):
        agent_run(tracer, "conv-find")
        body = protobuf_of(finished())
    post(body, new_key(alice))
    session = AgentSession.objects.get()
    client = Client()
    client.force_login(alice)
    found = client.get(f"/sessions/{session.pk}/spans/search/", {"q": '"query": "tea"'}).json()
    tool = Span.objects.get(name="execute_tool find_product")
    assert found["keys"] == [[tool.trace_id, tool.span_id]]
    usage = client.get(f"/sessions/{session.pk}/snapshot/").json()["usage"]
    assert (usage["input"], usage["output"], usage["calls"]) == (120, 30, 1)


def test_an_external_session_page_offers_no_message_box(alice: User) -> None:
    post(
        request_of(span(T1, "00000000000000a1", "invoke_agent a")).SerializeToString(),
        new_key(alice),
    )
    session = AgentSession.objects.get()
    assert session.is_external
    client = Client()
    client.force_login(alice)
    page = client.get(f"/sessions/{session.pk}/").content.decode()
    assert "runs elsewhere and reports over OpenTelemetry" in page
    assert '<form id="composer" class="composer" hidden>' in page


@pytest.mark.parametrize(
    ("start", "end", "says"),
    [
        (2**63, 2**63 + 5, "start_time_unix_nano is past 2^63 ns"),
        (2**64 - 1, 0, "start_time_unix_nano is past 2^63 ns"),
        (1_700_000_000_000_000_000, 2**63, "end_time_unix_nano is past 2^63 ns"),
        (1_700_000_000_000_000_000, 1_600_000_000_000_000_000, "end_time_unix_nano is before"),
    ],
)
def test_a_span_no_database_can_hold_is_counted_as_rejected(
    alice: User, start: int, end: int, says: str
) -> None:
    """Every span taken is stored or counted as rejected, with why: never answered 200 and
    dropped on the way."""
    bad = span(T1, "00000000000000b1", "bad", start=start, end=end or None)
    good = span(T1, "00000000000000b2", "good", gen_ai__conversation__id="conv-t")
    response = post(request_of(bad, good).SerializeToString(), new_key(alice))
    rejected, message = partial(response)
    assert rejected == 1 and says in message
    assert list(Span.objects.values_list("name", flat=True)) == ["good"]


def test_one_export_cannot_flood_its_owners_list_with_sessions(alice: User, settings: Any) -> None:
    """Each new conversation takes one of the key's new-session tokens: past the budget its
    spans are rejected, saying why; conversations that exist take none."""
    settings.AGENTDASH = {"INGEST_SESSIONS_PER_MIN": 3}
    key = new_key(alice)
    spans = [
        span(f"{i + 1:032x}", f"{i + 1:016x}", "turn", gen_ai__conversation__id=f"conv-{i}")
        for i in range(5)
    ]
    rejected, message = partial(post(request_of(*spans).SerializeToString(), key))
    assert rejected == 2 and "a new session past this key's 3 a minute" in message
    assert AgentSession.objects.count() == 3
    made = [int(t.rsplit("-", 1)[1]) for t in AgentSession.objects.values_list("title", flat=True)]
    again = [  # more turns of the sessions made: nothing new, nothing refused
        span(f"{i + 1:032x}", f"{i + 11:016x}", "turn 2", gen_ai__conversation__id=f"conv-{i}")
        for i in made
    ]
    assert partial(post(request_of(*again).SerializeToString(), key)) == (0, "")
    assert Span.objects.count() == 6
