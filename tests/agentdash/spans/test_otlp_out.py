"""AgentDash's own spans copied to a team's collector (``spans.otlp_out``): what the standard
variables ask for, the resource, and real runs on the run host (the inline executor, as
daphne runs them) watched by a local collector stand-in that decodes what arrives."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider

from agentdash.agent_sessions.models import AgentSession
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from agentdash.spans import otlp_out
from agentdash.spans.otlp_out import Plan, agentdash_resource, otlp_out_plan
from tests.agentdash.otlp_collector import Collector, attributes
from tests.agentdash.redis_servers import shared_redis
from tests.agentdash.runs.conftest import run_ended, says
from tests.agentdash.runs.worker_harness import (
    Workers,
    ended,
    enqueue,
    new_session,
    submitting_to,
)

ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
GRPC_NOTE = (
    "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: AgentDash copies its spans over OTLP/HTTP only "
    "(opentelemetry-exporter-otlp-proto-grpc is not installed); not copying them. Set "
    "http/protobuf and the collector's HTTP address (port 4318)."
)


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``environ(NAME=value, ...)``: these OTEL_* variables and no other; the copy is
    uninstalled before and after (the pipeline's ``uninstall`` does it too)."""
    import os

    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    otlp_out.otlp_out_uninstall()

    def set_them(**variables: str) -> None:
        for name, value in variables.items():
            monkeypatch.setenv(name, value)

    yield set_them
    otlp_out.otlp_out_uninstall()


