"""``/metrics``: Prometheus' text format, parsed by the official parser; counters that move by
exactly what was done (spans ingested and refused, model calls' durations and tokens), the
database's counts (runs by status and agent), and who may read it (loopback or the token)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from agentdash.agent_sessions.services import session_create
from agentdash.runs.models import Run
from agentdash.spans.services import span_upsert
from tests.agentdash.ingest.otlp_bodies import PROTOBUF
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post
from tests.agentdash.live_harness import ROOT, embedded_env, sqlite_prepared

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parents[1] / "ingest" / "fixtures"


def scrape(**extra: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``: (name, sorted labels) → value."""
    answer = Client().get("/metrics", **extra)
    assert answer.status_code == 200, answer.content
    assert answer["Content-Type"].startswith("text/plain; version=")
    found = {}
    for family in text_string_to_metric_families(answer.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_ingest_counters_move_by_exactly_what_was_sent(alice: User) -> None:
    body = (FIXTURES / "genai_openai_v2.pb").read_bytes()
    sent = ExportTraceServiceRequest.FromString(body)
    spans = [s for r in sent.resource_spans for sc in r.scope_spans for s in sc.spans]
    models = [s for s in spans if s.name.startswith("chat")]
    tokens_in = sum(
        a.value.int_value for s in models for a in s.attributes
        if a.key == "gen_ai.usage.input_tokens"
    )  # fmt: skip
    before = scrape()
    assert partial(post(body, new_key(alice), PROTOBUF)) == (0, "")
    assert post(body, None, PROTOBUF).status_code == 401
    after = scrape()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("agentdash_ingest_spans_total", transport="http") == len(spans)
    assert moved("agentdash_ingest_refusals_total", transport="http", status="401") == 1
    assert moved("agentdash_span_duration_seconds_count", kind="model", source="ingested") == len(
        models
    )
    assert moved("agentdash_tokens_total", direction="input", source="ingested") == tokens_in
    assert tokens_in > 0


def test_runs_are_counted_by_status_and_agent(alice: User) -> None:
    session = session_create(app_name="capital_agent", user_id="alice", owner=alice)
    for n, status in enumerate(["queued", "queued", "queued", "failed", "waiting"]):
        Run.objects.create(session=session, agent_name="capital_agent", invocation_id=f"e-{n}",
                           status=status, message={})  # fmt: skip
    samples = scrape()
    assert value(samples, "agentdash_runs", status="queued", agent="capital_agent") == 3
    assert value(samples, "agentdash_runs", status="failed", agent="capital_agent") == 1
    assert value(samples, "agentdash_run_queue_depth") == 3
    assert value(samples, "agentdash_runs_waiting_for_approval") == 1
    assert value(samples, "agentdash_database_up") == 1
    assert value(samples, "agentdash_remote_processes_connected") == 0


def test_only_loopback_or_the_token_reads_metrics(settings: Any) -> None:
    outside = Client(REMOTE_ADDR="203.0.113.9")
    refused = outside.get("/metrics")
    assert refused.status_code == 403 and "AGENTDASH_METRICS_TOKEN" in refused.content.decode()
    settings.AGENTDASH = {**getattr(settings, "AGENTDASH", {}), "METRICS_TOKEN": "s3cret"}
    assert outside.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200
    assert outside.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    settings.AGENTDASH = {**settings.AGENTDASH, "METRICS_ALLOW": "203.0.113.0/24"}
    assert outside.get("/metrics").status_code == 200
    assert Client().post("/metrics").status_code == 405


COUNT_IN_A_PROCESS = """
import sys
from agentdash.core.metrics import INGEST_SPANS  # the client alone: no Django to set up
INGEST_SPANS.labels("http").inc(int(sys.argv[1]))
"""
SCRAPE_IN_A_PROCESS = """
import os
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")
django.setup()
from django.test import Client
answer = Client(HTTP_HOST="localhost").get("/metrics")
assert answer.status_code == 200, (answer.status_code, answer.content[:500])
print(answer.content.decode())
"""


@pytest.mark.slow  # processes of their own
def test_several_processes_of_a_host_are_summed(tmp_path: Path) -> None:
    """``PROMETHEUS_MULTIPROC_DIR``: two processes count, a third serves the sum."""
    shared = tmp_path / "metrics"
    shared.mkdir()
    env = embedded_env(tmp_path)
    sqlite_prepared(env)  # the servers' template: made once per test run
    env["PROMETHEUS_MULTIPROC_DIR"] = str(shared)

    def python(script: str, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, *args], cwd=ROOT, env=env, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    python(COUNT_IN_A_PROCESS, "2")
    python(COUNT_IN_A_PROCESS, "3")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(python(SCRAPE_IN_A_PROCESS))
        for s in family.samples
    }
    assert samples[("agentdash_ingest_spans_total", (("transport", "http"),))] == 5
    assert samples[("agentdash_database_up", ())] == 1


def test_stored_spans_are_measured_once_with_known_labels_only() -> None:
    before = scrape()
    code = {"agentdash.span.kind": "tool", "agentdash.code.sandbox": "bubblewrap",
            "agentdash.code.stopped_by": "memory"}  # fmt: skip
    span_upsert(trace_id="a" * 32, span_id="b" * 16, name="execute_tool run_code",
                start_time=0, attributes=code)  # fmt: skip
    span_upsert(trace_id="a" * 32, span_id="b" * 16, name="execute_tool run_code",
                start_time=0, end_time=2_000_000_000, attributes=code)  # fmt: skip
    again = span_upsert(trace_id="a" * 32, span_id="b" * 16, name="execute_tool run_code",
                        start_time=0, end_time=3_000_000_000, attributes=code)  # fmt: skip
    assert not again.stored  # a retry of an ended span: not counted again
    odd = {"agentdash.span.kind": "evil\nkind", "agentdash.code.sandbox": "x",
           "agentdash.code.stopped_by": "made up"}  # fmt: skip
    span_upsert(trace_id="c" * 32, span_id="d" * 16, name="x", start_time=0, end_time=1,
                attributes=odd)  # fmt: skip
    after = scrape()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("agentdash_span_duration_seconds_count", kind="tool", source="local") == 1
    assert moved("agentdash_span_duration_seconds_sum", kind="tool", source="local") == (
        pytest.approx(2.0)  # a float sum: what came before adds its rounding
    )
    assert moved("agentdash_sandbox_runs_total", stopped_by="memory") == 1
    assert moved("agentdash_span_duration_seconds_count", kind="other", source="local") == 1
    assert moved("agentdash_sandbox_runs_total", stopped_by="other") == 1
    assert not any("evil" in str(key) for key in after)