# ── What the variables ask ────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    ("variables", "plan"),
    [
        ({}, Plan(False)),
        ({ENDPOINT: ""}, Plan(False)),
        ({"OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, Plan(False)),
        ({ENDPOINT: "http://c:4318"}, Plan(True)),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, Plan(True)),
        ({ENDPOINT: "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, Plan(False)),
        ({ENDPOINT: "http://c:4318", "OTEL_TRACES_EXPORTER": "otlp,none"}, Plan(False)),
        ({ENDPOINT: "http://c:4318", "OTEL_SDK_DISABLED": "true"}, Plan(False)),
        ({ENDPOINT: "http://c:4318", "OTEL_TRACES_EXPORTER": "OTLP"}, Plan(True)),
        ({ENDPOINT: "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, Plan(True)),
        (
            {ENDPOINT: "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            Plan(False, GRPC_NOTE),
        ),
        (
            {
                ENDPOINT: "http://c:4318",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            },
            Plan(True),
        ),
    ],
)
def test_the_standard_variables_decide(variables: dict[str, str], plan: Plan) -> None:
    assert otlp_out_plan(variables) == plan


@pytest.mark.parametrize(
    ("variables", "words"),
    [
        (
            {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
            ("http/json", "sending http/protobuf"),
        ),
        ({"OTEL_TRACES_EXPORTER": "console"}, ("console", "not copying")),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, ("'thrift'", "not copying")),
    ],
)
def test_what_cannot_be_followed_is_said(variables: dict[str, str], words: tuple[str, ...]) -> None:
    plan = otlp_out_plan({ENDPOINT: "http://c:4318", **variables})
    assert plan.export == ("http/json" in words) and all(w in plan.note for w in words)


def test_grpc_is_refused_once_at_start(
    environ: Callable[..., None], caplog: pytest.LogCaptureFixture
) -> None:
    environ(OTEL_EXPORTER_OTLP_ENDPOINT="http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    provider = TracerProvider(shutdown_on_exit=False)
    with caplog.at_level(logging.INFO, logger=otlp_out.__name__):
        assert otlp_out.otlp_out_install(provider) is None
        assert otlp_out.otlp_out_install(provider) is None
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("ERROR", GRPC_NOTE)]
    assert otlp_out.OtlpOutSeat not in {
        type(p) for p in provider._active_span_processor._span_processors
    }


@pytest.mark.parametrize(
    ("variables", "name"),
    [
        ({}, "agentdash"),
        ({"OTEL_SERVICE_NAME": "shop"}, "shop"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "service.name=desk,team=ops"}, "desk"),
        (
            {"OTEL_RESOURCE_ATTRIBUTES": "service.name=desk,team=ops", "OTEL_SERVICE_NAME": "shop"},
            "shop",
        ),
    ],
)
def test_the_resource_names_the_service(
    environ: Callable[..., None], variables: dict[str, str], name: str
) -> None:
    environ(**{"OTEL_RESOURCE_ATTRIBUTES": "team=ops", **variables})
    found = agentdash_resource().attributes
    assert found["service.name"] == name and found["team"] == "ops"
    assert found["telemetry.sdk.name"] == "opentelemetry"


# ── Real runs ─────────────────────────────────────────────────────────────────────────────
@pytest.fixture
def collector() -> Iterator[Collector]:
    with Collector() as found:
        yield found


async def run_capital(register: Callable[..., None], host: Any) -> Run:
    """The capital demo agent (callbacks, a tool, two model calls) run on ``host``."""
    register()
    await host.astart(runs=True)
    session = await AgentSession.objects.acreate(
        id=uuid.uuid4().hex, app_name="capital_agent", user_id="u", last_update_time=time.time()
    )
    run = await arun_enqueue(
        session=session,
        agent_name="capital_agent",
        message=says("What is the capital of France?"),
        requested_by=None,
    )
    return await run_ended(run.pk)


def provider_flush() -> None:
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    assert provider.force_flush()


@pytest.mark.django_db(transaction=True)
async def test_a_runs_spans_reach_the_collector_with_their_gen_ai_attributes(
    environ: Callable[..., None],
    collector: Collector,
    register: Callable[..., None],
    inline: Any,
) -> None:
    environ(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_EXPORTER_OTLP_HEADERS="x-team=ops")
    run = await run_capital(register, inline)
    assert run.status == Run.Status.SUCCEEDED
    await asyncio.to_thread(provider_flush)

    trace_id = bytes.fromhex(run.trace_id)
    spans = [(s, attributes(s), r) for s, r in collector.spans() if s.trace_id == trace_id]
    assert all(r.path == "/v1/traces" for r in collector.received)
    assert collector.received[0].headers["x-team"] == "ops"  # the exporter read the rest
    assert all(s.end_time_unix_nano >= s.start_time_unix_nano > 0 for s, _, _ in spans)
    service = trace.get_tracer_provider().resource.attributes["service.name"]  # type: ignore[attr-defined]
    assert {r["service.name"] for _, _, r in spans} == {service}

    def of_kind(kind: str) -> list[dict[str, Any]]:
        return [a for _, a, _ in spans if a.get("agentdash.span.kind") == kind]

    (agent,) = of_kind("agent")
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.agent.name"] == "capital_agent"
    assert [m["gen_ai.operation.name"] for m in of_kind("model")] == ["generate_content"] * 2
    assert {m["gen_ai.request.model"] for m in of_kind("model")} == {"offline"}
    (tool,) = of_kind("tool")
    assert (tool["gen_ai.operation.name"], tool["gen_ai.tool.name"]) == (
        "execute_tool",
        "get_capital_city",
    )
    assert "gen_ai.tool.call.arguments" in tool and "gen_ai.tool.call.result" in tool
    hooks = {
        (c["agentdash.callback.name"], c["agentdash.callback.hook"]) for c in of_kind("callback")
    }
    assert {("add_disclaimer", "after_model"), ("redirect_canada", "before_tool")} <= hooks
    assert {a.get("gen_ai.conversation.id") for _, a, _ in spans} - {None} == {run.session_id}


@pytest.mark.django_db(transaction=True)
async def test_a_collector_that_hangs_never_holds_up_a_run(
    environ: Callable[..., None],
    collector: Collector,
    register: Callable[..., None],
    inline: Any,
) -> None:
    environ(
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        OTEL_BSP_SCHEDULE_DELAY="1",
        OTEL_BSP_MAX_QUEUE_SIZE="4",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE="1",
    )
    collector.hold()
    await inline.astart(runs=True)  # installs the copy
    trace.get_tracer("test").start_span("before the run").end()
    await asyncio.to_thread(collector.wait_for, lambda c: c.arrived, "an export")
    # The export thread now waits on the collector, and keeps waiting during the whole run.

    run = await run_capital(register, inline)

    assert run.status == Run.Status.SUCCEEDED
    assert (collector.arrived, collector.received) == (1, [])
    collector.release()
    await asyncio.to_thread(provider_flush)
    assert 1 < len(collector.spans()) <= 1 + 4  # what the bounded queue kept; the rest dropped


@pytest.mark.django_db(transaction=True)
async def test_with_the_exporter_set_to_none_nothing_is_sent(
    environ: Callable[..., None],
    collector: Collector,
    register: Callable[..., None],
    inline: Any,
) -> None:
    environ(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_TRACES_EXPORTER="none")
    run = await run_capital(register, inline)
    assert run.status == Run.Status.SUCCEEDED
    await asyncio.to_thread(provider_flush)
    assert collector.arrived == 0


@pytest.mark.django_db(transaction=True)
async def test_without_the_variables_nothing_is_exported(
    environ: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    register: Callable[..., None],
    inline: Any,
) -> None:
    environ(OTEL_SERVICE_NAME="shop", OTEL_EXPORTER_OTLP_HEADERS="a=b")
    exported: list[int] = []
    monkeypatch.setattr(OTLPSpanExporter, "export", lambda self, spans: exported.append(1))
    run = await run_capital(register, inline)
    assert run.status == Run.Status.SUCCEEDED
    await asyncio.to_thread(provider_flush)
    assert exported == [] and otlp_out._seat.processor is None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_celery_workers_spans_reach_the_collector_as_agentdash(
    collector: Collector, tmp_path: Path, settings: Any
) -> None:
    """A real worker process (``make worker``'s command): its provider is the one the live
    pipeline sets up, so its resource is ``agentdash_resource()``'s."""
    workers = Workers(shared_redis(db=14), tmp_path)
    for name in [n for n in workers.env if n.startswith("OTEL_")]:
        del workers.env[name]
    workers.env.update(OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_BSP_SCHEDULE_DELAY="50")
    try:
        with submitting_to(workers, settings):
            workers.start("w1")
            workers.ready("w1")
            done = ended(enqueue(new_session()), workers)
            assert done.status == Run.Status.SUCCEEDED, workers.logs()
            trace_id = bytes.fromhex(done.trace_id)

            def root(c: Collector) -> list[tuple[Any, dict[str, Any]]]:
                return [
                    (s, r) for s, r in c.spans() if s.trace_id == trace_id and not s.parent_span_id
                ]

            ((_, resource),) = collector.wait_for(root, "the run's root span")
    finally:
        workers.stop()
    assert resource["service.name"] == "agentdash"
    kinds = {attributes(s).get("agentdash.span.kind") for s, _ in collector.spans()}
    assert {"agent", "model", "tool", "callback"} <= kinds
